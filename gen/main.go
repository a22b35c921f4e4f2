// Command gen writes asm/asm_amd64.s, the amd64 assembly of package
// github.com/cellrate/cellrate/asm, with avo.
//
// The Go declarations (signatures and doc comments) are hand-written in
// asm/asm_amd64.go; each routine here is built with Implement, which reads
// its signature from that package, so avo emits no stub file and the
// declarations cannot drift from the assembly (go vet's asmdecl checks the
// frame offsets as well).
//
// Run it through `make generate`; the generated file's header repeats the
// command, and gen's test checks the Makefile still runs that command.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	"github.com/mmcloughlin/avo/ir"
	. "github.com/mmcloughlin/avo/operand"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
	. "github.com/mmcloughlin/avo/reg"
)

// command is how the Makefile invokes this program from the module root; the
// header of the generated file records it followed by the flags given.
var command = []string{"go", "-C", "gen", "run", "."}

// constraint is the generated file's build constraint, in the "+build" syntax
// avo parses; it prints as "//go:build gc && !purego && amd64". asm/'s
// enabled_other.go carries the negation (for both architectures).
const constraint = "gc,!purego,amd64"

func main() {
	// avo's build package registers its own flags on flag.CommandLine.
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	out := fs.String("out", "", "assembly output file")
	fs.Parse(os.Args[1:])
	if *out == "" {
		fmt.Fprintln(os.Stderr, "gen: -out is required")
		os.Exit(2)
	}
	f, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	// avo reads the declarations with go/packages: run it in the main
	// module (gen's parent), as amd64 whatever the host is (they live in an
	// amd64-only file). gen itself never imports the main module, so it
	// builds even when the declarations and the assembly disagree.
	if err := os.Chdir(".."); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	os.Setenv("GOARCH", "amd64")
	os.Setenv("GOFLAGS", "")

	ctx := NewContext()
	build(ctx)

	argv := append(append([]string{}, command...), os.Args[1:]...)
	cfg := &Config{
		ErrOut:    os.Stderr,
		MaxErrors: 10,
		Passes: []pass.Interface{
			pass.Compile,
			&pass.Output{Writer: f, Printer: printer.NewGoAsm(printer.Config{Argv: argv, Pkg: "asm"})},
		},
	}
	if status := Main(cfg, ctx); status != 0 {
		os.Exit(status)
	}
}

// implement starts the body of a function declared in package asm. Every
// routine is a leaf with no frame, so it needs no stack-growth check.
func implement(ctx *Context, name string) {
	ctx.Implement(name)
	ctx.Attributes(attr.NOSPLIT)
}

// lockPrefix emits LOCK, which avo has no builder for: the Go assembler takes
// it as a separate instruction applying to the next one.
func lockPrefix(ctx *Context) {
	ctx.Instruction(&ir.Instruction{Opcode: "LOCK"})
}

// lockCmpxchg16b emits LOCK CMPXCHG16B (mem): compare RDX:RAX with the 16
// bytes at mem; if equal set ZF and write RCX:RBX, else clear ZF and load the
// 16 bytes into RDX:RAX. Low halves (p[0]) are in RAX and RBX.
func lockCmpxchg16b(ctx *Context, mem Mem) {
	lockPrefix(ctx)
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

func comment(ctx *Context, text string) {
	ctx.Comment(strings.Split(strings.TrimSpace(text), "\n")...)
}

func zero(ctx *Context, rs ...Register) {
	for _, r := range rs {
		ctx.XORQ(r, r)
	}
}

func build(ctx *Context) {
	ctx.Package("github.com/cellrate/cellrate/asm")
	ctx.ConstraintExpr(constraint)

	implement(ctx, "CasCX16")
	comment(ctx, `
atomically { if *p == (old1, old2) { *p = (new1, new2); return true }; return false }
Sequentially consistent: LOCK CMPXCHG16B is a full barrier.`)
	ptr := ctx.Load(ctx.Param("p"), RDI)
	ctx.Load(ctx.Param("old1"), RAX)
	ctx.Load(ctx.Param("old2"), RDX)
	ctx.Load(ctx.Param("new1"), RBX)
	ctx.Load(ctx.Param("new2"), RCX)
	lockCmpxchg16b(ctx, Mem{Base: ptr})
	ctx.SETEQ(addr(ctx.Return("swapped")))
	ctx.RET()

	implement(ctx, "LoadCX16")
	comment(ctx, `
atomically { v := *p; if v == (0, 0) { *p = (0, 0) }; return v }
Sequentially consistent: LOCK CMPXCHG16B is a full barrier. Writes the line.`)
	ptr = ctx.Load(ctx.Param("p"), RDI)
	zero(ctx, RAX, RDX, RBX, RCX)
	lockCmpxchg16b(ctx, Mem{Base: ptr})
	ctx.Store(RAX, ctx.Return("v1"))
	ctx.Store(RDX, ctx.Return("v2"))
	ctx.RET()

	implement(ctx, "LoadVMOVDQA")
	comment(ctx, `
atomically { return *p }
One 16-byte aligned VMOVDQA, atomic on Intel and AMD CPUs with AVX.
Sequentially consistent against locked stores: x86-TSO keeps loads in order.`)
	ptr = ctx.Load(ctx.Param("p"), RDI)
	ctx.VMOVDQA(Mem{Base: ptr}, X0)
	ctx.VMOVQ(X0, addr(ctx.Return("v1")))
	ctx.VPEXTRQ(U8(1), X0, addr(ctx.Return("v2")))
	ctx.RET()

	implement(ctx, "StoreCX16")
	comment(ctx, `
atomically { *p = (v1, v2) }
Sequentially consistent: the successful LOCK CMPXCHG16B is a full barrier.`)
	ctx.Load(ctx.Param("v1"), RBX)
	ctx.Load(ctx.Param("v2"), RCX)
	casLoop(ctx, "store")
	ctx.RET()

	implement(ctx, "SwapCX16")
	comment(ctx, `
atomically { old := *p; *p = (new1, new2); return old }
Sequentially consistent: the successful LOCK CMPXCHG16B is a full barrier.`)
	ctx.Load(ctx.Param("new1"), RBX)
	ctx.Load(ctx.Param("new2"), RCX)
	casLoop(ctx, "swap")
	ctx.Store(RAX, ctx.Return("old1"))
	ctx.Store(RDX, ctx.Return("old2"))
	ctx.RET()

	implement(ctx, "SpinHint")
	ctx.Comment("A spin-wait hint; no memory effect, no ordering.")
	ctx.PAUSE()
	ctx.RET()

	implement(ctx, "BareCMPXCHG16B")
	ctx.Comment("Benchmark floor: LoadCX16 without its results.")
	ptr = ctx.Load(ctx.Param("p"), RDI)
	zero(ctx, RAX, RDX, RBX, RCX)
	lockCmpxchg16b(ctx, Mem{Base: ptr})
	ctx.RET()

	implement(ctx, "BareVMOVDQA")
	ctx.Comment("Benchmark floor: LoadVMOVDQA without its results.")
	ptr = ctx.Load(ctx.Param("p"), RDI)
	ctx.VMOVDQA(Mem{Base: ptr}, X0)
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
