package surfacetest

import (
	"bytes"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/printer"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// userPackages are the directories of the packages a user reads with go
// doc: the README's "which one" table, the packages they lead to, and the
// redis module's.
var userPackages = []string{
	"gcra", "bucket", "window", "slidelog", "packed64", "step", "striped", "keyed", "httplimit",
	"httplimit/clientkey",
	"rate", "pacer", "debounce", "coalesce", "adaptive", "concurrency", "limit", "nanotime",
	"atomic128", "asm", "redis",
}

// docOf returns what go doc -all shows of the package in dir: its doc,
// and each exported declaration with its doc, as the package's non-test
// files write them.
func docOf(t *testing.T, dir string) (*doc.Package, *token.FileSet) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/cellrate/cellrate/"+dir)
	if err != nil {
		t.Fatal(err)
	}
	return p, fset
}

// docText is the package's doc and every exported declaration and its
// doc, one after another.
func docText(p *doc.Package, fset *token.FileSet) string {
	var b bytes.Buffer
	b.WriteString(p.Doc)
	decl := func(d ast.Node, text string) {
		printer.Fprint(&b, fset, d)
		b.WriteString("\n" + text + "\n")
	}
	values := func(vs []*doc.Value) {
		for _, v := range vs {
			decl(v.Decl, v.Doc)
		}
	}
	funcs := func(fs []*doc.Func) {
		for _, f := range fs {
			decl(f.Decl, f.Doc)
		}
	}
	values(p.Consts)
	values(p.Vars)
	funcs(p.Funcs)
	for _, typ := range p.Types {
		decl(typ.Decl, typ.Doc)
		values(typ.Consts)
		values(typ.Vars)
		funcs(typ.Funcs)
		funcs(typ.Methods)
	}
	return b.String()
}

// TestDocsNameNoInternals: what go doc shows a user names no internal
// package or its identifiers, no test file and no seed document: each
// would send a reader to code they cannot import or to a file they do not
// have.
func TestDocsNameNoInternals(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "go.mod")); err != nil {
		t.Skip("the module's source is not here (a test binary copied to a cross target's VM)")
	}
	dirs, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	var internal []string
	for _, d := range dirs {
		if d.IsDir() {
			internal = append(internal, regexp.QuoteMeta(d.Name()))
		}
	}
	bad := regexp.MustCompile(`\b(` + strings.Join(internal, "|") + `)\.[A-Za-z]\w*|internal/|\w+_test\.go|(?i)\bseeds? \d{3}|seed's`)
	for _, dir := range userPackages {
		p, fset := docOf(t, filepath.Join("..", "..", dir))
		for _, line := range strings.Split(docText(p, fset), "\n") {
			if !strings.ContainsAny(line, "._'") && !strings.Contains(line, "eed") {
				continue // nothing the pattern can match: the regexp is slow under -race
			}
			if m := bad.FindString(line); m != "" {
				t.Errorf("%s: go doc shows %q:\n\t%s", dir, m, strings.TrimSpace(line))
			}
		}
	}
}

// durationName matches the names of parameters, results, methods and
// fields that hold a span of time.
var durationName = regexp.MustCompile(`(?i)^(slack|wait|delay|period|window|interval|timeout|lease|grace|retry|retryafter|idleafter|maxwait|d|dur|duration|ttl|span|age|elapsed|latency)$`)

// notSpans are the names durationName matches that count something else.
var notSpans = map[string]bool{
	"pacer: Pacer.Slack": true, // slots that may come early, a count (WithSlack)
}

