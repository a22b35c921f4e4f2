// Command gen writes the assembly of the cellrate module and its Go
// declarations from one table (spec.go), for each package that has
// assembly: internal/asm128 (the raw instructions), internal/floor (the benchmark
// floors) and atomic128 (the dispatch to a path's routines).
//
// For each package and architecture it writes the Go file that declares the
// routines, with the doc each routine's entry in the table gives (signature,
// pseudo-code, ordering), then the .s: the amd64 one whole, with avo (its
// Implement reads each signature back from the declarations just written,
// and go vet's asmdecl checks the frame offsets), and in the hand-written
// arm64 one the comment at the head of each routine.
//
// Each of those packages carries a //go:generate line that runs gen for
// itself, so `go generate ./...` in the main module (make generate) rewrites
// them all; the generated headers name that command, and gen's test checks
// the directives, the Makefile and the headers agree.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/mmcloughlin/avo/attr"
	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	"github.com/mmcloughlin/avo/ir"
	"github.com/mmcloughlin/avo/pass"
	"github.com/mmcloughlin/avo/printer"
)

func main() {
	// avo's build package registers its own flags on flag.CommandLine.
	fs := flag.NewFlagSet("gen", flag.ExitOnError)
	dir := fs.String("pkg", "", "the package directory to generate, relative to the module root (default all)")
	fs.Parse(os.Args[1:])
	// gen runs in its own module (go -C gen run ., or go generate from a
	// package: go -C ../gen run .); the main module is its parent. gen never
	// imports the main module, so it builds even when the declarations and
	// the assembly disagree.
	if err := os.Chdir(".."); err != nil {
		fail(err)
	}
	n := 0
	for _, p := range packages {
		if *dir != "" && p.dir != *dir {
			continue
		}
		n++
		if err := generate(p); err != nil {
			fail(fmt.Errorf("%s/%s: %v", p.dir, p.base, err))
		}
	}
	if n == 0 {
		fail(fmt.Errorf("no package %q in the table", *dir))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "gen:", err)
	os.Exit(1)
}

// command is the command the generated headers name for package dir: the
// //go:generate line in that package runs gen for it.
func command(dir string) string { return "go generate ./" + dir }

// generate writes p's declarations, then its assembly or, for a
// hand-written .s, the comments of its routines.
func generate(p pkg) error {
	decl, err := declarations(p)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(p.dir, p.base+".go"), decl, 0o644); err != nil {
		return err
	}
	sfile := filepath.Join(p.dir, p.base+".s")
	if p.arch != "amd64" {
		src, err := os.ReadFile(sfile)
		if err != nil {
			return err
		}
		out, err := rewriteComments(p, src)
		if err != nil {
			return err
		}
		return os.WriteFile(sfile, out, 0o644)
	}
	return assemble(p, sfile)
}

// assemble writes p's amd64 .s with avo.
func assemble(p pkg, file string) error {
	// avo reads the declarations with go/packages, as amd64 whatever the
	// host is (they live in an amd64-only file).
	os.Setenv("GOARCH", "amd64")
	os.Setenv("GOFLAGS", "")
	ctx := NewContext()
	ctx.Package(p.importPath())
	ctx.ConstraintExpr(strings.NewReplacer(" && ", ",").Replace(p.constraint()))
	for _, r := range p.routines {
		ctx.Implement(r.name)
		// Every routine is a leaf with no frame, so it needs no
		// stack-growth check.
		ctx.Attributes(attr.NOSPLIT)
		ctx.Comment(innerComment(r)...)
		r.body(ctx)
	}
	var out bytes.Buffer
	cfg := &Config{
		ErrOut:    os.Stderr,
		MaxErrors: 10,
		Passes: []pass.Interface{
			pass.Compile,
			includeGoAsm{},
			&pass.Output{Writer: nopCloser{&out}, Printer: printer.NewGoAsm(printer.Config{
				Argv: strings.Fields(command(p.dir)), Pkg: p.name})},
		},
	}
	if status := Main(cfg, ctx); status != 0 {
		return fmt.Errorf("avo failed")
	}
	return os.WriteFile(file, out.Bytes(), 0o644)
}

