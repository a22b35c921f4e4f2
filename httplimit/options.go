package httplimit

import (
	"net/http"

	"github.com/cellrate/cellrate/nanotime"
)

// Option configures a Limiter.
type Option func(*config)

type config struct {
	clock     nanotime.Clock
	deny      func(http.ResponseWriter, *http.Request, Decision)
	onErr     func(http.ResponseWriter, *http.Request, error) bool
	admitHdrs bool
	legacy    bool
}

// WithClock sets the clock the limits read (default nanotime.Now); a nil
// clock is a *limit.ParamError from New.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// WithDenyHandler sets what writes a denied request's response (log it
// there, too); the next handler never serves a denied request, and f
// must write a status, or net/http answers 200 OK. The rate-limit header
// fields and Retry-After are set before it is called. The default writes
// 429 Too Many Requests with a short text body (503 Service Unavailable
// for a cap on requests in flight, whose Decision names no Limit).
func WithDenyHandler(f func(w http.ResponseWriter, r *http.Request, d Decision)) Option {
	return func(c *config) { c.deny = f }
}

// WithErrorHandler sets what handles a request that could not be decided:
// the Key func failed (err is its error), or the cost is negative or
// above a limit's burst, or a full table refused a new client (err is the
// limit's), or the path falls under one policy as sent and another
// cleaned (see Policy.Routes). f either writes the response and returns
// false (fail closed), or writes nothing and returns true: the next
// handler then serves the request unlimited (fail open), holding no slot
// in flight. Either way the request counts in Stats.Errors.
//
// The default fails closed: 400 Bad Request for clientkey.ErrProxyHeader,
// clientkey.ErrNoKey or such a path, 413 Content Too Large for a cost
// above a burst (limit.ErrCostExceedsBurst), 503 Service Unavailable for
// a new client a full table refuses (keyed.ErrFull, under
// keyed.WithRefuse), and 500 Internal Server Error for anything else (an unparsable RemoteAddr, a
// Key func's own error, a negative cost).
func WithErrorHandler(f func(w http.ResponseWriter, r *http.Request, err error) (serve bool)) Option {
	return func(c *config) { c.onErr = f }
}

// WithHeaders sets which responses carry the rate-limit fields: every
// denial does; admitted responses do if admitted (the default), and the
// legacy fields X-RateLimit-Limit, X-RateLimit-Remaining and
// X-RateLimit-Reset (the Unix time, in seconds, of a full limit or of the
// retry) go beside the IETF fields if legacy (by default they do not).
func WithHeaders(admitted, legacy bool) Option {
	return func(c *config) { c.admitHdrs, c.legacy = admitted, legacy }
}
