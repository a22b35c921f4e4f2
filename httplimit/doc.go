// Package httplimit is net/http middleware that holds each client, and all
// clients together, to exact rate limits, and tells clients so with the
// standard header fields.
//
// A Limiter applies the first of its Policies that matches a request (by
// method and path prefix). A policy has a per-client limit, a global limit,
// or both; each is a token bucket (Events per Period, up to Burst). A
// request of cost n (Policy.Cost or CostFunc, weighted requests) is
// admitted only if the client's bucket and the global one both hold n, and
// then takes n from each: one all-or-nothing decision (limit.All over the
// client's limiter in a keyed.Table and a gcra.Limiter, the global one last
// so that it is never refunded). A denied request takes nothing from
// either, so a client cannot spend the global budget on requests its own
// limit denies, nor the other way round.
//
// # Exactness
//
// Each client is held to its own bucket's bound (package keyed's: over the
// times in [a, b] at which its requests are decided, at most
// Burst + (b - a)*Events/Period requests' cost, within keyed's time
// rounding), plus what the table forgave when it had to evict a busy
// client to make room (counted in Stats.Clients.Forgiven; none while the
// table's Capacity holds the busy clients). The global limit holds gcra's
// bound over all admitted requests. Time is read once per request from the
// clock (WithClock).
//
// # Clients
//
// A KeyFunc names the client. The default, PeerAddr, is the connection's
// peer address; an IPv6 client is its /64 (WithIPv6Prefix). Behind proxies,
// ProxyKey reads X-Forwarded-For or Forwarded (RFC 7239) right to left, and
// only across peers in a trusted set of prefixes, so a header sent by a
// client that is not a trusted proxy is ignored.
//
// A request whose client cannot be named fails closed by default: an
// unparsable RemoteAddr (a Unix socket's), a proxy header a trusted proxy
// filled with something that is not an address, a chain of more than
// MaxHops trusted proxies, or an error from a custom KeyFunc goes to the
// error handler (WithErrorHandler; by default 400 for a proxy header's
// fault, 500 otherwise) and never to the next handler. WithFailOpen lets
// such requests through unlimited instead, counted in Stats.
//
// # Header fields
//
// Responses carry the fields of draft-ietf-httpapi-ratelimit-headers-11 as
// structured fields (RFC 8941), each limit named by a String:
//
//	RateLimit-Policy: "api";q=10;w=10, "api-global";q=1000;w=1
//	RateLimit: "api";r=0;t=1
//
// RateLimit-Policy lists the policy's limits: q is a limit's burst and w the
// seconds it takes to refill it (rounded up, at least 1). RateLimit reports
// one limit: the one that denied the request, or, when it was admitted, the
// one with the fewest units left (r); t is the seconds until that limit is
// full again (an upper bound), or on a denial the Retry-After value. A
// denial gets 429 Too Many Requests with Retry-After in whole seconds,
// rounded up and at least 1, unless WithDenyHandler writes something else.
// WithDenialHeadersOnly leaves admitted responses without the fields;
// WithLegacyHeaders adds X-RateLimit-Limit, -Remaining and -Reset (a Unix
// time in seconds).
//
// # Observability
//
// Stats counts admitted, denied and failed requests per policy on
// striped.Counters (no contention between cores); Var exposes them through
// expvar; WithOnDeny is called with every denial's Decision.
package httplimit
