package httplimit

import (
	"encoding/binary"
	"errors"
	"hash/maphash"

	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/cellrate/cellrate/concurrency"
	"github.com/cellrate/cellrate/internal/gcrastep"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/striped"
)

type policy struct {
	name     string
	methods  []string // upper case; with HEAD when GET is there
	prefix   string
	cost     func(*http.Request) int64 // nil: 1
	key      KeyFunc
	v6bits   int
	seed     maphash.Seed // of joined keys
	table    *keyed.Table
	global   *globalLimit
	client   limitSpec
	gl       limitSpec
	fields   fields
	flights  *flights             // per-client requests in flight, if capped
	inFlight *concurrency.Limiter // all clients' requests in flight, if capped

	admitted, denied, busy, errored, unnamed striped.Counter
}

func newPolicy(i int, ps Policy, c *config) (*policy, error) {
	field := "policies[" + strconv.Itoa(i) + "]."
	perr := func(param string, v any, reason string) error {
		return &limit.ParamError{Pkg: "httplimit", Param: field + param, Value: v, Reason: reason}
	}
	if ps.Name == "" || !printable(ps.Name) {
		return nil, perr("Name", ps.Name, "a name is printable ASCII, not empty")
	}
	if !ps.Client.set() && !ps.Global.set() && ps.ClientInFlight == 0 && ps.InFlight == nil {
		return nil, perr("Client", ps.Client, "a policy needs a Client or a Global limit, or a cap on requests in flight")
	}
	if ps.ClientInFlight < 0 {
		return nil, perr("ClientInFlight", ps.ClientInFlight, "a cap is not negative")
	}
	p := &policy{name: ps.Name, prefix: ps.PathPrefix, cost: ps.Cost,
		key: ps.Key, v6bits: c.v6bits}
	if p.key == nil {
		p.key = PeerAddr
	}
	for j, m := range ps.Methods {
		if !token(m) {
			return nil, perr("Methods["+strconv.Itoa(j)+"]", m, "a method is a token (RFC 9110): letters, digits and !#$%&'*+-.^_`|~")
		}
		p.methods = append(p.methods, strings.ToUpper(m))
		if strings.EqualFold(m, http.MethodGet) {
			p.methods = append(p.methods, http.MethodHead)
		}
	}
	if p.prefix == "/" {
		p.prefix = ""
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
func (p *policy) limits(ps Policy, field string) error {
	var err error
	if ps.Client.set() {
		opts := append(append([]keyed.Option(nil), ps.Table...), keyed.WithIPv6Prefix(p.v6bits))
		if p.table, err = keyed.New(ps.Client.Events, ps.Client.Period, ps.Client.Burst, opts...); err != nil {
			return restamp(err, field+"Client.")
		}
		if p.client, err = spec(ps.Client, ps.Name, field+"Client."); err != nil {
			return err
		}
	}
	if ps.Global.set() {
		gp, err := gcrastep.NewParams(ps.Global.Events, ps.Global.Period, ps.Global.Burst)
		if err != nil {
			return restamp(err, field+"Global.")
		}
		p.global = &globalLimit{ps: gp}
		if p.gl, err = spec(ps.Global, ps.Name+"-global", field+"Global."); err != nil {
			return err
		}
		if p.table != nil && p.gl.name == p.client.name {
			return &limit.ParamError{Pkg: "httplimit", Param: field + "Global.Name", Value: p.gl.name,
				Reason: "the two limits of a policy need different names"}
		}
	}
	return nil
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

// match reports whether the policy applies to r. Methods compare without
// regard to case: a "get" that a handler serves as GET is limited as GET.
func (p *policy) match(r *http.Request) bool {
	if len(p.methods) > 0 {
		found := false
		for _, m := range p.methods {
			if strings.EqualFold(m, r.Method) {
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

// take takes n at now from the client's limiter in the table. An address
// and a string are keys of the table's own kinds, which it keeps apart; a
// joined key is a string of a third form: a marker and the key's hash
// under the policy's seed, its IPv6 address cut to the prefix. No other
// string key names that limiter unless it guesses the seeded hash.
func (p *policy) take(k *Key, now, n int64) (limit.Result, limit.Receipt, error) {
	switch k.kind {
	case addrKey:
		return p.table.TakeAddrAt(k.addr, now, n)
	case stringKey:
		return p.table.TakeAt(k.s, now, n)
	}
	var h maphash.Hash
	h.SetSeed(p.seed)
	if k.addr.IsValid() {
		b, n := addrBytes(k.addr, p.v6bits)
		h.WriteByte(byte(n))
		h.Write(b[:n])
	}
	h.WriteString(k.s)
	var b [10]byte
	b[0], b[1] = 0xff, 'J'
	binary.LittleEndian.PutUint64(b[2:], h.Sum64())
	return p.table.TakeAt(string(b[:]), now, n)
}

// addrBytes returns 4 bytes for IPv4 and 16 for IPv6 (the first v6bits,
// zero beyond them), so no IPv4 address hashes as an IPv6 prefix.
func addrBytes(a netip.Addr, v6bits int) ([16]byte, int) {
	if a.Is4() {
		b4 := a.As4()
		var b [16]byte
		copy(b[:], b4[:])
		return b, 4
	}
	b := a.As16()
	full, part := v6bits/8, v6bits%8
	if full < 16 {
		b[full] &= ^byte(0xff >> part)
		clear(b[full+1:])
	}
	return b, 16
}
