// Package httplimit is net/http middleware that holds each client, and all
// clients together, to exact rate limits, and tells clients so with the
// standard header fields. Use it in front of login forms and APIs: a
// policy per route (by method and path prefix), each naming its clients
// its own way with package clientkey (by address, behind trusted proxies,
// by API key). The package Example shows a policy for POST /login by
// address and one for /api/ by API key else address; ExamplePolicy one
// behind a load balancer, with a cost per request and a cap in flight.
//
// # Contract
//
// A Limiter applies the first of its Policies that matches a request; a
// request no policy matches passes unlimited. A policy has a per-client
// limit, a global limit, or both; each is a token bucket (Rate: events
// per period, up to a burst). A request of cost n (Policy.Cost) is
// admitted only if the client's bucket and the global one both hold n, and
// then takes n from each: one all-or-nothing decision, in which a denied
// request takes nothing from either. So a client cannot spend the global
// budget on requests its own limit denies, nor the other way round.
//
// Each client is held to the bound of package keyed's table that keeps it
// (see its doc, and Rate for the table's capacity and what it does when
// full); the global limit to package gcra's bound over all admitted
// requests. Time is read once per request from the clock (WithClock).
//
// A policy may also cap the requests being served at once, per client
// (Policy.ClientInFlight) and for all clients (Policy.InFlight, a limit of
// package concurrency, fixed or adaptive), in the same all-or-nothing
// decision: a request over a cap is answered 503 and takes no rate, and a
// request the rates deny holds no slot.
//
// A policy's Routes match methods without regard to case, and "GET"
// holds HEAD too, as net/http serves HEAD with GET handlers. A path with
// empty, "." or ".." segments falls under the policy it matches as sent
// or cleaned, whichever the handler serves; if these are two policies,
// the request goes to the error handler (400 by default).
//
// # Clients
//
// Policy.Key, a clientkey.Func, names the client (default clientkey.Peer,
// the connection's peer address; clientkey.Proxy behind proxies). Keys of
// different kinds never name the same client, and an IPv6 client is its
// /64 unless clientkey.IPv6Prefix says otherwise.
//
// A request whose client cannot be named fails closed by default: an
// unparsable RemoteAddr (a Unix socket's), a proxy header that names no
// client (clientkey.ErrProxyHeader), no key at all (clientkey.ErrNoKey:
// keyless requests never share one limit), or a Func's own error goes,
// with its error, to the error handler (WithErrorHandler), is counted in
// Stats.Errors, and never reaches the next handler unless the error
// handler lets it through unlimited (fail open). The zero Limiter answers
// every request 500: it was not made by New.
//
// # Header fields
//
// Responses carry the fields of draft-ietf-httpapi-ratelimit-headers-11 as
// structured fields (RFC 8941), each limit named by a String: the
// policy's Name for its Client limit, with "-global" for its Global one.
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
// that waits longest, and t is the Retry-After value (the client's limit
// on a tie, either way): the wait until
// every limit of the policy admits the request (if nothing else is
// admitted meanwhile), in whole seconds rounded up, at least 1: never
// shorter than the real wait. A denial gets 429 Too Many Requests unless
// WithDenyHandler writes something else. WithHeaders can leave admitted
// responses without the fields, and add X-RateLimit-Limit, -Remaining and
// -Reset (a Unix time in seconds).
//
// The fields' value slices may be shared between responses: a handler
// that changes a field replaces it (Header.Set, Add or Del), and never
// writes into the slice it finds.
//
// Stats counts admitted, denied and undecided requests by policy name.
package httplimit
