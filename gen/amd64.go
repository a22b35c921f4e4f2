package main

import (
	"strings"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	. "github.com/mmcloughlin/avo/reg"
)

// The amd64 bodies. Each routine is a leaf with no frame (NOSPLIT, set by
// the caller), reading its arguments from and writing its results to the
// Go frame, as its generated declaration says.

// lockCmpxchg16b emits LOCK CMPXCHG16B (mem): compare RDX:RAX with the 16
// bytes at mem; if equal set ZF and write RCX:RBX, else clear ZF and load the
// 16 bytes into RDX:RAX. Low halves (p[0]) are in RAX and RBX. avo has no
// builder for LOCK: the Go assembler takes it as a separate instruction
// applying to the next one.
func lockCmpxchg16b(ctx *Context, mem Mem) {
	ctx.Instruction(&ir.Instruction{Opcode: "LOCK"})
	ctx.CMPXCHG16B(mem)
}

// addr is the frame slot of a parameter or result, for instructions that
// avo's Load and Store do not cover (SETEQ, XMM to memory).
func addr(c gotypes.Component) Mem {
	b, err := c.Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

func zero(ctx *Context, rs ...Register) {
	for _, r := range rs {
		ctx.XORQ(r, r)
	}
}

func casCX16(ctx *Context) {
	ptr := ctx.Load(ctx.Param("p"), RDI)
	ctx.Load(ctx.Param("old1"), RAX)
	ctx.Load(ctx.Param("old2"), RDX)
	ctx.Load(ctx.Param("new1"), RBX)
	ctx.Load(ctx.Param("new2"), RCX)
	lockCmpxchg16b(ctx, Mem{Base: ptr})
	ctx.SETEQ(addr(ctx.Return("swapped")))
	ctx.RET()
}

func loadCX16(ctx *Context) {
	ptr := ctx.Load(ctx.Param("p"), RDI)
	zero(ctx, RAX, RDX, RBX, RCX)
	lockCmpxchg16b(ctx, Mem{Base: ptr})
	ctx.Store(RAX, ctx.Return("v1"))
	ctx.Store(RDX, ctx.Return("v2"))
	ctx.RET()
}

func loadVMOVDQA(ctx *Context) {
	ptr := ctx.Load(ctx.Param("p"), RDI)
	ctx.VMOVDQA(Mem{Base: ptr}, X0)
	ctx.VMOVQ(X0, addr(ctx.Return("v1")))
	ctx.VPEXTRQ(U8(1), X0, addr(ctx.Return("v2")))
	ctx.RET()
}

func storeCX16(ctx *Context) {
	ctx.Load(ctx.Param("v1"), RBX)
	ctx.Load(ctx.Param("v2"), RCX)
	casLoop(ctx, "store")
	ctx.RET()
}

func swapCX16(ctx *Context) {
	ctx.Load(ctx.Param("new1"), RBX)
	ctx.Load(ctx.Param("new2"), RCX)
	casLoop(ctx, "swap")
	ctx.Store(RAX, ctx.Return("old1"))
	ctx.Store(RDX, ctx.Return("old2"))
	ctx.RET()
}

// casLoop emits a LOCK CMPXCHG16B loop that writes RCX:RBX to the pair at
// p whatever it holds, leaving the value it replaced in RDX:RAX.
func casLoop(ctx *Context, name string) {
	ptr := Mem{Base: ctx.Load(ctx.Param("p"), RDI)}
	ctx.Comment("Guess the current value with plain loads; a wrong guess costs one retry,")
	ctx.Comment("after which RDX:RAX holds the value CMPXCHG16B found.")
	ctx.MOVQ(ptr, RAX)
	ctx.MOVQ(ptr.Offset(8), RDX)
	ctx.Label(name + "_retry")
	lockCmpxchg16b(ctx, ptr)
	ctx.JNE(LabelRef(name + "_retry"))
}

func bareCMPXCHG16B(ctx *Context) {
	ptr := ctx.Load(ctx.Param("p"), RDI)
	zero(ctx, RAX, RDX, RBX, RCX)
	lockCmpxchg16b(ctx, Mem{Base: ptr})
	ctx.RET()
}

func bareVMOVDQA(ctx *Context) {
	ptr := ctx.Load(ctx.Param("p"), RDI)
	ctx.VMOVDQA(Mem{Base: ptr}, X0)
	ctx.RET()
}

// text is an operand avo prints as written: a symbol of another package or
// a constant from go_asm.h, which its operand types cannot express. A
// LabelRef is the operand avo prints verbatim and reads no register from;
// it is never the target of a branch avo resolves (jump's JMP is marked
// terminal, not a branch).
type text = LabelRef

// symbol is the assembler's spelling of pkg.name(SB) for a package of this
// module: the assembler reads ∕ as / and · as . (also inside the path).
func symbol(pkg, name string) text {
	path := strings.ReplaceAll(strings.ReplaceAll(module+"/"+pkg, ".", "·"), "/", "∕")
	return text(path + "·" + name + "(SB)")
}

// cmpPath emits CMPB path128.Active, $const_<name>: name is a constant of
// atomic128 (dispatch_asm.go), which go_asm.h defines.
func cmpPath(ctx *Context, name string) {
	ctx.Instruction(&ir.Instruction{Opcode: "CMPB", Operands: []Op{symbol("internal/path128", "Active"), text("$const_" + name)}})
}

// jump emits a tail jump to a function: it ends the routine, and the target
// returns to the routine's caller with the same frame.
func jump(ctx *Context, target text) {
	ctx.Instruction(&ir.Instruction{Opcode: "JMP", Operands: []Op{target}, IsTerminal: true})
}

func dispatchLoad(ctx *Context) {
	cmpPath(ctx, "pathCX16VMOVDQA")
	ctx.JNE(LabelRef("load_cx16"))
	jump(ctx, symbol("internal/asm128", "LoadVMOVDQA"))
	ctx.Label("load_cx16")
	cmpPath(ctx, "pathCX16")
	ctx.JNE(LabelRef("load_fallback"))
	jump(ctx, symbol("internal/asm128", "LoadCX16"))
	ctx.Label("load_fallback")
	jump(ctx, "·fallbackLoad(SB)")
}

// dispatchTo is the dispatch of an operation that both cx16 paths run by
// the same routine.
func dispatchTo(name, routine, fallback string) func(ctx *Context) {
	return func(ctx *Context) {
		cmpPath(ctx, "pathFallback")
		ctx.JEQ(LabelRef(name + "_fallback"))
		jump(ctx, symbol("internal/asm128", routine))
		ctx.Label(name + "_fallback")
		jump(ctx, text("·"+fallback+"(SB)"))
	}
}
