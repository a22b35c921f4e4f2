//go:build !unix

package ulule

import "testing"

func cpuNs() int64 { return 0 }

func reportCPU(*testing.B, int64) {}
