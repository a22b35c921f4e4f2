// Package clientkey names the client of an HTTP request, for package
// httplimit's per-client limits: a Func reads a Key from a request. Use
// Peer for a server that clients reach directly, Proxy for one behind
// load balancers or proxies, Header for an API key, and First and Join to
// combine them. ExampleProxy shows a server behind a load balancer.
//
// # Contract
//
// A Key is an address, a string, or several joined; keys of different
// kinds never name the same client, and the zero Key names none
// (ErrNoKey). An IPv4-mapped IPv6 address is its IPv4 address and a zone
// is ignored. An IPv6 address names its /64, the block one client usually
// owns, unless IPv6Prefix gives another prefix: a per-client limit holds
// the whole prefix to one client's bound.
//
// Proxy reads X-Forwarded-For or Forwarded (RFC 7239) right to left, and
// only across peers in a trusted set of prefixes: a header sent by a
// client that is not a trusted proxy is never read, so no client can name
// itself. A header that a trusted proxy filled with something that is
// not an address, or a chain of more than 32 trusted proxies, is an error
// that matches ErrProxyHeader; an unparsable RemoteAddr (a Unix socket's)
// is an error too. Package httplimit refuses a request whose client
// cannot be named unless its error handler lets it through.
package clientkey
