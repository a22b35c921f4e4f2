//go:build !linux

package limittest

func threadCPU() int64  { return 0 }
func processCPU() int64 { return 0 }

const haveCPUTime = false
