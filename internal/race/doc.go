// Package race reports whether the race detector is built in (-race).
//
// Code reads Enabled to take a path the detector can follow (striped's
// counter adds atomically under -race). Tests read it to size themselves: a
// test that runs only pure, single-goroutine code, such as a step function
// against a math/big model, cannot find a race, and -race only slows it
// (50 to 100 times in an emulated arm64 VM). Under -race such a test may run
// fewer random schedules, never fewer than it needs to cover every branch it
// is for. A test that runs goroutines is what -race is for: it never reads
// Enabled.
package race