type nopCloser struct{ *bytes.Buffer }

func (nopCloser) Close() error { return nil }

// includeGoAsm adds go_asm.h, the header the go command writes with the
// package's constants, to a file whose instructions name one (const_...).
type includeGoAsm struct{}

func (includeGoAsm) Execute(f *ir.File) error {
	for _, fn := range f.Functions() {
		for _, i := range fn.Instructions() {
			for _, op := range i.Operands {
				if strings.Contains(op.Asm(), "$const_") {
					f.Includes = append(f.Includes, "go_asm.h")
					return nil
				}
			}
		}
	}
	return nil
}

// stub is the routine's Go declaration line as avo writes it above each
// TEXT: "func name(p *[2]uint64, v1 uint64, v2 uint64)".
func stub(r routine) string {
	sig, err := gotypes.ParseSignature("func" + r.op.sig)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", r.name, err))
	}
	return "func " + r.name + sig.String()
}

// innerComment is the comment at the start of each routine's body: its
// pseudo-code and its ordering.
func innerComment(r routine) []string {
	return append([]string{r.op.pseudo}, wrap("Ordering: "+r.order, 72)...)
}

// wrap breaks text into lines of at most width bytes at spaces.
func wrap(text string, width int) []string {
	var lines []string
	line := ""
	for _, w := range strings.Fields(text) {
		if line != "" && len(line)+1+len(w) > width {
			lines = append(lines, line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += w
	}
	return append(lines, line)
}

// declarations is p's Go file: the routines' declarations with their docs.
func declarations(p pkg) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by command: %s. DO NOT EDIT.\n\n", command(p.dir))
	fmt.Fprintf(&b, "//go:build %s\n\npackage %s\n\n", p.constraint(), p.name)
	for _, l := range strings.Split(strings.TrimSpace(p.header), "\n") {
		b.WriteString(strings.TrimRight("// "+l, " ") + "\n")
	}
	for _, r := range p.routines {
		b.WriteString("\n")
		para := func(text string) {
			for _, l := range wrap(text, 74) {
				b.WriteString("// " + l + "\n")
			}
		}
		para(r.name + " " + r.doc)
		b.WriteString("//\n//\t" + r.op.pseudo + "\n//\n")
		for _, n := range strings.Split(r.notes, "\n\n") {
			if n != "" {
				para(n)
				b.WriteString("//\n")
			}
		}
		para("Ordering: " + r.order)
		b.WriteString("//\n//go:noescape\n")
		b.WriteString("func " + r.name + r.op.sig + "\n")
	}
	return format.Source(b.Bytes())
}

var textLine = regexp.MustCompile(`^TEXT\s+·(\w+)\(SB\)`)

// rewriteComments replaces, in a hand-written .s, the comment lines right
// above each routine's TEXT with its declaration line and the comment lines
// right after it with its pseudo-code and ordering, in the layout avo gives
// the amd64 files. Every routine of p must be there, and nothing else.
func rewriteComments(p pkg, src []byte) ([]byte, error) {
	byName := map[string]routine{}
	for _, r := range p.routines {
		byName[r.name] = r
	}
	lines := strings.Split(string(src), "\n")
	var out, seen []string
	for i := 0; i < len(lines); i++ {
		m := textLine.FindStringSubmatch(lines[i])
		if m == nil {
			out = append(out, lines[i])
			continue
		}
		r, ok := byName[m[1]]
		if !ok {
			return nil, fmt.Errorf("TEXT ·%s: no such routine in gen's table", m[1])
		}
		seen = append(seen, r.name)
		for len(out) > 0 && strings.HasPrefix(out[len(out)-1], "//") {
			out = out[:len(out)-1]
		}
		out = append(out, "// "+stub(r), lines[i])
		for _, c := range innerComment(r) {
			out = append(out, "\t// "+c)
		}
		for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t//") {
			i++
		}
	}
	for _, r := range p.routines {
		if !slices.Contains(seen, r.name) {
			return nil, fmt.Errorf("routine %s has no TEXT", r.name)
		}
	}
	return []byte(strings.Join(out, "\n")), nil
}