// TestDurationsAreDurations: every span of time a user passes or reads is
// a time.Duration; times (now) stay int64 ns. A parameter, an exported
// field or a one-result method named as a span (period, slack, wait, ...)
// must not be an integer.
func TestDurationsAreDurations(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "go.mod")); err != nil {
		t.Skip("the module's source is not here (a test binary copied to a cross target's VM)")
	}
	isInt := func(x ast.Expr) bool {
		id, ok := x.(*ast.Ident)
		return ok && regexp.MustCompile(`^u?int(64|32)?$`).MatchString(id.Name)
	}
	for _, dir := range userPackages {
		p, _ := docOf(t, filepath.Join("..", "..", dir))
		check := func(where string, fields *ast.FieldList) {
			if fields == nil {
				return
			}
			for _, f := range fields.List {
				for _, n := range f.Names {
					if n.IsExported() || where != "" {
						if durationName.MatchString(n.Name) && isInt(f.Type) {
							t.Errorf("%s: %s%s is %s, not a time.Duration", dir, where, n.Name, f.Type)
						}
					}
				}
			}
		}
		fn := func(f *doc.Func) {
			name := f.Name
			if f.Recv != "" {
				name = strings.TrimPrefix(f.Recv, "*") + "." + name
			}
			ft := f.Decl.Type
			check(name+" parameter ", ft.Params)
			check(name+" result ", ft.Results)
			if r := ft.Results; r != nil && len(r.List) == 1 && len(r.List[0].Names) == 0 &&
				durationName.MatchString(f.Name) && isInt(r.List[0].Type) && !notSpans[dir+": "+name] {
				t.Errorf("%s: %s returns %s, not a time.Duration", dir, name, r.List[0].Type)
			}
		}
		for _, f := range p.Funcs {
			fn(f)
		}
		for _, typ := range p.Types {
			for _, f := range typ.Funcs {
				fn(f)
			}
			for _, f := range typ.Methods {
				fn(f)
			}
			for _, s := range typ.Decl.Specs {
				if ts, ok := s.(*ast.TypeSpec); ok {
					if st, ok := ts.Type.(*ast.StructType); ok {
						check("", st.Fields)
					}
				}
			}
		}
	}
}

// TestDocsPointToAnExample: the first paragraph of each package's doc,
// what go doc prints first and pkg.go.dev shows as its synopsis, names an
// Example a reader can run, and every Example it names exists ("the
// Example" is the package's own, func Example). asm, a statement of what
// routines do rather than a package to call, has none.
func TestDocsPointToAnExample(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "go.mod")); err != nil {
		t.Skip("the module's source is not here (a test binary copied to a cross target's VM)")
	}
	named := regexp.MustCompile(`\bExample\w*`)
	for _, dir := range userPackages {
		if dir == "asm" {
			continue
		}
		p, _ := docOf(t, filepath.Join("..", "..", dir))
		first, _, _ := strings.Cut(p.Doc, "\n\n")
		names := named.FindAllString(first, -1)
		if len(names) == 0 {
			t.Errorf("%s: the doc's first paragraph names no Example:\n%s", dir, first)
		}
		src := testSources(t, filepath.Join("..", "..", dir))
		for _, n := range names {
			if !strings.Contains(src, "\nfunc "+n+"() {") {
				t.Errorf("%s: the doc's first paragraph names %s, which is not an Example of the package", dir, n)
			}
		}
	}
}

// TestDocsShowNoUnexportedValues: an exported variable's declaration, as go
// doc prints it, builds no value of an unexported type (var ErrX =
// errType{}): a reader cannot look that type up, nor tell what the value
// wraps.
func TestDocsShowNoUnexportedValues(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "go.mod")); err != nil {
		t.Skip("the module's source is not here (a test binary copied to a cross target's VM)")
	}
	for _, dir := range userPackages {
		p, fset := docOf(t, filepath.Join("..", "..", dir))
		vars := p.Vars
		for _, typ := range p.Types {
			vars = append(vars, typ.Vars...)
		}
		for _, v := range vars {
			ast.Inspect(v.Decl, func(n ast.Node) bool {
				if c, ok := n.(*ast.CompositeLit); ok {
					if id, ok := c.Type.(*ast.Ident); ok && !id.IsExported() {
						var b bytes.Buffer
						printer.Fprint(&b, fset, v.Decl)
						t.Errorf("%s: go doc shows a value of the unexported type %s: %s", dir, id.Name, b.String())
					}
				}
				return true
			})
		}
	}
}
