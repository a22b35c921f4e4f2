package httplimit

import (
	"errors"
	"math/bits"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/cellrate/cellrate/httplimit/clientkey"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
)

// limitSpec is one configured limit with its header values.
type limitSpec struct {
	name   string
	prefix string // `"name";r=`
	quota  int64
	window int64
	events int64         // tokens refilled per period: both limiters
	period time.Duration // refill them exactly, to the ns
	// admit[r] is an admitted response's RateLimit value with r left, and
	// deny[t] a denial's with 0 left and t seconds to wait (deny[0]
	// unused), retry[t] its Retry-After; each a one-element slice cut
	// from one array, for the values a request meets most.
	admit, deny, retry []string
}

// cached is how many values of r and of t a limit keeps formatted.
const cached = 256

// spec returns the header values of l, a valid limit, named name.
func spec(l Limit, name string) limitSpec {
	s := limitSpec{name: name, quota: l.burst, events: l.events, period: l.period}
	s.window = max(1, s.fullIn(l.burst))
	s.prefix = sfString(name) + ";r="
	for r := range min(s.quota, cached-1) + 1 {
		s.admit = append(s.admit, s.value(r, s.fullIn(s.quota-r)))
	}
	s.deny, s.retry = make([]string, cached), make([]string, cached)
	for t := int64(1); t < cached; t++ {
		s.deny[t] = s.value(0, t)
		s.retry[t] = strconv.FormatInt(t, 10)
	}
	return s
}

func (s *limitSpec) value(r, t int64) string {
	return s.prefix + strconv.FormatInt(r, 10) + ";t=" + strconv.FormatInt(t, 10)
}

// policyItem is the limit's RateLimit-Policy item.
func (s *limitSpec) policyItem() string {
	return sfString(s.name) + ";q=" + strconv.FormatInt(s.quota, 10) + ";w=" + strconv.FormatInt(s.window, 10)
}

// fullIn returns the whole seconds n missing tokens take to refill,
// ceil(n*period/events/1s), computed exactly in 128 bits, saturated at
// 2^62.
func (s *limitSpec) fullIn(n int64) int64 {
	if n <= 0 {
		return 0
	}
	ev := uint64(s.events)
	hi, lo := bits.Mul64(uint64(n), uint64(s.period))
	qh := hi / ev
	ql, rem := bits.Div64(hi%ev, lo, ev) // n*period/events = qh:ql ns, and rem/events
	if qh >= 1e9 {
		return 1 << 62
	}
	sec, sr := bits.Div64(qh, ql, 1e9)
	if sec >= 1<<62 {
		return 1 << 62
	}
	return int64(sec + min(sr+rem, 1)) // ceil(ceil(x)/1e9) is ceil(x/1e9)
}

// retrySeconds rounds a wait up to whole seconds, at least 1.
func retrySeconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if d%time.Second > 0 {
		s++
	}
	return max(1, s)
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// sfString is s as a structured-field String (RFC 8941 §3.3.3).
func sfString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// Canonical header keys, set without canonicalizing again.
const (
	hdrPolicy     = "Ratelimit-Policy"
	hdrRateLimit  = "Ratelimit"
	hdrRetryAfter = "Retry-After"
	hdrXLimit     = "X-Ratelimit-Limit"
	hdrXRemaining = "X-Ratelimit-Remaining"
	hdrXReset     = "X-Ratelimit-Reset"
)

// fields writes a policy's header fields. Values that are fixed or met
// often are formatted once, at New, and their one-element slices shared
// by every response (a handler that changes a field replaces its slice,
// as Header.Set does; the slices are full, so an Add copies them).
type fields struct {
	policy []string
}

func newFields(p *policy) fields {
	var items []string
	if p.table != nil {
		items = append(items, p.client.policyItem())
	}
	if p.global != nil {
		items = append(items, p.gl.policyItem())
	}
	return fields{policy: []string{strings.Join(items, ", ")}}
}

func (f *fields) admitted(h http.Header, s *limitSpec, d *Decision, legacy bool) {
	h[hdrPolicy] = f.policy
	if d.remaining < int64(len(s.admit)) {
		h[hdrRateLimit] = s.admit[d.remaining : d.remaining+1 : d.remaining+1]
	} else {
		h[hdrRateLimit] = fresh(s, d, false)
	}
	if legacy {
		setLegacy(h, s, d)
	}
}

