package httplimit

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"net/http"
	"path"
	"strconv"
	"strings"
	"unsafe"

	"github.com/cellrate/cellrate/concurrency"
	"github.com/cellrate/cellrate/httplimit/clientkey"
	"github.com/cellrate/cellrate/httplimit/internal/keypart"
	"github.com/cellrate/cellrate/internal/gcrastep"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/striped"
)

type policy struct {
	name     string
	routes   []route                   // none: every request
	cost     func(*http.Request) int64 // nil: 1
	key      clientkey.Func
	seed     maphash.Seed // of joined keys
	table    *keyed.Table
	global   *globalLimit
	client   limitSpec
	gl       limitSpec
	fields   fields
	flights  *flights             // per-client requests in flight, if capped
	inFlight *concurrency.Limiter // all clients' requests in flight, if capped

	admitted, denied, errored striped.Counter
}

// route is one of a policy's Routes: a method (upper case, "" for any)
// and a path prefix ("" for every path).
type route struct {
	method, prefix string
}

func newPolicy(i int, ps Policy) (*policy, error) {
	field := "policies[" + strconv.Itoa(i) + "]."
	perr := func(param string, v any, reason string) error {
		return &limit.ParamError{Pkg: "httplimit", Param: field + param, Value: v, Reason: reason}
	}
	if ps.Name == "" || !printable(ps.Name) {
		return nil, perr("Name", ps.Name, "a name is printable ASCII, not empty")
	}
	if !ps.Client.set && !ps.Global.set && ps.ClientInFlight == 0 && ps.InFlight == nil {
		return nil, perr("Client", nil, "a policy needs a Client or a Global limit, or a cap on requests in flight")
	}
	if ps.ClientInFlight < 0 {
		return nil, perr("ClientInFlight", ps.ClientInFlight, "a cap is not negative")
	}
	p := &policy{name: ps.Name, cost: ps.Cost, key: ps.Key}
	if p.key == nil {
		p.key = clientkey.Peer
	}
	for j, rt := range ps.Routes {
		if err := p.addRoute(rt); err != "" {
			return nil, perr("Routes["+strconv.Itoa(j)+"]", rt, err)
		}
	}
	p.seed = maphash.MakeSeed()
	if ps.ClientInFlight > 0 {
		p.flights = newFlights(ps.ClientInFlight)
	}
	p.inFlight = ps.InFlight
	if err := p.limits(ps, field); err != nil {
		return nil, err
	}
	p.fields = newFields(p)
	return p, nil
}

// limits builds the policy's client table and global limiter.
// The keys cut IPv6 addresses to their prefixes: the table takes them
// whole.
func (p *policy) limits(ps Policy, field string) error {
	var err error
	if c := ps.Client; c.set {
		opts := append(append([]keyed.Option(nil), c.table...), keyed.WithIPv6Prefix(128))
		if p.table, err = keyed.New(c.events, c.period, c.burst, opts...); err != nil {
			return restamp(err, field+"Client.")
		}
		p.client = spec(c, ps.Name)
	}
	if g := ps.Global; g.set {
		if len(g.table) > 0 {
			return &limit.ParamError{Pkg: "httplimit", Param: field + "Global", Value: len(g.table),
				Reason: "table options are for a Client limit; a Global limit has no table"}
		}
		gp, err := gcrastep.NewParams(g.events, g.period, g.burst)
		if err != nil {
			return restamp(err, field+"Global.")
		}
		p.global = &globalLimit{ps: gp}
		p.gl = spec(g, ps.Name+"-global")
	}
	return nil
}

// addRoute adds the route rt ("[METHOD ]/prefix"), and GET's HEAD, or
// returns why rt is not one.
func (p *policy) addRoute(rt string) string {
	m, path, ok := strings.Cut(rt, " ")
	if !ok {
		m, path = "", rt
	} else if !token(m) {
		return "a method is a token (RFC 9110): letters, digits and !#$%&'*+-.^_`|~"
	}
	if path == "" || path[0] != '/' {
		return `a route is a path prefix starting with "/", after an optional method and one space`
	}
	if path == "/" {
		path = ""
	}
	m = strings.ToUpper(m)
	p.routes = append(p.routes, route{method: m, prefix: path})
	if m == http.MethodGet {
		p.routes = append(p.routes, route{method: http.MethodHead, prefix: path})
	}
	return ""
}

