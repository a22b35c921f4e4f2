package httplimit

import (
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
	"github.com/cellrate/cellrate/striped"
)

// Limit is a token bucket: Events tokens refilled per Period, holding up
// to Burst. The zero Limit is no limit.
type Limit struct {
	// Name names the limit in the RateLimit fields: printable ASCII.
	// Empty, it is the Policy's Name for the per-client limit and the
	// Policy's Name with "-global" for the global one.
	Name   string
	Events int64
	Period time.Duration
	Burst  int64
}

func (l Limit) set() bool { return l.Events != 0 || l.Period != 0 || l.Burst != 0 }

// Policy is a class of requests and the limits they are held to.
type Policy struct {
	// Name names the policy in Stats and in Decisions (printable ASCII,
	// not empty).
	Name string
	// Methods are the request methods the policy applies to; none means
	// every method.
	Methods []string
	// PathPrefix is the URL path the policy applies to: "" or "/" is
	// every path; a prefix ending in "/" is that subtree; any other is
	// that path and the subtree below it ("/api" matches "/api" and
	// "/api/x", not "/apix").
	PathPrefix string
	// Cost is the units a request takes (0 means 1); CostFunc, if set,
	// returns it per request instead.
	Cost     int64
	CostFunc func(*http.Request) int64
	// Client is the limit of each client (keyed by the KeyFunc's Key),
	// in a table of Capacity clients (0 means keyed.DefaultCapacity):
	// Events per Period at least 256ns a token, Burst at most 32767.
	Client   Limit
	Capacity int
	// Global is the limit of all clients of the policy together.
	Global Limit
}

// Decision is what the middleware decided for one request.
type Decision struct {
	// Policy is the name of the policy that matched.
	Policy string
	// Key is the client's key.
	Key Key
	// Cost is the units the request asked for.
	Cost int64
	// OK reports whether the request was admitted.
	OK bool
	// Limit is the name of the limit reported in the RateLimit field:
	// the one that denied, or, when admitted, the one with the fewest
	// units left.
	Limit string
	// Quota and Window are that limit's q and w: its burst, and the whole
	// seconds (rounded up, at least 1) it takes to refill the burst.
	Quota  int64
	Window int64
	// Remaining is the units the request left in that limit.
	Remaining int64
	// RetryAfter is the wait before the request could be admitted, when
	// denied (a lower bound: see limit.All); 0 when admitted.
	RetryAfter time.Duration
	// Reset is the RateLimit field's t, in whole seconds: on a denial the
	// Retry-After value; when admitted, the most the limit takes to be
	// full again.
	Reset int64
}

// Option configures a Limiter.
type Option func(*config)

type config struct {
	key       KeyFunc
	clock     nanotime.Clock
	v6bits    int
	deny      func(http.ResponseWriter, *http.Request, Decision)
	onErr     func(http.ResponseWriter, *http.Request, error)
	onDeny    func(*http.Request, Decision)
	failOpen  bool
	admitHdrs bool
	legacy    bool
}

// WithKeyFunc sets how clients are named (default PeerAddr; see ProxyKey
// for servers behind proxies).
func WithKeyFunc(f KeyFunc) Option { return func(c *config) { c.key = f } }

// WithClock sets the clock the limits read (default nanotime.Now); a nil
// clock is a *limit.ParamError from New.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// WithIPv6Prefix sets how many leading bits of an IPv6 address name a
// client, in [1, 128] (default 64).
func WithIPv6Prefix(bits int) Option { return func(c *config) { c.v6bits = bits } }

// WithDenyHandler sets what writes a denied request's response. The
// rate-limit header fields and Retry-After are set before it is called.
// The default writes 429 Too Many Requests with a short text body.
func WithDenyHandler(f func(w http.ResponseWriter, r *http.Request, d Decision)) Option {
	return func(c *config) { c.deny = f }
}

