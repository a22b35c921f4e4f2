package redis

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// tierOptions are the options only NewTwoTier takes.
var tierOptions = map[string]Option{
	"WithBatch":    WithBatch(1),
	"WithLease":    WithLease(time.Millisecond),
	"WithFailOpen": WithFailOpen(0.5),
	"WithRetry":    WithRetry(time.Second),
}

// TestOptionsBelongToConstructors: NewGCRA and NewWindow refuse each of
// NewTwoTier's own options, second after one they take, with a
// *limit.ParamError naming "option" and its index, and return no limiter;
// NewTwoTier takes them all.
func TestOptionsBelongToConstructors(t *testing.T) {
	for name, o := range tierOptions {
		for ctor, mk := range map[string]func() (*Limiter, error){
			"NewGCRA":   func() (*Limiter, error) { return NewGCRA(offline, "o:", 1, time.Second, 1, WithGrace(0), o) },
			"NewWindow": func() (*Limiter, error) { return NewWindow(offline, "o:", 1, time.Second, WithTimeout(0), o) },
		} {
			l, err := mk()
			var pe *paramErr
			if l != nil || !errors.As(err, &pe) || pe.Pkg != "redis" || pe.Param != "option" || pe.Value != 1 ||
				pe.Reason != "a TwoTier's option, for NewTwoTier" {
				t.Errorf("%s(%s): %v, %v; want a ParamError for option 1", ctor, name, l, err)
			}
		}
	}
	opts := []Option{WithGrace(0), WithTimeout(0)}
	for _, o := range tierOptions {
		opts = append(opts, o)
	}
	if _, err := NewTwoTier(offline, "o:", 1, time.Second, 10, opts...); err != nil {
		t.Errorf("NewTwoTier with every option: %v", err)
	}
}

// TestNilOption: every constructor refuses a nil Option, second after a
// valid one, with a *limit.ParamError naming "option" and its index.
func TestNilOption(t *testing.T) {
	for ctor, mk := range map[string]func() (any, error){
		"NewGCRA":    func() (any, error) { return NewGCRA(offline, "o:", 1, time.Second, 1, WithGrace(0), nil) },
		"NewWindow":  func() (any, error) { return NewWindow(offline, "o:", 1, time.Second, WithGrace(0), nil) },
		"NewTwoTier": func() (any, error) { return NewTwoTier(offline, "o:", 1, time.Second, 10, WithBatch(1), nil) },
	} {
		v, err := mk()
		var pe *paramErr
		if !errors.As(err, &pe) || pe.Param != "option" || pe.Value != 1 || pe.Reason != "a nil Option" {
			t.Errorf("%s: a nil Option gave %v", ctor, err)
		}
		if l, ok := v.(*Limiter); ok && l != nil {
			t.Errorf("%s: a nil Option returned a limiter", ctor)
		}
		if tt, ok := v.(*TwoTier); ok && tt != nil {
			t.Errorf("%s: a nil Option returned a limiter", ctor)
		}
	}
}

