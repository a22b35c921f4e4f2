//go:build !unix

package golimiter

import "testing"

func cpuNs() int64 { return 0 }

func reportCPU(*testing.B, int64) {}
