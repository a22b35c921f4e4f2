package surfacetest

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cellrate/cellrate/adaptive"
	"github.com/cellrate/cellrate/atomic128"
	"github.com/cellrate/cellrate/bucket"
	"github.com/cellrate/cellrate/coalesce"
	"github.com/cellrate/cellrate/concurrency"
	"github.com/cellrate/cellrate/debounce"
	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/httplimit"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/pacer"
	"github.com/cellrate/cellrate/packed64"
	"github.com/cellrate/cellrate/rate"
	"github.com/cellrate/cellrate/slidelog"
	"github.com/cellrate/cellrate/step"
	"github.com/cellrate/cellrate/striped"
	"github.com/cellrate/cellrate/window"
)

// failSafe are the zero values that must admit nothing: each makes a
// fresh one, and every exported method is called on it.
var failSafe = map[string]func() any{
	"gcra.Limiter":        func() any { return new(gcra.Limiter) },
	"gcra.Reservation":    func() any { return new(gcra.Reservation) },
	"bucket.Limiter":      func() any { return new(bucket.Limiter) },
	"bucket.Reservation":  func() any { return new(bucket.Reservation) },
	"window.Limiter":      func() any { return new(window.Limiter) },
	"slidelog.Limiter":    func() any { return new(slidelog.Limiter) },
	"packed64.Bucket":     func() any { return new(packed64.Bucket) },
	"packed64.Window":     func() any { return new(packed64.Window) },
	"striped.Limiter":     func() any { return new(striped.Limiter) },
	"keyed.Table":         func() any { return new(keyed.Table) },
	"rate.Limiter":        func() any { return new(rate.Limiter) },
	"rate.Reservation":    func() any { return new(rate.Reservation) },
	"pacer.Pacer":         func() any { return new(pacer.Pacer) },
	"pacer.Reservation":   func() any { return new(pacer.Reservation) },
	"debounce.Debouncer":  func() any { return new(debounce.Debouncer) },
	"coalesce.Group":      func() any { return new(coalesce.Group[string, int]) },
	"adaptive.Throttle":   func() any { return new(adaptive.Throttle) },
	"adaptive.AIMD":       func() any { return new(adaptive.AIMD) },
	"concurrency.Limiter": func() any { return new(concurrency.Limiter) },
	"concurrency.Token":   func() any { return new(concurrency.Token) },
	"httplimit.Limiter":   func() any { return new(httplimit.Limiter) },
	"limit.All":           func() any { return new(limit.All) },
	"window.Params":       func() any { return new(window.Params) },
	"slidelog.Params":     func() any { return new(slidelog.Params) },
	"step.GCRA":           func() any { return new(step.GCRA) },
	"step.Bucket":         func() any { return new(step.Bucket) },
	"step.PackedBucket":   func() any { return new(step.PackedBucket) },
	"step.PackedWindow":   func() any { return new(step.PackedWindow) },
}

// ready are the zero values documented as ready to use: their methods
// must not panic. (packed64.Buckets and Windows are neither: their zero
// value has no buckets, and every index panics as in an empty slice.)
var ready = map[string]func() any{
	"striped.Counter":      func() any { return new(striped.Counter) },
	"nanotime.Coarse":      func() any { return new(nanotime.Coarse) },
	"atomic128.Uint64Pair": func() any { return new(atomic128.Uint64Pair) },
	"step.HighWater":       func() any { return new(step.HighWater) },
	"rate.Sometimes":       func() any { return new(rate.Sometimes) },
}

// safeHigh are the results for which a higher value is the safe one.
var safeHigh = map[string]bool{"adaptive.Throttle.RejectProbability": true}

// TestZeroValuesFailSafe calls every exported method of each zero value in
// failSafe, on a fresh value each, with every integer argument 1: none may
// panic, return true, an OK Result or Reservation, a positive count, or
// (for a method that waits or runs work: Wait, Acquire, Do) a nil error,
// and none may call a function it is given or the handler it wraps. The
// zero values in ready must not panic.
func TestZeroValuesFailSafe(t *testing.T) {
	for name, mk := range failSafe {
		for _, m := range methods(mk()) {
			called := false
			out, panicked := call(mk(), m, &called)
			what := name + "." + m
			if panicked != nil {
				t.Errorf("%s panicked: %v", what, panicked)
				continue
			}
			if called {
				t.Errorf("%s ran the function or handler it was given", what)
			}
			for _, o := range out {
				if why := admits(what, m, o); why != "" {
					t.Errorf("%s: %s", what, why)
				}
			}
		}
	}
	for name, mk := range ready {
		for _, m := range methods(mk()) {
			var called bool
			if _, panicked := call(mk(), m, &called); panicked != nil {
				t.Errorf("%s.%s panicked: %v", name, m, panicked)
			}
		}
	}
}