// TestTwoTierTakesLimiterOptions: the options a Limiter takes reach the
// Redis limiter a TwoTier borrows from, none ignored.
func TestTwoTierTakesLimiterOptions(t *testing.T) {
	tt, err := NewTwoTier(offline, "o:", 1, time.Second, 10, WithGrace(time.Minute), WithTimeout(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if tt.r.cfg.grace != time.Minute || tt.r.cfg.timeout != time.Second {
		t.Errorf("grace %v, timeout %v; want 1m0s, 1s", tt.r.cfg.grace, tt.r.cfg.timeout)
	}
}

// TestParamNamesAreParameters: the ParamError for a bad argument names the
// argument as the signature does (what go doc shows the caller).
func TestParamNamesAreParameters(t *testing.T) {
	params := signatures(t)
	g, err := NewGCRA(offline, "o:", 1, time.Second, 1)
	if err != nil {
		t.Fatal(err)
	}
	w, err := NewWindow(offline, "o:", 1, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	tt, err := NewTwoTier(offline, "o:", 1, time.Second, 10)
	if err != nil {
		t.Fatal(err)
	}
	check := func(fn, want string, err error) {
		t.Helper()
		var pe *paramErr
		if !errors.As(err, &pe) || pe.Param != want {
			t.Errorf("%s: %v, want a ParamError for %s", fn, err, want)
		} else if !slices.Contains(params[fn], want) {
			t.Errorf("%s: the error names %q, the parameters are %v", fn, want, params[fn])
		}
	}
	for _, tc := range []struct {
		fn, param string
		err       func() error
	}{
		{"NewGCRA", "client", func() error { _, err := NewGCRA(nil, "", 1, time.Second, 1); return err }},
		{"NewGCRA", "prefix", func() error { _, err := NewGCRA(offline, "{", 1, time.Second, 1); return err }},
		{"NewGCRA", "events", func() error { _, err := NewGCRA(offline, "", 0, time.Second, 1); return err }},
		{"NewGCRA", "period", func() error { _, err := NewGCRA(offline, "", 1, 0, 1); return err }},
		{"NewGCRA", "burst", func() error { _, err := NewGCRA(offline, "", 1, time.Second, 0); return err }},
		{"NewWindow", "client", func() error { _, err := NewWindow(nil, "", 1, time.Second); return err }},
		{"NewWindow", "prefix", func() error { _, err := NewWindow(offline, "}", 1, time.Second); return err }},
		{"NewWindow", "limit", func() error { _, err := NewWindow(offline, "", 0, time.Second); return err }},
		{"NewWindow", "window", func() error { _, err := NewWindow(offline, "", 1, 0); return err }},
		{"NewTwoTier", "client", func() error { _, err := NewTwoTier(nil, "", 1, time.Second, 10); return err }},
		{"NewTwoTier", "prefix", func() error { _, err := NewTwoTier(offline, "{", 1, time.Second, 10); return err }},
		{"NewTwoTier", "events", func() error { _, err := NewTwoTier(offline, "", 0, time.Second, 10); return err }},
		{"NewTwoTier", "period", func() error { _, err := NewTwoTier(offline, "", 1, 0, 10); return err }},
		{"NewTwoTier", "burst", func() error { _, err := NewTwoTier(offline, "", 1, time.Second, 0); return err }},
		{"Limiter.SetRate", "events", func() error { return w.SetRate(0, time.Second) }},
		{"Limiter.SetRate", "period", func() error { return w.SetRate(1, 0) }},
		{"Limiter.SetRate", "period", func() error { return g.SetRate(1, 0) }},
		{"Limiter.SetRateAt", "perSecond", func() error { return g.SetRateAt(0, math.NaN()) }},
		{"Limiter.SetRateAt", "perSecond", func() error { return w.SetRateAt(0, math.NaN()) }},
		{"TwoTier.SetRate", "events", func() error { return tt.SetRate(0, time.Second) }},
		{"TwoTier.SetRate", "period", func() error { return tt.SetRate(1, 0) }},
		{"TwoTier.SetRateAt", "perSecond", func() error { return tt.SetRateAt(0, math.NaN()) }},
	} {
		check(tc.fn, tc.param, tc.err())
	}
}

// signatures returns the parameter names of the package's functions and
// methods ("Type.Method"), read from its source.
func signatures(t *testing.T) map[string][]string {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			key := fd.Name.Name
			if fd.Recv != nil {
				typ := fd.Recv.List[0].Type
				if s, ok := typ.(*ast.StarExpr); ok {
					typ = s.X
				}
				key = typ.(*ast.Ident).Name + "." + key
			}
			for _, field := range fd.Type.Params.List {
				for _, n := range field.Names {
					out[key] = append(out[key], n.Name)
				}
			}
		}
	}
	return out
}
