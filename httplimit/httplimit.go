package httplimit

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/cellrate/cellrate/concurrency"
	"github.com/cellrate/cellrate/httplimit/clientkey"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/nanotime"
)

// Limit is a token bucket that Rate makes. The zero Limit is no limit.
type Limit struct {
	set    bool
	events int64
	period time.Duration
	burst  int64
	table  []keyed.Option
}

// Rate returns the limit of events tokens refilled per period, holding up
// to burst, as package keyed's New takes them. New validates it, and
// returns a *limit.ParamError naming the policy's field. For a Policy's
// Client limit, the table options size the table of clients
// (keyed.WithCapacity) and say what happens when it is full
// (keyed.WithRefuse, else it evicts); the Limiter's clock and the keys'
// IPv6 prefix apply, not a table option's. A Global limit takes none.
func Rate(events int64, period time.Duration, burst int64, table ...keyed.Option) Limit {
	return Limit{set: true, events: events, period: period, burst: burst, table: append([]keyed.Option(nil), table...)}
}

// Policy is a class of requests, how their clients are named, and the
// limits they are held to. The RateLimit fields name its Client limit by
// its Name, and its Global limit by its Name and "-global".
type Policy struct {
	// Name names the policy in Stats, Decisions and the RateLimit fields
	// (printable ASCII, not empty).
	Name string
	// Routes are the requests the policy applies to, each a path prefix
	// after an optional method, as "POST /login" or "/api/"; none means
	// every request. A method compares without regard to case, and "GET"
	// holds HEAD too, since net/http serves HEAD with a GET handler; a
	// route with a method holds no other, so in front of a handler that
	// serves any method (a ServeMux pattern without one) leave it out. A
	// prefix ending in "/" is that subtree ("/" is every path); any other
	// is that path and the subtree below it ("/api" matches "/api" and
	// "/api/x", not "/apiary"). Paths compare as r.URL.Path has them
	// (unescaped), case-sensitively, as ServeMux compares them: a handler
	// that ignores case (files on a case-insensitive file system) needs a
	// route over all it serves, not over one spelling of a path. A path
	// with empty, "." or ".." segments is held to the policy it matches as
	// sent or cleaned, as ServeMux cleans it (handlers serve one or the
	// other); one whose two forms match two policies goes to the error
	// handler.
	Routes []string
	// Cost returns the units a request takes (nil: 1 each). A cost that
	// is negative or above a limit's burst goes to the error handler. It
	// runs before the body is read: a cost by size has r.ContentLength,
	// -1 for a body of unknown size (chunked), which must not cost little.
	Cost func(*http.Request) int64
	// Key names the client of a request (nil: clientkey.Peer, the
	// connection's peer address; clientkey.Proxy for a server behind
	// proxies).
	Key clientkey.Func
	// Client is the limit of each client, kept in a table of package
	// keyed (see Rate); Global the limit of all clients of the policy
	// together.
	Client, Global Limit
	// ClientInFlight caps each client's requests being served at once (0:
	// no cap), and InFlight all clients' (nil: no cap), with a limit of
	// package concurrency, fixed or adaptive, that policies may share.
	// Both are taken in the same all-or-nothing decision as the rate
	// limits: a request over either is answered 503 Service Unavailable
	// and takes no rate, and a request the rates deny holds no slot. A
	// request holds its slots until the next handler returns; each
	// release tells InFlight's algorithm the request's latency.
	ClientInFlight int
	InFlight       *concurrency.Limiter
}

// Decision is a denial, as the deny handler (WithDenyHandler) gets it:
// what a response or a log line needs. The rate-limit header fields and
// Retry-After are set on the response before the handler is called.
type Decision struct {
	// Policy is the name of the policy that matched.
	Policy string
	// Key is the client's key.
	Key clientkey.Key
	// Limit is the name of the limit that waits longest, as the RateLimit
	// field reports it; empty for a denial by a cap on requests in flight
	// (503 Service Unavailable, not 429).
	Limit string
	// RetryAfter is the wait until every limit of the policy admits the
	// request (if no other request is admitted meanwhile); Retry-After is
	// it in whole seconds, rounded up, at least 1. It is 1 s for a cap in
	// flight: a slot frees when a request ends, which no limit can tell.
	RetryAfter time.Duration

	remaining int64 // the RateLimit field's r: the least left in any limit
	reset     int64 // its t: RetryAfter in seconds, or when admitted the seconds to full
}

// Limiter is the middleware: Wrap puts it in front of a handler. It is
// safe for concurrent use and must not be copied. The zero Limiter (not
// made by New) answers every request 500 Internal Server Error: it fails
// closed.
type Limiter struct {
	_        noCopy
	cfg      config
	policies []*policy
}

// noCopy makes go vet's copylocks check report a copied Limiter.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// New returns a Limiter applying the first policy that matches each
// request (in order); a request no policy matches passes unlimited. It
// returns a *limit.ParamError for no policies or a policy it cannot build
// (Param names the field, as "policies[1].Client.Burst").
func New(policies []Policy, opts ...Option) (*Limiter, error) {
	c := config{clock: nanotime.Now, admitHdrs: true}
	for i, o := range opts {
		if o == nil {
			return nil, &limit.ParamError{Pkg: "httplimit", Param: "option", Value: i, Reason: "a nil Option"}
		}
		o(&c)
	}
	switch {
	case c.clock == nil:
		return nil, &limit.ParamError{Pkg: "httplimit", Param: "clock", Value: c.clock, Reason: "the clock must not be nil"}
	case len(policies) == 0:
		return nil, &limit.ParamError{Pkg: "httplimit", Param: "policies", Value: 0, Min: 1, Reason: "a Limiter needs a policy"}
	}
	if c.deny == nil {
		c.deny = denyTooMany
	}
	if c.onErr == nil {
		c.onErr = defaultError
	}
	l := &Limiter{cfg: c}
	for i, ps := range policies {
		p, err := newPolicy(i, ps)
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

// errZero is what the zero Limiter answers every request with.
var errZero = errors.New("httplimit: the Limiter was not made by New")

// Wrap returns next behind the limiter; l.Wrap is a
// func(http.Handler) http.Handler.
func (l *Limiter) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var h hold
		if !l.serve(w, r, &h) {
			return
		}
		if h.held() {
			defer h.release(concurrency.Success)
		}
		next.ServeHTTP(w, r)
	})
}

// serve decides r, answers it when it is denied or cannot be decided, and
// reports whether the next handler serves it.
func (l *Limiter) serve(w http.ResponseWriter, r *http.Request, h *hold) bool {
	if l == nil || l.cfg.clock == nil {
		defaultError(w, r, errZero)
		return false
	}
	var d Decision
	o := l.decide(w, r, &d, h)
	if o == denied {
		l.cfg.deny(w, r, d)
	}
	return o == serve
}