// WithErrorHandler sets what writes the response to a request that could
// not be decided: the KeyFunc failed (without WithFailOpen), or the cost
// is negative or above a limit's burst. The default writes 400 Bad
// Request for a *ClientError from a proxy header, 413 Content Too Large
// for a cost above a burst (limit.ErrCostExceedsBurst), and 500 Internal
// Server Error for anything else (an unparsable RemoteAddr, a KeyFunc's
// own error, a negative cost).
func WithErrorHandler(f func(w http.ResponseWriter, r *http.Request, err error)) Option {
	return func(c *config) { c.onErr = f }
}

// WithOnDeny sets a function called with each denial, before the deny
// handler; it must be safe for concurrent use.
func WithOnDeny(f func(r *http.Request, d Decision)) Option { return func(c *config) { c.onDeny = f } }

// WithFailOpen makes a request whose client cannot be named pass to the
// next handler unlimited (counted in Stats.Unnamed) instead of going to
// the error handler.
func WithFailOpen() Option { return func(c *config) { c.failOpen = true } }

// WithDenialHeadersOnly sets the rate-limit fields on denied responses
// only (by default admitted responses carry them too).
func WithDenialHeadersOnly() Option { return func(c *config) { c.admitHdrs = false } }

// WithLegacyHeaders adds X-RateLimit-Limit, X-RateLimit-Remaining and
// X-RateLimit-Reset (the Unix time, in seconds, of Reset) beside the IETF
// fields.
func WithLegacyHeaders() Option { return func(c *config) { c.legacy = true } }

// Limiter is the middleware: Wrap puts it in front of a handler. It is
// safe for concurrent use.
type Limiter struct {
	cfg      config
	policies []*policy
}

// limitSpec is one configured limit with its header values.
type limitSpec struct {
	name   string
	prefix string // `"name";r=`
	quota  int64
	window int64
	events int64
	period time.Duration
}

type policy struct {
	name       string
	methods    []string
	prefix     string
	cost       int64
	costFunc   func(*http.Request) int64
	table      *keyed.Table
	global     *gcra.Limiter
	client, gl limitSpec
	policyHdr  string
	pool       sync.Pool // of *attempt

	admitted, denied, errored, unnamed striped.Counter
}

// New returns a Limiter applying the first policy that matches each
// request (in order); a request no policy matches passes unlimited. It
// returns a *limit.ParamError for a policy it cannot build (Param names
// the field, as "policies[1].Client.Burst").
func New(policies []Policy, opts ...Option) (*Limiter, error) {
	c := config{key: PeerAddr, clock: nanotime.Now, v6bits: 64, admitHdrs: true}
	for _, o := range opts {
		o(&c)
	}
	switch {
	case c.key == nil:
		return nil, &limit.ParamError{Pkg: "httplimit", Param: "key func", Value: c.key, Reason: "the KeyFunc must not be nil"}
	case c.clock == nil:
		return nil, &limit.ParamError{Pkg: "httplimit", Param: "clock", Value: c.clock, Reason: "the clock must not be nil"}
	case c.v6bits < 1 || c.v6bits > 128:
		return nil, &limit.ParamError{Pkg: "httplimit", Param: "ipv6 prefix", Value: c.v6bits, Min: 1, Max: 128}
	}
	if c.deny == nil {
		c.deny = denyTooMany
	}
	if c.onErr == nil {
		c.onErr = defaultError
	}
	l := &Limiter{cfg: c}
	for i, ps := range policies {
		p, err := newPolicy(i, ps, &c)
		if err != nil {
			return nil, err
		}
		for _, q := range l.policies {
			if q.name == p.name {
				return nil, &limit.ParamError{Pkg: "httplimit", Param: "policies[" + strconv.Itoa(i) + "].Name",
					Value: p.name, Reason: "policy names are unique"}
			}
		}
		l.policies = append(l.policies, p)
	}
	return l, nil
}

