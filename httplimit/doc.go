// Package httplimit is net/http middleware that holds each client, and all
// clients together, to exact rate limits, and tells clients so with the
// standard header fields. Use it in front of login forms and APIs: a
// policy per route (by method and path prefix), each naming its clients
// its own way (by address, behind trusted proxies, by API key). The
// package Example shows a policy for /login by address and one for /api/
// by API key else address.
//
// # Contract
//
// A Limiter applies the first of its Policies that matches a request; a
// request no policy matches passes unlimited. A policy has a per-client
// limit, a global limit, or both; each is a token bucket (Events per
// Period, up to Burst). A request of cost n (Policy.Cost) is
// admitted only if the client's bucket and the global one both hold n, and
// then takes n from each: one all-or-nothing decision, in which a denied
// request takes nothing from either. So a client cannot spend the global
// budget on requests its own limit denies, nor the other way round.
//
// Each client is held to the bound of package keyed's table that keeps it
// (see its doc, and Policy.Table for the table's capacity and what it does
// when full); the global limit to package gcra's bound over all admitted
// requests. Time is read once per request from the clock (WithClock).
//
// A policy may also cap the requests being served at once, per client
// (Policy.ClientInFlight) and for all clients (Policy.InFlight, a limit of
// package concurrency, fixed or adaptive), in the same all-or-nothing
// decision: a request over a cap is answered 503 and takes no rate, and a
// request the rates deny holds no slot.
//
// A policy's Methods match without regard to case, and "GET" holds HEAD
// too, as net/http serves HEAD with GET handlers.
//
// # Clients
//
// A KeyFunc names the client: Policy.Key (default PeerAddr, the
// connection's peer address). An IPv6 client is its /64 (WithIPv6Prefix).
// Keys of different kinds (an address, a string, a
// joined key) never name the same client. Behind proxies, ProxyKey reads
// X-Forwarded-For or Forwarded (RFC 7239) right to left, and only across
// peers in a trusted set of prefixes, so a header sent by a client that
// is not a trusted proxy is ignored. JoinKeys names a client by several
// keys at once (address and route); FirstKey by the first key a request
// has (API key, else address).
//
// A request whose client cannot be named fails closed by default: an
// unparsable RemoteAddr (a Unix socket's), a proxy header a trusted proxy
// filled with something that is not an address, a chain of more than 32
// trusted proxies, no key at all (ErrNoKey: keyless requests never share
// one limit), or a custom KeyFunc's error goes, with its error, to the
// error handler (WithErrorHandler) and never to the next handler, and is
// counted in Stats.Errors. WithFailOpen lets such requests through
// unlimited instead, counted in Stats.Unnamed. The zero Limiter answers
// every request 500: it was not made by New.
//
// # Header fields
//
// Responses carry the fields of draft-ietf-httpapi-ratelimit-headers-11 as
// structured fields (RFC 8941), each limit named by a String:
//
//	RateLimit-Policy: "api";q=10;w=10, "api-global";q=1000;w=1
//	RateLimit: "api";r=0;t=1
//
// RateLimit-Policy lists the policy's limits: q is a limit's burst and w
// the seconds it takes to refill it (rounded up, at least 1). RateLimit
// reports one limit, and r is what a next request of the client at the
// same instant can take (the least any limit of the policy holds). When
// admitted, it names the limit with the fewest units left, and t is the
// most seconds it takes to be full again. When denied, it names the limit
// that waits longest, and t is the Retry-After value: the wait until
// every limit of the policy admits the request (if nothing else is
// admitted meanwhile), in whole seconds rounded up, at least 1: never
// shorter than the real wait. A denial gets 429 Too Many Requests unless
// WithDenyHandler writes something else. WithDenialHeadersOnly leaves
// admitted responses without the fields; WithLegacyHeaders adds
// X-RateLimit-Limit, -Remaining and -Reset (a Unix time in seconds).
//
// The fields' value slices may be shared between responses: a handler
// that changes a field replaces it (Header.Set, Add or Del), and never
// writes into the slice it finds.
//
// Stats counts admitted, denied and failed requests by policy name.
package httplimit
