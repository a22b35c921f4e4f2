package surfacetest

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cellrate/cellrate/adaptive"
	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/coalesce"
	"github.com/cellrate/cellrate/concurrency"
	"github.com/cellrate/cellrate/debounce"
	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/httplimit"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/pacer"
	"github.com/cellrate/cellrate/packed64"
	"github.com/cellrate/cellrate/slidelog"
	"github.com/cellrate/cellrate/striped"
	"github.com/cellrate/cellrate/window"
)

// TestNilOption: every constructor refuses a nil Option, second after a
// valid one, with a *limit.ParamError naming "option" and its index, and
// returns no value.
func TestNilOption(t *testing.T) {
	fn := func(string) (int, error) { return 0, nil }
	for name, make := range map[string]func() (any, error){
		"gcra":     func() (any, error) { return gcra.New(1, time.Second, 1, gcra.WithClock(time.Now().UnixNano), nil) },
		"bucket":   func() (any, error) { return bucket.New(1, time.Second, 1, bucket.WithClock(time.Now().UnixNano), nil) },
		"window":   func() (any, error) { return window.New(1, time.Second, window.WithClock(time.Now().UnixNano), nil) },
		"slidelog": func() (any, error) { return slidelog.New(1, time.Second, slidelog.WithClock(time.Now().UnixNano), nil) },
		"packed64": func() (any, error) {
			return packed64.NewBuckets(1, 1, time.Second, 1, packed64.WithClock(time.Now().UnixNano), nil)
		},
		"striped":  func() (any, error) { return striped.New(1, time.Second, 1, striped.WithBatch(1), nil) },
		"pacer":    func() (any, error) { return pacer.New(1, time.Second, pacer.WithSlack(1), nil) },
		"adaptive": func() (any, error) { return adaptive.New(2, time.Second, adaptive.WithBuckets(2), nil) },
		"debounce": func() (any, error) { return debounce.New(time.Second, func() {}, debounce.WithMaxWait(0), nil) },
		"coalesce": func() (any, error) { return coalesce.New(fn, coalesce.WithDelay(0), nil) },
		"concurrency": func() (any, error) {
			return concurrency.New(concurrency.WithClock(time.Now().UnixNano), nil)
		},
		"keyed":           func() (any, error) { return keyed.New(1, time.Second, 1, keyed.WithCapacity(4), nil) },
		"keyed.NewWindow": func() (any, error) { return keyed.NewWindow(1, time.Second, keyed.WithCapacity(4), nil) },
		"httplimit": func() (any, error) {
			return httplimit.New([]httplimit.Policy{{Name: "p", Client: httplimit.Rate(1, time.Second, 1)}},
				httplimit.WithClock(time.Now().UnixNano), nil)
		},
	} {
		pkg, _, _ := strings.Cut(name, ".")
		v, err := make()
		var pe *limit.ParamError
		if !errors.As(err, &pe) || pe.Pkg != pkg || pe.Param != "option" || pe.Value != 1 {
			t.Errorf("%s: a nil Option gave %v", name, err)
		}
		if !isNilPointer(v) {
			t.Errorf("%s: a nil Option returned %v", name, v)
		}
	}
}

// isNilPointer reports whether v holds a nil pointer of any type.
func isNilPointer(v any) bool {
	r := reflect.ValueOf(v)
	return r.Kind() == reflect.Pointer && r.IsNil()
}

// TestNilTableOption: a nil keyed.Option among an httplimit Client
// limit's table options is refused by New, naming the policy's limit and
// the option's index, as keyed.New refuses it.
func TestNilTableOption(t *testing.T) {
	lim, err := httplimit.New([]httplimit.Policy{{
		Name:   "p",
		Client: httplimit.Rate(1, time.Second, 1, keyed.WithCapacity(4), nil),
	}})
	var pe *limit.ParamError
	if lim != nil || !errors.As(err, &pe) || !strings.HasPrefix(pe.Param, "policies[0].") || pe.Value != 1 {
		t.Fatalf("a nil Table option: %v, %v", lim, err)
	}
}