func newPolicy(i int, ps Policy, c *config) (*policy, error) {
	field := "policies[" + strconv.Itoa(i) + "]."
	perr := func(param string, v any, reason string) error {
		return &limit.ParamError{Pkg: "httplimit", Param: field + param, Value: v, Reason: reason}
	}
	if ps.Name == "" || !printable(ps.Name) {
		return nil, perr("Name", ps.Name, "a name is printable ASCII, not empty")
	}
	if !ps.Client.set() && !ps.Global.set() {
		return nil, perr("Client", ps.Client, "a policy needs a Client or a Global limit")
	}
	if ps.Cost < 0 {
		return nil, perr("Cost", ps.Cost, "a cost is not negative")
	}
	p := &policy{name: ps.Name, prefix: ps.PathPrefix, cost: max(ps.Cost, 1), costFunc: ps.CostFunc}
	for _, m := range ps.Methods {
		p.methods = append(p.methods, strings.ToUpper(m))
	}
	if p.prefix == "/" {
		p.prefix = ""
	}
	var members []string
	if ps.Client.set() {
		opts := []keyed.Option{keyed.WithClock(c.clock), keyed.WithIPv6Prefix(c.v6bits)}
		if ps.Capacity != 0 {
			opts = append(opts, keyed.WithCapacity(ps.Capacity))
		}
		t, err := keyed.New(ps.Client.Events, ps.Client.Period, ps.Client.Burst, opts...)
		if err != nil {
			return nil, restamp(err, field+"Client.")
		}
		p.table = t
		if p.client, err = spec(ps.Client, ps.Name, field+"Client."); err != nil {
			return nil, err
		}
		members = append(members, p.client.policyItem())
	}
	if ps.Global.set() {
		g, err := gcra.New(ps.Global.Events, ps.Global.Period, ps.Global.Burst, gcra.WithClock(c.clock))
		if err != nil {
			return nil, restamp(err, field+"Global.")
		}
		p.global = g
		if p.gl, err = spec(ps.Global, ps.Name+"-global", field+"Global."); err != nil {
			return nil, err
		}
		if p.table != nil && p.gl.name == p.client.name {
			return nil, perr("Global.Name", p.gl.name, "the two limits of a policy need different names")
		}
		members = append(members, p.gl.policyItem())
	}
	if b := min(burstOr(ps.Client), burstOr(ps.Global)); ps.Cost > b {
		return nil, &limit.ParamError{Pkg: "httplimit", Param: field + "Cost", Value: ps.Cost, Min: int64(0), Max: b,
			Reason: "a cost above a limit's burst is never admitted"}
	}
	p.policyHdr = strings.Join(members, ", ")
	p.pool.New = func() any { return p.newAttempt() }
	return p, nil
}

// burstOr returns l's burst, or the most an int64 holds for no limit.
func burstOr(l Limit) int64 {
	if !l.set() {
		return math.MaxInt64
	}
	return l.Burst
}

// restamp names the policy field in a limiter package's ParamError.
func restamp(err error, field string) error {
	var pe *limit.ParamError
	if errors.As(err, &pe) {
		e := *pe
		e.Pkg, e.Param = "httplimit", field+strings.ToUpper(e.Param[:1])+e.Param[1:]
		return &e
	}
	return err
}

func spec(l Limit, name, field string) (limitSpec, error) {
	if l.Name != "" {
		name = l.Name
	}
	if !printable(name) {
		return limitSpec{}, &limit.ParamError{Pkg: "httplimit", Param: field + "Name", Value: name, Reason: "a name is printable ASCII"}
	}
	s := limitSpec{name: name, quota: l.Burst, events: l.Events, period: l.Period}
	s.window = max(1, ceilSeconds(l.Burst, l.Period, l.Events))
	s.prefix = sfString(name) + ";r="
	return s, nil
}

// policyItem is the limit's RateLimit-Policy item.
func (s *limitSpec) policyItem() string {
	return sfString(s.name) + ";q=" + strconv.FormatInt(s.quota, 10) + ";w=" + strconv.FormatInt(s.window, 10)
}

// ceilSeconds returns ceil(n*period/events) in seconds, saturated.
func ceilSeconds(n int64, period time.Duration, events int64) int64 {
	if n <= 0 {
		return 0
	}
	s := math.Ceil(float64(n) * float64(period) / float64(events) / 1e9)
	if s >= 1<<62 {
		return 1 << 62
	}
	return int64(s)
}

