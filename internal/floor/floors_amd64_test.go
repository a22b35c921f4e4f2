//go:build gc && !purego && amd64

package floor

import "golang.org/x/sys/cpu"

var floors = []struct {
	name string
	ok   bool
	fn   func(*[2]uint64)
}{
	{"BareCMPXCHG16B", cpu.X86.HasCX16, BareCMPXCHG16B},
	{"BareVMOVDQA", cpu.X86.HasAVX, BareVMOVDQA},
}
