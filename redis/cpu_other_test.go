//go:build !unix

package redis

import "time"

// processCPU is not measured here: the CPU figures count the server only.
func processCPU() time.Duration { return 0 }