// retrySeconds rounds a wait up to whole seconds, at least 1.
func retrySeconds(d time.Duration) int64 {
	if d >= limit.Never-time.Second {
		return int64((limit.Never-1)/time.Second) + 1
	}
	return max(1, int64((d+time.Second-1)/time.Second))
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

func (p *policy) match(r *http.Request) bool {
	if len(p.methods) > 0 {
		found := false
		for _, m := range p.methods {
			if m == r.Method {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if p.prefix == "" {
		return true
	}
	path := r.URL.Path
	if !strings.HasPrefix(path, p.prefix) {
		return false
	}
	return len(path) == len(p.prefix) || p.prefix[len(p.prefix)-1] == '/' || path[len(p.prefix)] == '/'
}

// attempt is one decision's composition: the client's limiter then the
// global one, each recording its Result. Attempts are pooled, so a
// decision allocates nothing.
type attempt struct {
	client clientMember
	global globalMember
	all    *limit.All
}

func (p *policy) newAttempt() *attempt {
	a := &attempt{client: clientMember{t: p.table}, global: globalMember{l: p.global}}
	var ms []limit.Member
	if p.table != nil {
		ms = append(ms, &a.client)
	}
	if p.global != nil {
		ms = append(ms, &a.global) // the shared limit last: never refunded
	}
	a.all, _ = limit.NewAll(ms...)
	return a
}

// clientMember is the client's limiter in the keyed table.
type clientMember struct {
	t     *keyed.Table
	key   Key
	r     limit.Result
	asked bool
}

func (m *clientMember) AllowAt(now int64) bool { r, _ := m.AllowNAt(now, 1); return r.OK }
func (m *clientMember) AllowNAt(now, n int64) (limit.Result, error) {
	r, _, err := m.TakeAt(now, n)
	return r, err
}
func (m *clientMember) TakeAt(now, n int64) (r limit.Result, rc limit.Receipt, err error) {
	if m.key.addr.IsValid() {
		r, rc, err = m.t.TakeAddrAt(m.key.addr, now, n)
	} else {
		r, rc, err = m.t.TakeAt(m.key.s, now, n)
	}
	m.r, m.asked = r, true
	return r, rc, err
}
func (m *clientMember) Refund(rc limit.Receipt) { m.t.Refund(rc) }

// globalMember is the policy's global limiter.
type globalMember struct {
	l     *gcra.Limiter
	r     limit.Result
	asked bool
}

func (m *globalMember) AllowAt(now int64) bool { r, _ := m.AllowNAt(now, 1); return r.OK }
func (m *globalMember) AllowNAt(now, n int64) (limit.Result, error) {
	r, _, err := m.TakeAt(now, n)
	return r, err
}
func (m *globalMember) TakeAt(now, n int64) (limit.Result, limit.Receipt, error) {
	r, rc, err := m.l.TakeAt(now, n)
	m.r, m.asked = r, true
	return r, rc, err
}
func (m *globalMember) Refund(rc limit.Receipt) { m.l.Refund(rc) }

// Wrap returns next behind the limiter; l.Wrap is a
// func(http.Handler) http.Handler.
func (l *Limiter) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if l.Decide(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// Decide runs the middleware's decision for r without a next handler: it
// sets the response's fields, and when the request is denied or cannot be
// decided it writes the response (deny or error handler) and returns
// false. When it returns true the caller serves the request.
func (l *Limiter) Decide(w http.ResponseWriter, r *http.Request) bool {
	d, o := l.decide(w, r)
	if o == denied {
		if l.cfg.onDeny != nil {
			l.cfg.onDeny(r, d)
		}
		l.cfg.deny(w, r, d)
	}
	return o == serve
}

type outcome int

const (
	serve    outcome = iota
	denied           // the deny handler answers
	answered         // the error handler has answered
)

// decide returns the request's Decision and what to do with it.
func (l *Limiter) decide(w http.ResponseWriter, r *http.Request) (Decision, outcome) {
	var p *policy
	for _, q := range l.policies {
		if q.match(r) {
			p = q
			break
		}
	}
	if p == nil {
		return Decision{}, serve
	}
	key, err := l.cfg.key(r)
	if err != nil {
		if l.cfg.failOpen {
			p.unnamed.Add(1)
			return Decision{}, serve
		}
		p.errored.Add(1)
		l.cfg.onErr(w, r, err)
		return Decision{}, answered
	}
	cost := p.cost
	if p.costFunc != nil {
		cost = p.costFunc(r)
	}
	now := l.cfg.clock()
	a := p.pool.Get().(*attempt)
	a.client.key, a.client.asked, a.global.asked = key, false, false
	res, err := a.all.AllowNAt(now, cost)
	var s *limitSpec
	var lr limit.Result
	switch {
	case a.client.asked && (!a.client.r.OK || !a.global.asked || a.global.r.OK && a.client.r.Remaining <= a.global.r.Remaining):
		s, lr = &p.client, a.client.r
	default:
		s, lr = &p.gl, a.global.r
	}
	a.client.key = Key{}
	p.pool.Put(a)
	if err != nil {
		p.errored.Add(1)
		l.cfg.onErr(w, r, err)
		return Decision{}, answered
	}
	d := Decision{Policy: p.name, Key: key, Cost: cost, OK: res.OK, Limit: s.name, Quota: s.quota, Window: s.window, Remaining: lr.Remaining}
	if res.OK {
		p.admitted.Add(1)
		d.Reset = ceilSeconds(s.quota-lr.Remaining, s.period, s.events)
		if l.cfg.admitHdrs {
			l.setHeaders(w.Header(), p, s, &d)
		}
		return d, serve
	}
	p.denied.Add(1)
	d.RetryAfter = lr.RetryAfter
	d.Reset = retrySeconds(lr.RetryAfter)
	l.setHeaders(w.Header(), p, s, &d)
	return d, denied
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

func (l *Limiter) setHeaders(h http.Header, p *policy, s *limitSpec, d *Decision) {
	n := 2
	if !d.OK {
		n++
	}
	if l.cfg.legacy {
		n += 3
	}
	// One backing array for every field's value slice; each slice is cut
	// to its length, so an append by a handler cannot reach the next.
	vs := make([]string, n)
	set := func(k, v string) {
		vs[0] = v
		h[k] = vs[0:1:1]
		vs = vs[1:]
	}
	// RateLimit and Retry-After are cut from one string.
	var buf [96]byte
	b := append(buf[:0], s.prefix...)
	b = strconv.AppendInt(b, max(d.Remaining, 0), 10)
	b = append(b, ";t="...)
	rl := len(b)
	b = strconv.AppendInt(b, d.Reset, 10)
	v := string(b)
	set(hdrPolicy, p.policyHdr)
	set(hdrRateLimit, v)
	if !d.OK {
		set(hdrRetryAfter, v[rl:])
	}
	if l.cfg.legacy {
		set(hdrXLimit, strconv.FormatInt(s.quota, 10))
		set(hdrXRemaining, strconv.FormatInt(max(d.Remaining, 0), 10))
		set(hdrXReset, strconv.FormatInt(time.Now().Unix()+d.Reset, 10))
	}
}

// The default denial's fields and body; the value slices are shared and
// never written.
var (
	textPlain   = []string{"text/plain; charset=utf-8"}
	nosniff     = []string{"nosniff"}
	tooManyBody = []byte("Too Many Requests\n")
)

// denyTooMany writes what http.Error(w, "Too Many Requests", 429) writes,
// without canonicalizing the keys or allocating.
func denyTooMany(w http.ResponseWriter, _ *http.Request, _ Decision) {
	h := w.Header()
	delete(h, "Content-Length")
	h["Content-Type"] = textPlain
	h["X-Content-Type-Options"] = nosniff
	w.WriteHeader(http.StatusTooManyRequests)
	w.Write(tooManyBody)
}

func defaultError(w http.ResponseWriter, _ *http.Request, err error) {
	var ce *ClientError
	switch {
	case errors.As(err, &ce) && ce.Source != "RemoteAddr":
		http.Error(w, "Bad Request: client address: "+ce.Reason, http.StatusBadRequest)
	case errors.Is(err, limit.ErrCostExceedsBurst):
		http.Error(w, "Content Too Large: request cost exceeds the limit", http.StatusRequestEntityTooLarge)
	default:
		http.Error(w, "Internal Server Error", http.StatusInternalServerError)
	}
}