// token reports whether m is an HTTP token (RFC 9110 section 5.6.2).
func token(m string) bool {
	if m == "" {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
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

// errPath is the error of a request whose path falls under one policy as
// sent and under another cleaned.
var errPath = errors.New("httplimit: the path, as sent and cleaned, matches two policies")

// policyFor returns the first policy that matches r, or nil. A path that
// is not clean is matched both as sent (what a router that cleans nothing
// serves) and cleaned (what ServeMux serves, and http.FileServer, even
// where ServeMux passes it on as sent: a CONNECT, an escaped dot): it
// falls under the policy either form matches, and is errPath if they
// match two.
func (l *Limiter) policyFor(r *http.Request) (*policy, error) {
	p := l.first(r.Method, r.URL.Path)
	c := cleanPath(r.URL.Path)
	if c == r.URL.Path {
		return p, nil
	}
	switch q := l.first(r.Method, c); {
	case p == nil || p == q:
		return q, nil
	case q == nil:
		return p, nil
	}
	return p, errPath
}

// first returns the first policy that matches method and path, or nil.
func (l *Limiter) first(method, path string) *policy {
	for _, p := range l.policies {
		if p.match(method, path) {
			return p
		}
	}
	return nil
}

// cleanPath is p as ServeMux cleans it: path.Clean, keeping a trailing
// slash. A path with no "//" and no "/." is clean and returned as it is,
// at no cost; so is the empty path and one not rooted ("*"), which no
// prefix route matches.
func cleanPath(p string) string {
	if p == "" || p[0] != '/' || !strings.Contains(p, "//") && !strings.Contains(p, "/.") {
		return p
	}
	c := path.Clean(p)
	if p[len(p)-1] == '/' && c != "/" {
		c += "/"
	}
	return c
}

// match reports whether the policy applies to method and path.
func (p *policy) match(method, path string) bool {
	if len(p.routes) == 0 {
		return true
	}
	for i := range p.routes {
		if p.routes[i].match(method, path) {
			return true
		}
	}
	return false
}

// match reports whether rt holds method and path. Methods compare without
// regard to case: a "get" that a handler serves as GET is limited as GET.
func (rt *route) match(method, path string) bool {
	if rt.method != "" && !strings.EqualFold(rt.method, method) {
		return false
	}
	if rt.prefix == "" {
		return true
	}
	if !strings.HasPrefix(path, rt.prefix) {
		return false
	}
	return len(path) == len(rt.prefix) || rt.prefix[len(rt.prefix)-1] == '/' || path[len(rt.prefix)] == '/'
}

// take takes n at now from the client's limiter in the table. An address
// and a string are keys of the table's own kinds, which it keeps apart; a
// joined key is a string of a third form: a marker and the key's hash
// under the policy's seed, its IPv6 address cut to the prefix. No other
// string key names that limiter unless it guesses the seeded hash.
func (p *policy) take(k *keypart.Key, now, n int64) (limit.Result, limit.Receipt, error) {
	switch k.Kind {
	case keypart.Addr:
		return p.table.TakeAddrAt(k.Cut(), now, n)
	case keypart.String:
		return p.table.TakeAt(k.S, now, n)
	}
	var h maphash.Hash
	h.SetSeed(p.seed)
	if k.Addr.IsValid() {
		b, n := k.AddrBytes()
		h.WriteByte(byte(n))
		h.Write(b[:n])
	}
	h.WriteString(k.S)
	var b [10]byte
	b[0], b[1] = 0xff, 'J'
	binary.LittleEndian.PutUint64(b[2:], h.Sum64())
	return p.table.TakeAt(string(b[:]), now, n)
}

// parts returns the parts of k: a clientkey.Key is a struct whose only
// field is a keypart.Key (sizeOK checks that they have one size).
func parts(k *clientkey.Key) *keypart.Key { return (*keypart.Key)(unsafe.Pointer(k)) }

// sizeOK fails to compile unless the two types have one size.
var _ = [1]struct{}{}[unsafe.Sizeof(clientkey.Key{})-unsafe.Sizeof(keypart.Key{})]
