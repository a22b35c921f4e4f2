package clientkey

import (
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/cellrate/cellrate/limit"
)

// ErrProxyHeader is matched (errors.Is) by the error of a request whose
// proxy header, as a trusted proxy passed it on, names no client: an
// element that is not an address, an overlong one, or more trusted
// proxies than Proxy walks. Its Error names the header and quotes the
// value. Package httplimit answers it 400 Bad Request by default.
var ErrProxyHeader = errors.New("clientkey: the proxy header names no client")

// clientError is a client that cannot be named from the request: an
// unparsable RemoteAddr (the server's setup, not the client's fault), or
// a proxy header (ErrProxyHeader).
type clientError struct {
	source string // "RemoteAddr", "Forwarded" or "X-Forwarded-For"
	value  string // the offending value, cut to 64 bytes
	reason string
}

func (e *clientError) Error() string {
	return "clientkey: " + e.source + " " + strconv.Quote(e.value) + ": " + e.reason
}

// Reason says what is wrong with the value, without quoting it: what
// package httplimit's default error handler tells the client.
func (e *clientError) Reason() string { return e.reason }

// Is matches ErrProxyHeader for an error read from a proxy header.
func (e *clientError) Is(target error) bool {
	return target == ErrProxyHeader && e.source != remoteAddr
}

const remoteAddr = "RemoteAddr"

func newClientError(src, v, reason string) *clientError {
	if len(v) > 64 {
		v = v[:64]
	}
	return &clientError{source: src, value: v, reason: reason}
}

// maxHops is the most proxy header elements a Proxy key walks through: a
// chain of more trusted proxies is refused with ErrProxyHeader.
const maxHops = 32

// maxElem is the longest element of a proxy header read as an address
// (an IPv6 address with a zone and a port fits well within it).
const maxElem = 128

// Peer is the Func of a server that clients reach directly, and package
// httplimit's default: the address of the connection's peer (r.RemoteAddr,
// "host:port", or a bare address). A RemoteAddr that is neither (a Unix
// socket's "@", an empty one) is an error that httplimit answers 500 by
// default: the server's setup, not the client, is wrong.
func Peer(r *http.Request) (Key, error) {
	a, err := peer(r.RemoteAddr)
	if err != nil {
		return Key{}, err
	}
	return Addr(a), nil
}

func peer(s string) (netip.Addr, error) {
	if a, ok := parse4Port(s); ok {
		return a, nil
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr(), nil
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a, nil
	}
	return netip.Addr{}, newClientError(remoteAddr, s, "not an IP address with or without a port")
}

// Proxy returns a Func for a server behind proxies: it starts at the
// peer address and, while that address is in a trusted prefix, steps to
// the address that proxy passed on in the header, X-Forwarded-For (a
// comma-separated list of addresses, each proxy appending its peer's) or
// Forwarded (RFC 7239: elements whose for= parameter is the address a
// proxy received the request from), reading the header's
// elements right to left (the last line first). The client is the first
// address outside the trusted prefixes, or the leftmost one if every hop
// is trusted. A header from a peer that is not trusted is never read, so a
// client cannot name itself: a direct client that sends
// "X-Forwarded-For: 1.2.3.4" is still keyed by its own address. Name the
// header your trusted proxies append to: one they pass on as they got it
// (often Forwarded, behind proxies that write X-Forwarded-For) is the
// client's to fill, and lets it name itself.
//
// An element the walk reaches that is not an address (malformed,
// "unknown", an obfuscated Forwarded node, longer than 128 bytes) or a walk
// of more than 32 elements is an error that matches ErrProxyHeader: a
// trusted proxy sent
// what no client address can be read from. Elements left of the client's
// are never read. A Forwarded element's for= value may be a quoted string,
// and a port is ignored in either header. An address with a zone
// (fe80::1%eth0) is trusted by its address, and an IPv4-mapped one
// (::ffff:10.0.0.1) by its IPv4 address: an IPv4-mapped prefix trusts
// nothing, so write 10.0.0.0/8, not ::ffff:10.0.0.0/104.
//
// Proxy returns a *limit.ParamError for no trusted prefix (every peer
// would be the client: use Peer), an invalid one, or another header.
func Proxy(header string, trusted ...netip.Prefix) (Func, error) {
	perr := func(v any, reason string) error {
		return &limit.ParamError{Pkg: "clientkey", Param: "trusted", Value: v, Reason: reason}
	}
	name := http.CanonicalHeaderKey(header)
	switch {
	case name != "X-Forwarded-For" && name != "Forwarded":
		return nil, &limit.ParamError{Pkg: "clientkey", Param: "header", Value: header, Reason: "the header is X-Forwarded-For or Forwarded"}
	case len(trusted) == 0:
		return nil, perr(0, "Proxy needs at least one trusted proxy prefix")
	}
	for _, p := range trusted {
		if !p.IsValid() {
			return nil, perr(p, "an invalid prefix")
		}
	}
	return proxyKey(name, newTrust(trusted)), nil
}

