//go:build !race

package race

// Enabled is false: the race detector is not built in.
const Enabled = false
