package httplimit

import (
	"net/http"

	"github.com/cellrate/cellrate/nanotime"
)

// Option configures a Limiter.
type Option func(*config)

type config struct {
	clock     nanotime.Clock
	v6bits    int
	deny      func(http.ResponseWriter, *http.Request, Decision)
	onErr     func(http.ResponseWriter, *http.Request, error)
	failOpen  bool
	admitHdrs bool
	legacy    bool
}

// WithClock sets the clock the limits read (default nanotime.Now); a nil
// clock is a *limit.ParamError from New.
func WithClock(clock nanotime.Clock) Option { return func(c *config) { c.clock = clock } }

// WithIPv6Prefix sets how many leading bits of an IPv6 address name a
// client, in [1, 128] (default 64: one client usually owns a /64).
func WithIPv6Prefix(bits int) Option { return func(c *config) { c.v6bits = bits } }

// WithDenyHandler sets what writes a denied request's response (log it
// there, too). The rate-limit header fields and Retry-After are set
// before it is called. The default writes 429 Too Many Requests with a
// short text body (503 Service Unavailable for a cap on requests in flight,
// Decision.Busy).
func WithDenyHandler(f func(w http.ResponseWriter, r *http.Request, d Decision)) Option {
	return func(c *config) { c.deny = f }
}

// WithErrorHandler sets what writes the response to a request that could
// not be decided: the KeyFunc failed (without WithFailOpen), or the cost
// is negative or above a limit's burst; err is the KeyFunc's error or the
// limit's. The default writes 400 Bad Request for ErrProxyHeader or
// ErrNoKey, 413 Content Too Large for a cost above a
// burst (limit.ErrCostExceedsBurst), 503 Service Unavailable for a new
// client a full table refuses (keyed.ErrFull, under keyed.WithRefuse in
// Policy.Table), and 500 Internal Server Error for
// anything else (an unparsable RemoteAddr, a KeyFunc's own error, a
// negative cost).
func WithErrorHandler(f func(w http.ResponseWriter, r *http.Request, err error)) Option {
	return func(c *config) { c.onErr = f }
}

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
