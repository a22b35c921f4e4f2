package redis

import (
	"errors"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/cellrate/cellrate/limit"
)

// offline is a client that is never dialled: for constructors only.
var offline = goredis.NewClient(&goredis.Options{Addr: "127.0.0.1:1"})

// TestNilClient: every constructor refuses a nil client, also a nil
// pointer of each go-redis client type, with a *limit.ParamError naming it.
func TestNilClient(t *testing.T) {
	for _, c := range []Client{nil, (*goredis.Client)(nil), (*goredis.ClusterClient)(nil), (*goredis.Ring)(nil)} {
		for name, mk := range map[string]func() error{
			"NewGCRA":    func() error { _, err := NewGCRA(c, "", 1, time.Second, 1); return err },
			"NewWindow":  func() error { _, err := NewWindow(c, "", 1, time.Second); return err },
			"NewTwoTier": func() error { _, err := NewTwoTier(c, "", 1, time.Second, 10); return err },
		} {
			var pe *limit.ParamError
			if err := mk(); !errors.As(err, &pe) || pe.Param != "client" || pe.Pkg != "redis" {
				t.Errorf("%s(%T nil): %v, want a ParamError for client", name, c, err)
			}
		}
	}
}

// TestZeroValues: a zero or nil Limiter or TwoTier denies every request
// with an error that is ErrClosed for errors.Is and says why (never
// admits, never panics), whatever n.
func TestZeroValues(t *testing.T) {
	var zl Limiter
	var zt TwoTier
	var nl *Limiter
	var nt *TwoTier
	for _, n := range []int64{-1, 0, 1, 1 << 40} {
		for name, f := range map[string]func() (result, error){
			"Limiter.AllowN":    func() (result, error) { return zl.AllowN(bg, "k", n) },
			"Limiter.AllowNAt":  func() (result, error) { return zl.allowNAt(bg, "k", 0, n) },
			"nil Limiter":       func() (result, error) { return nl.AllowN(bg, "k", n) },
			"TwoTier.AllowN":    func() (result, error) { return zt.AllowN(bg, "k", n) },
			"nil TwoTier":       func() (result, error) { return nt.AllowN(bg, "k", n) },
			"Limiter.Allow":     func() (result, error) { ok, err := zl.Allow(bg, "k"); return result{OK: ok}, err },
			"TwoTier.Allow":     func() (result, error) { ok, err := zt.Allow(bg, "k"); return result{OK: ok}, err },
			"nil TwoTier.Allow": func() (result, error) { ok, err := nt.Allow(bg, "k"); return result{OK: ok}, err },
		} {
			if r, err := f(); r.OK || !errors.Is(err, ErrClosed) || err == ErrClosed {
				t.Errorf("%s(%d): %+v %v, want a denial with the zero value's error", name, n, r, err)
			}
		}
	}
	for name, err := range map[string]error{
		"Reset":     zl.Reset(bg, "k"),
		"SetRate":   nl.SetRate(1, time.Second),
		"SetRateAt": zl.SetRateAt(0, 1),
	} {
		if !errors.Is(err, ErrClosed) || err.Error() != errZeroValue.Error() {
			t.Errorf("zero Limiter %s: %v", name, err)
		}
	}
	if errors.Is(errors.New("other"), errZeroValue) || errors.Is(errZeroValue, ErrUnavailable) {
		t.Error("the zero value's error matches what it is not")
	}
	if zt.redisBurst() != 0 || nt.redisBurst() != 0 || nt.Stats() != (Stats{}) || nl.keyOf("k") != "{k}" {
		t.Error("a zero TwoTier's accessors")
	}
}

// TestPrefixBraces: a prefix with a brace is refused by every
// constructor, naming the prefix and saying why; one without is accepted.
func TestPrefixBraces(t *testing.T) {
	for _, p := range []string{"app{rl}:", "a{", "}"} {
		for name, mk := range map[string]func() error{
			"NewGCRA":    func() error { _, err := NewGCRA(offline, p, 1, time.Second, 1); return err },
			"NewWindow":  func() error { _, err := NewWindow(offline, p, 1, time.Second); return err },
			"NewTwoTier": func() error { _, err := NewTwoTier(offline, p, 1, time.Second, 10); return err },
		} {
			var pe *limit.ParamError
			if err := mk(); !errors.As(err, &pe) || pe.Param != "prefix" || pe.Value != p ||
				!strings.Contains(pe.Reason, "hash tag") || !strings.Contains(err.Error(), "every key in one cluster slot") {
				t.Errorf("%s(prefix %q): %v, want a ParamError for prefix, with the reason", name, p, err)
			}
		}
	}
	if _, err := NewGCRA(offline, "app:rl:", 1, time.Second, 1); err != nil {
		t.Error(err)
	}
}