func (f *fields) denied(h http.Header, s *limitSpec, d *Decision, legacy bool) {
	h[hdrPolicy] = f.policy
	if t := d.reset; d.remaining == 0 && t < cached {
		h[hdrRateLimit] = s.deny[t : t+1 : t+1]
		h[hdrRetryAfter] = s.retry[t : t+1 : t+1]
	} else {
		vs := fresh(s, d, true)
		h[hdrRateLimit], h[hdrRetryAfter] = vs[0:1:1], vs[1:2:2]
	}
	if legacy {
		setLegacy(h, s, d)
	}
}

// retryOne is a busy answer's Retry-After: a slot in flight frees when a
// request ends, which no limit here can tell in advance.
var retryOne = []string{"1"}

// busy sets the fields of a denial by a cap on requests in flight.
func (f *fields) busy(h http.Header) { h[hdrRetryAfter] = retryOne }

// fresh formats `"name";r=R;t=T` and, for a denial, its T (Retry-After)
// as two strings in one allocation with their slice: the bytes are
// written once, here, and never again, so they may back strings.
func fresh(s *limitSpec, d *Decision, retry bool) []string {
	f := new(struct {
		vs  [2]string
		buf [48]byte
	})
	b := append(f.buf[:0], s.prefix...)
	b = strconv.AppendInt(b, d.remaining, 10)
	b = append(b, ";t="...)
	t := len(b)
	b = strconv.AppendInt(b, d.reset, 10)
	v := unsafe.String(unsafe.SliceData(b), len(b))
	f.vs[0], f.vs[1] = v, v[t:]
	if retry {
		return f.vs[:]
	}
	return f.vs[0:1:1]
}

func setLegacy(h http.Header, s *limitSpec, d *Decision) {
	h[hdrXLimit] = []string{strconv.FormatInt(s.quota, 10)}
	h[hdrXRemaining] = []string{strconv.FormatInt(d.remaining, 10)}
	h[hdrXReset] = []string{strconv.FormatInt(time.Now().Unix()+d.reset, 10)}
}

// The default denial's fields and body; the value slices are shared and
// never written.
var (
	textPlain   = []string{"text/plain; charset=utf-8"}
	nosniff     = []string{"nosniff"}
	tooManyBody = []byte("Too Many Requests\n")
	busyBody    = []byte("Service Unavailable: too many requests in flight\n")
)

// denyTooMany writes what http.Error(w, "Too Many Requests", 429) writes
// (503 Service Unavailable for a denial by a cap in flight), without
// canonicalizing the keys or allocating.
func denyTooMany(w http.ResponseWriter, _ *http.Request, d Decision) {
	h := w.Header()
	delete(h, "Content-Length")
	h["Content-Type"] = textPlain
	h["X-Content-Type-Options"] = nosniff
	if d.Limit == "" { // a cap in flight
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write(busyBody)
		return
	}
	w.WriteHeader(http.StatusTooManyRequests)
	w.Write(tooManyBody)
}

func defaultError(w http.ResponseWriter, _ *http.Request, err error) bool {
	switch {
	case errors.Is(err, clientkey.ErrProxyHeader):
		http.Error(w, "Bad Request: client address: "+proxyReason(err), http.StatusBadRequest)
	case errors.Is(err, clientkey.ErrNoKey):
		http.Error(w, "Bad Request: no client key", http.StatusBadRequest)
	case err == errPath:
		http.Error(w, "Bad Request: a path with empty, . or .. segments", http.StatusBadRequest)
	case errors.Is(err, limit.ErrCostExceedsBurst):
		http.Error(w, "Content Too Large: request cost exceeds the limit", http.StatusRequestEntityTooLarge)
	case errors.Is(err, keyed.ErrFull):
		http.Error(w, "Service Unavailable: too many clients", http.StatusServiceUnavailable)
	default:
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
	}
	return false
}

// proxyReason says what is wrong with the proxy header of err, as
// clientkey's error says it.
func proxyReason(err error) string {
	var re interface{ Reason() string }
	if errors.As(err, &re) {
		return re.Reason()
	}
	return "unreadable proxy header"
}
