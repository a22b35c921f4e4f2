package main

import . "github.com/mmcloughlin/avo/build"

// The one place each assembly routine's meaning is written: its Go
// signature, the pseudo-code of its single atomic effect, its memory
// ordering, and what else its doc says. gen writes from it:
//
//   - the Go declarations of every package with assembly (a generated
//     <file>_<arch>.go beside each .s), with that text as their doc;
//   - the amd64 .s files whole, with avo (the bodies are in amd64.go);
//   - in the hand-written arm64 .s files, only the comment at the head of
//     each routine (its signature, pseudo-code and ordering), so the text
//     there cannot drift from the declarations either.
//
// Nothing else restates a routine's pseudo-code or ordering: package asm's
// reference functions say which operation they model, the package docs
// state the ordering contract the routines share.

// An op is what a routine computes, the same on every architecture.
type op struct {
	sig    string // the Go signature after the name
	pseudo string // one line: its effect, atomically
}

var (
	opCas = op{
		"(p *[2]uint64, old1, old2, new1, new2 uint64) (swapped bool)",
		"atomically { if *p == (old1, old2) { *p = (new1, new2); return true }; return false }",
	}
	opLoad = op{
		"(p *[2]uint64) (v1, v2 uint64)",
		"atomically { return *p }",
	}
	// opLoadByCas is a load by a compare-and-swap of (0, 0) with (0, 0):
	// the same result, and a write of the value read.
	opLoadByCas = op{
		"(p *[2]uint64) (v1, v2 uint64)",
		"atomically { v := *p; if v == (0, 0) { *p = (0, 0) }; return v }",
	}
	opStore = op{
		"(p *[2]uint64, v1, v2 uint64)",
		"atomically { *p = (v1, v2) }",
	}
	opSwap = op{
		"(p *[2]uint64, new1, new2 uint64) (old1, old2 uint64)",
		"atomically { old := *p; *p = (new1, new2); return old }",
	}
)

// A routine is one assembly function.
type routine struct {
	name  string
	op    op
	doc   string             // the doc's first sentence, after the name
	notes string             // further paragraphs of the doc, blank-line separated; may be empty
	order string             // its memory ordering
	body  func(ctx *Context) // amd64 only: the instructions, with avo
}

// A pkg is one package's assembly for one architecture: a .s file and the
// generated Go file that declares its routines.
type pkg struct {
	dir      string // relative to the main module's root
	name     string
	arch     string // amd64 (generated with avo) or arm64 (hand-written)
	base     string // file names: base.go and base.s
	header   string // the Go file's comment after the package clause
	routines []routine
}

// importPath is the package's import path.
func (p pkg) importPath() string { return module + "/" + p.dir }

// constraint is the build constraint of both files.
func (p pkg) constraint() string { return "gc && !purego && " + p.arch }

const module = "github.com/cellrate/cellrate"

// Ordering, as each routine states it.
const (
	orderLockCX16   = "sequentially consistent: LOCK CMPXCHG16B is a full barrier."
	orderLockCX16OK = "sequentially consistent: the successful LOCK CMPXCHG16B is a full barrier."
	orderCASPAL     = "sequentially consistent: CASPAL (acquire and release, RCsc)."
	orderCASPALOK   = "sequentially consistent: the successful CASPAL."
	orderDispatch   = "that of the routine it runs, sequentially consistent on every path."
)