func proxyKey(name string, trusted trust) Func {
	forwarded := name == "Forwarded"
	return func(r *http.Request) (Key, error) {
		a, err := peer(r.RemoteAddr)
		if err != nil {
			return Key{}, err
		}
		if !trusted.has(a) {
			return Addr(a), nil
		}
		vals := r.Header[name] // name is canonical
		if !forwarded && len(vals) == 1 && strings.IndexByte(vals[0], ',') < 0 {
			return oneHop(a, name, vals[0])
		}
		return walk(a, name, vals, forwarded, &trusted)
	}
}

// oneHop is walk for the common X-Forwarded-For of one line of at most
// one element, from a trusted peer: the element if there is one (trusted
// or not, no element is left of it), else the peer.
func oneHop(peer netip.Addr, name, line string) (Key, error) {
	e := trim(line)
	if e == "" {
		return Addr(peer), nil
	}
	a, reason := node(e, false)
	if reason != "" {
		return Key{}, newClientError(name, e, reason)
	}
	return Addr(a), nil
}

// walk reads the header's elements right to left from the trusted peer a
// while the address they name is trusted.
func walk(a netip.Addr, name string, vals []string, forwarded bool, trusted *trust) (Key, error) {
	it := elems{vals: vals, forwarded: forwarded}
	for hops := 0; trusted.has(a); hops++ {
		e, ok := it.next()
		if !ok {
			break
		}
		if hops == maxHops {
			return Key{}, newClientError(name, e, "more than 32 trusted proxies")
		}
		var reason string
		if forwarded {
			a, reason = forwardedFor(e)
		} else {
			a, reason = node(e, false)
		}
		if reason != "" {
			return Key{}, newClientError(name, e, reason)
		}
	}
	return Addr(a), nil
}

// elems yields the elements of a list header right to left, from its last
// line to its first, without allocating.
type elems struct {
	vals      []string
	rest      string // what is left of the line being read
	inLine    bool
	forwarded bool
}

func (it *elems) next() (string, bool) {
	for {
		if !it.inLine {
			if len(it.vals) == 0 {
				return "", false
			}
			it.rest, it.vals = it.vals[len(it.vals)-1], it.vals[:len(it.vals)-1]
			if trim(it.rest) == "" {
				continue // an empty line holds no element
			}
			it.inLine = true
		}
		i := it.cut()
		e := trim(it.rest[i+1:])
		if i < 0 {
			it.inLine = false
		} else {
			it.rest = it.rest[:i]
		}
		return e, true
	}
}

// cut returns the index of the last comma of it.rest outside a quoted
// string (Forwarded only), or -1.
func (it *elems) cut() int {
	s := it.rest
	if !it.forwarded {
		return strings.LastIndexByte(s, ',')
	}
	quoted := false
	for i := len(s) - 1; i >= 0; i-- {
		switch s[i] {
		case '"':
			// A quote after an odd number of backslashes is escaped.
			b := 0
			for j := i - 1; j >= 0 && s[j] == '\\'; j-- {
				b++
			}
			if b%2 == 0 {
				quoted = !quoted
			}
		case ',':
			if !quoted {
				return i
			}
		}
	}
	return -1
}

// forwardedFor returns the address in the for= parameter of a Forwarded
// element, or why there is none.
func forwardedFor(e string) (netip.Addr, string) {
	for e != "" {
		var pair string
		pair, e = cutPair(e)
		name, v, ok := strings.Cut(pair, "=")
		if !ok {
			return netip.Addr{}, "a parameter without a value"
		}
		if !strings.EqualFold(strings.TrimSpace(name), "for") {
			continue
		}
		v = strings.TrimSpace(v)
		quoted := len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"'
		if quoted {
			v = v[1 : len(v)-1]
		}
		return node(v, !quoted)
	}
	return netip.Addr{}, "no for= parameter"
}

// cutPair splits a Forwarded element at its first ';' outside a quoted
// string.
func cutPair(e string) (string, string) {
	quoted := false
	for i := 0; i < len(e); i++ {
		switch e[i] {
		case '\\':
			if quoted {
				i++
			}
		case '"':
			quoted = !quoted
		case ';':
			if !quoted {
				return e[:i], e[i+1:]
			}
		}
	}
	return e, ""
}