// methods returns the names of p's exported methods.
func methods(p any) []string {
	typ := reflect.TypeOf(p)
	var names []string
	for i := range typ.NumMethod() {
		names = append(names, typ.Method(i).Name)
	}
	return names
}

// call calls p's method with arguments made by arg, and returns its
// results or what it panicked with.
func call(p any, method string, called *bool) (out []reflect.Value, panicked any) {
	m := reflect.ValueOf(p).MethodByName(method)
	mt := m.Type()
	args := make([]reflect.Value, mt.NumIn())
	for i := range args {
		args[i] = arg(mt.In(i), called)
	}
	defer func() { panicked = recover() }()
	if mt.IsVariadic() {
		args[len(args)-1] = reflect.Zero(mt.In(len(args) - 1))
		return m.CallSlice(args), nil
	}
	return m.Call(args), nil
}

var (
	contextType  = reflect.TypeFor[context.Context]()
	handlerType  = reflect.TypeFor[http.Handler]()
	durationType = reflect.TypeFor[time.Duration]()
	resultType   = reflect.TypeFor[limit.Result]()
)

// arg returns an argument of type typ: 1 for a number, a context that
// ends in 20ms, a function or handler that records being called.
func arg(typ reflect.Type, called *bool) reflect.Value {
	switch typ {
	case contextType:
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		time.AfterFunc(time.Second, cancel)
		return reflect.ValueOf(ctx)
	case handlerType:
		return reflect.ValueOf(http.Handler(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { *called = true })))
	case reflect.TypeFor[time.Time]():
		return reflect.ValueOf(time.Now())
	case reflect.TypeFor[netip.Addr]():
		return reflect.ValueOf(netip.MustParseAddr("192.0.2.1"))
	}
	v := reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	case reflect.String:
		v.SetString("k")
	case reflect.Slice:
		if typ.Elem().Kind() == reflect.Uint8 {
			v.SetBytes([]byte("k"))
		}
	case reflect.Func:
		v = reflect.MakeFunc(typ, func([]reflect.Value) []reflect.Value {
			*called = true
			out := make([]reflect.Value, typ.NumOut())
			for i := range out {
				out[i] = reflect.Zero(typ.Out(i))
			}
			return out
		})
	}
	return v
}

// admits says how a result o of method m (what, in full) admits, or "".
func admits(what, m string, o reflect.Value) string {
	switch {
	case o.Type() == handlerType:
		rec := httptest.NewRecorder()
		o.Interface().(http.Handler).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		if rec.Code < 400 {
			return fmt.Sprintf("the handler it returns answered %d", rec.Code)
		}
	case o.Type() == durationType:
		// a wait: any length is safe
	case o.Kind() == reflect.Bool:
		if o.Bool() {
			return "returned true"
		}
	case o.Type() == resultType:
		if r := o.Interface().(limit.Result); r.OK || r.Remaining > 0 {
			return fmt.Sprintf("returned %+v", r)
		}
	case o.Kind() == reflect.Int || o.Kind() == reflect.Int64:
		if o.Int() > 0 {
			return fmt.Sprintf("returned %d", o.Int())
		}
	case o.Kind() == reflect.Float64:
		if o.Float() > 0 && !safeHigh[what] || o.Float() != o.Float() {
			return fmt.Sprintf("returned %v", o.Float())
		}
	case o.Kind() == reflect.Struct:
		ok, wait := o.FieldByName("OK"), o.FieldByName("Wait")
		if ok.IsValid() && ok.Bool() {
			return fmt.Sprintf("returned %+v", o.Interface())
		}
		// Not OK, so the wait must be limit.Never: a caller that sleeps
		// Wait without reading OK never acts.
		if ok.IsValid() && wait.IsValid() && wait.Interface() != limit.Never {
			return fmt.Sprintf("returned a Reservation not OK with Wait %v", wait.Interface())
		}
	case o.Kind() == reflect.Pointer && !o.IsNil():
		if ok := o.MethodByName("OK"); ok.IsValid() && ok.Call(nil)[0].Bool() {
			return "returned an OK " + o.Type().String()
		}
	case o.Type() == reflect.TypeFor[error]():
		if o.IsNil() && (strings.HasPrefix(m, "Wait") || strings.HasPrefix(m, "Acquire") || m == "Do") {
			return "returned a nil error"
		}
	}
	return ""
}