var packages = []pkg{
	{
		dir: "internal/asm128", name: "asm128", arch: "amd64", base: "asm128_amd64",
		header: `
Every routine requires CX16 (CMPXCHG16B); LoadVMOVDQA also requires AVX and
a vendor (Intel, AMD) that documents 16-byte aligned VMOVDQA loads as atomic.
p must be 16-byte aligned.

The locked routines are sequentially consistent on their own. LoadVMOVDQA is
a plain load: it is sequentially consistent against them for the reason a
MOVQ is for sync/atomic.Load64 (x86-TSO never reorders a load with older
loads or with later stores, and every store to the pair is locked).`,
		routines: []routine{
			{name: "CasCX16", op: opCas, doc: "is a 128-bit compare-and-swap by one LOCK CMPXCHG16B.",
				order: orderLockCX16, body: casCX16},
			{name: "LoadCX16", op: opLoadByCas, doc: "is a 128-bit load by LOCK CMPXCHG16B of (0, 0) with (0, 0).",
				notes: "The instruction always writes the line (the value written is the value read), so concurrent loads contend like stores do.",
				order: orderLockCX16, body: loadCX16},
			{name: "LoadVMOVDQA", op: opLoad, doc: "is a 128-bit load by one VMOVDQA.",
				notes: "The load is atomic on Intel and AMD CPUs with AVX, which document it so for a 16-byte aligned operand.",
				order: "sequentially consistent against the locked writers: x86-TSO keeps loads in order, and every store to the pair is locked.",
				body:  loadVMOVDQA},
			{name: "StoreCX16", op: opStore, doc: "is a 128-bit store by a LOCK CMPXCHG16B loop.",
				notes: "The first compare uses a plain (possibly torn) read as its guess; each failed CMPXCHG16B returns the current value, which the next try expects.",
				order: orderLockCX16OK, body: storeCX16},
			{name: "SwapCX16", op: opSwap, doc: "is a 128-bit swap by a LOCK CMPXCHG16B loop, as StoreCX16.",
				order: orderLockCX16OK, body: swapCX16},
		},
	},
	{
		dir: "internal/asm128", name: "asm128", arch: "arm64", base: "asm128_arm64",
		header: `
The bodies are written by hand (avo emits amd64 only); gen writes their
comments. The *CASP routines require LSE atomics (ARMv8.1, HWCAP "atomics");
the *LLSC routines run on every ARMv8 CPU. p must be 16-byte aligned.

Every routine is sequentially consistent. The CASP routines use CASPAL,
which Go's assembler cannot spell (its CASPD is the plain CASP, with no
ordering), so it is encoded with WORD: acquire on the read and release on
the write, the same ordering the runtime's CASALD gives sync/atomic's 64-bit
CAS, and sequentially consistent against LDAR/STLR because ARMv8's acquire
and release are RCsc. The LLSC routines pair LDAXP (acquire) with STLXP
(release), as the runtime's ARMv8.0 atomics pair LDAXR and STLXR.

A 128-bit LDXP/LDAXP alone is not single-copy atomic on ARMv8.0: a load is
confirmed by a successful store-exclusive of the value it read.`,
		routines: []routine{
			{name: "CasCASP", op: opCas, doc: "is a 128-bit compare-and-swap by one CASPAL.", order: orderCASPAL},
			{name: "LoadCASP", op: opLoadByCas, doc: "is a 128-bit load by CASPAL of (0, 0) with (0, 0).", order: orderCASPAL},
			{name: "StoreCASP", op: opStore, doc: "is a 128-bit store by a CASPAL loop.",
				notes: "The first compare uses a plain (possibly torn) LDP as its guess; each failed CASPAL returns the current value, which the next try expects.",
				order: orderCASPALOK},
			{name: "SwapCASP", op: opSwap, doc: "is a 128-bit swap by a CASPAL loop, as StoreCASP.", order: orderCASPALOK},
			{name: "CasLLSC", op: opCas, doc: "is a 128-bit compare-and-swap by an LDAXP/STLXP loop.",
				notes: "A mismatch returns false without a store: even a torn LDAXP that differs from (old1, old2) combines halves of values the pair held during the call, one of which differs, so the failure is linearizable.",
				order: "sequentially consistent: LDAXP acquire, STLXP release; a mismatch is ordered by the LDAXP's acquire alone, as the runtime's ARMv8.0 Cas64."},
			{name: "LoadLLSC", op: opLoad, doc: "is a 128-bit load by LDAXP confirmed by STLXP of the same value.",
				order: "sequentially consistent: LDAXP acquire, confirmed by STLXP (release) of the same value; a failed store-exclusive means the read may be torn, and it retries."},
			{name: "StoreLLSC", op: opStore, doc: "is a 128-bit store by an LDAXP/STLXP loop.",
				order: "sequentially consistent: LDAXP acquire (it claims the exclusive monitor), STLXP release."},
			{name: "SwapLLSC", op: opSwap, doc: "is a 128-bit swap by an LDAXP/STLXP loop.",
				order: "sequentially consistent: LDAXP acquire, STLXP release; the successful store-exclusive confirms the value read."},
		},
	},
	{
		dir: "internal/floor", name: "floor", arch: "amd64", base: "floor_amd64",
		header: `
Each floor is a load routine of package internal/asm128 without its
results; they require what that routine requires.`,
		routines: []routine{
			{name: "BareCMPXCHG16B", op: opBare(opLoadByCas), doc: "executes one LOCK CMPXCHG16B of (0, 0) with (0, 0) on p: asm128.LoadCX16 without its results.",
				order: orderLockCX16, body: bareCMPXCHG16B},
			{name: "BareVMOVDQA", op: opBare(opLoad), doc: "executes one VMOVDQA load from p: asm128.LoadVMOVDQA without its results.",
				order: "that of asm128.LoadVMOVDQA.", body: bareVMOVDQA},
		},
	},
	{
		dir: "internal/floor", name: "floor", arch: "arm64", base: "floor_arm64",
		header: `
The bodies are written by hand (avo emits amd64 only); gen writes their
comments. Each floor is one attempt of a load routine of package
internal/asm128 without its results; they require what that routine
requires.`,
		routines: []routine{
			{name: "BareCASPAL", op: opBare(opLoadByCas), doc: "executes one CASPAL of (0, 0) with (0, 0) on p: asm128.LoadCASP without its results.",
				order: orderCASPAL},
			{name: "BareLDAXPSTLXP", op: op{"(p *[2]uint64)", "v := *p; *p = v  (one LDAXP/STLXP attempt, not retried: atomic only if the STLXP succeeded)"},
				doc:   "executes one LDAXP and one STLXP of the value read, without retrying: asm128.LoadLLSC's first attempt without its results.",
				order: "LDAXP acquire, STLXP release."},
		},
	},
	dispatch("amd64", []routine{
		{name: "load", op: opLoad, doc: "runs asm128.LoadVMOVDQA on the cx16-vmovdqa path, asm128.LoadCX16 on cx16, and fallbackLoad otherwise.",
			order: orderDispatch, body: dispatchLoad},
		{name: "store", op: opStore, doc: "runs asm128.StoreCX16 on the cx16 paths and fallbackStore otherwise.",
			order: orderDispatch, body: dispatchTo("store", "StoreCX16", "fallbackStore")},
		{name: "swap", op: opSwap, doc: "runs asm128.SwapCX16 on the cx16 paths and fallbackSwap otherwise.",
			order: orderDispatch, body: dispatchTo("swap", "SwapCX16", "fallbackSwap")},
		{name: "cas", op: opCas, doc: "runs asm128.CasCX16 on the cx16 paths and fallbackCas otherwise.",
			order: orderDispatch, body: dispatchTo("cas", "CasCX16", "fallbackCas")},
	}),
	dispatch("arm64", []routine{
		{name: "load", op: opLoad, doc: "runs asm128.LoadCASP on the casp path, asm128.LoadLLSC on llsc, and fallbackLoad otherwise.", order: orderDispatch},
		{name: "store", op: opStore, doc: "runs asm128.StoreCASP on the casp path, asm128.StoreLLSC on llsc, and fallbackStore otherwise.", order: orderDispatch},
		{name: "swap", op: opSwap, doc: "runs asm128.SwapCASP on the casp path, asm128.SwapLLSC on llsc, and fallbackSwap otherwise.", order: orderDispatch},
		{name: "cas", op: opCas, doc: "runs asm128.CasCASP on the casp path, asm128.CasLLSC on llsc, and fallbackCas otherwise.", order: orderDispatch},
	}),
}

// opBare is op run for its effect only: no results.
func opBare(o op) op {
	o.sig = "(p *[2]uint64)"
	o.pseudo += "  (results discarded)"
	return o
}

// dispatch is atomic128's dispatch for arch: one routine per operation that
// compares path128.Active with the paths of the architecture and jumps to
// the routine of package internal/asm128 that runs the operation there, or
// to the Go fallback. A jump, not a call: the routine the caller reaches returns to it
// directly, and a method of atomic128 that calls one of these makes a single
// call, so it stays within the inliner's budget.
func dispatch(arch string, rs []routine) pkg {
	return pkg{
		dir: "atomic128", name: "atomic128", arch: arch, base: "dispatch_" + arch,
		header: `
The dispatch routines: each compares path128.Active with the paths of this
architecture (go_asm.h gives the assembly the path constants of
dispatch_asm.go) and jumps to the routine of package internal/asm128 that
runs the operation there, or to the fallback in Go. A jump, not a call: that
routine returns to the caller, whose one call of a dispatch routine leaves
the methods of Uint64Pair small enough to inline. p is the 16-byte aligned
pair.`,
		routines: rs,
	}
}
