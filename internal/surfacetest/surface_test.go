package surfacetest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// surfaceMax is the most exported identifiers each package of the README's
// "which one do I use" table may have (the redis module's too, whose files
// are read from their directory), counted as go doc -all lists them:
// top-level names, methods of exported types, exported struct fields and
// interface methods. The aim is 30, a package read in one go doc page;
// the packages above it may only shrink.
var surfaceMax = map[string]int{
	"keyed":               30,
	"gcra":                30,
	"bucket":              30,
	"window":              30,
	"slidelog":            30,
	"packed64":            30,
	"striped":             30,
	"limit":               30,
	"pacer":               30,
	"debounce":            30,
	"coalesce":            30,
	"adaptive":            30,
	"httplimit":           30,
	"httplimit/clientkey": 30,
	"concurrency":         30,
	"redis":               30, // its own module, read here as files
}

// rateSurface is golang.org/x/time/rate's exported surface, which package
// rate, its drop-in, has exactly: no more, so a change of import is all.
var rateSurface = []string{
	"Every", "Inf", "InfDuration", "Limit", "Limiter", "Limiter.Allow", "Limiter.AllowN",
	"Limiter.Burst", "Limiter.Limit", "Limiter.Reserve", "Limiter.ReserveN", "Limiter.SetBurst",
	"Limiter.SetBurstAt", "Limiter.SetLimit", "Limiter.SetLimitAt", "Limiter.Tokens",
	"Limiter.TokensAt", "Limiter.Wait", "Limiter.WaitN", "NewLimiter", "Reservation",
	"Reservation.Cancel", "Reservation.CancelAt", "Reservation.Delay", "Reservation.DelayFrom",
	"Reservation.OK", "Sometimes", "Sometimes.Do", "Sometimes.Every", "Sometimes.First",
	"Sometimes.Interval",
}

// TestExportedSurface: each package a user picks stays within its count,
// and rate has exactly x/time/rate's names.
func TestExportedSurface(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "..", "go.mod")); err != nil {
		t.Skip("the module's source is not here (a test binary copied to a cross target's VM)")
	}
	for pkg, most := range surfaceMax {
		t.Run(pkg, func(t *testing.T) {
			names := exported(t, filepath.Join("..", "..", pkg))
			t.Logf("%d exported identifiers", len(names))
			if len(names) > most {
				t.Fatalf("%d exported identifiers, more than %d: %v", len(names), most, names)
			}
		})
	}
	t.Run("rate", func(t *testing.T) {
		if got := exported(t, filepath.Join("..", "..", "rate")); !slices.Equal(got, rateSurface) {
			t.Fatalf("rate exports %v, x/time/rate %v", got, rateSurface)
		}
	})
}

// TestSurfaceCount: the count sees each kind of exported identifier, and
// none that go doc leaves out.
func TestSurfaceCount(t *testing.T) {
	got := exported(t, filepath.Join("testdata", "surface"))
	want := []string{"C", "F", "I", "I.M", "S", "S.Field", "S.Method", "T", "T.M", "V"}
	if !slices.Equal(got, want) {
		t.Fatalf("counted %v, want %v", got, want)
	}
}

// exported returns the sorted exported identifiers of the package in dir,
// as go doc -all lists them: its non-test files' top-level names, the
// methods of its exported types, and their exported fields and interface
// methods ("Type.Name").
func exported(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			names = append(names, declNames(d)...)
		}
	}
	slices.Sort(names)
	return names
}

// declNames returns the exported identifiers one declaration adds.
func declNames(d ast.Decl) []string {
	var names []string
	switch d := d.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			break
		}
		if d.Recv == nil {
			names = append(names, d.Name.Name)
		} else if r := receiver(d.Recv); ast.IsExported(r) {
			names = append(names, r+"."+d.Name.Name)
		}
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					names = append(names, s.Name.Name)
					names = append(names, members(s.Name.Name, s.Type)...)
				}
			case *ast.ValueSpec:
				for _, n := range s.Names {
					if n.IsExported() {
						names = append(names, n.Name)
					}
				}
			}
		}
	}
	return names
}

// members returns a type's exported fields or interface methods.
func members(typ string, x ast.Expr) []string {
	var list *ast.FieldList
	switch x := x.(type) {
	case *ast.StructType:
		list = x.Fields
	case *ast.InterfaceType:
		list = x.Methods
	default:
		return nil
	}
	var names []string
	for _, f := range list.List {
		for _, n := range f.Names {
			if n.IsExported() {
				names = append(names, typ+"."+n.Name)
			}
		}
	}
	return names
}

// receiver returns the name of a method's receiver type.
func receiver(recv *ast.FieldList) string {
	x := recv.List[0].Type
	if s, ok := x.(*ast.StarExpr); ok {
		x = s.X
	}
	switch g := x.(type) {
	case *ast.IndexExpr:
		x = g.X
	case *ast.IndexListExpr:
		x = g.X
	}
	if id, ok := x.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}
