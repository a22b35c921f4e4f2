package httplimit

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/cellrate/cellrate/gcra"
	"github.com/cellrate/cellrate/keyed"
	"github.com/cellrate/cellrate/limit"
	"github.com/cellrate/cellrate/striped"
)

type policy struct {
	name     string
	methods  []string // upper case; with HEAD when GET is there
	prefix   string
	cost     int64
	costFunc func(*http.Request) int64
	key      KeyFunc
	v6bits   int
	seeds    [3]maphash.Seed // per key kind: kinds never hash alike
	table    *keyed.Table
	global   *gcra.Limiter
	gparams  gcra.Params
	client   limitSpec
	gl       limitSpec
	fields   fields

	admitted, denied, errored, unnamed striped.Counter
}

func newPolicy(i int, ps Policy, c *config) (*policy, error) {
	field := "policies[" + strconv.Itoa(i) + "]."
	perr := func(param string, v any, reason string) error {
		return &limit.ParamError{Pkg: "httplimit", Param: field + param, Value: v, Reason: reason}
	}
	if ps.Name == "" || !printable(ps.Name) {
		return nil, perr("Name", ps.Name, "a name is printable ASCII, not empty")
	}
	if !ps.Client.set() && !ps.Global.set() {
		return nil, perr("Client", ps.Client, "a policy needs a Client or a Global limit")
	}
	if ps.Cost < 0 {
		return nil, perr("Cost", ps.Cost, "a cost is not negative")
	}
	p := &policy{name: ps.Name, prefix: ps.PathPrefix, cost: max(ps.Cost, 1), costFunc: ps.CostFunc,
		key: ps.Key, v6bits: c.v6bits}
	if p.key == nil {
		p.key = c.key
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
	for k := range p.seeds {
		p.seeds[k] = maphash.MakeSeed()
	}
	if err := p.limits(ps, field); err != nil {
		return nil, err
	}
	if b := min(burstOr(ps.Client), burstOr(ps.Global)); ps.Cost > b {
		return nil, &limit.ParamError{Pkg: "httplimit", Param: field + "Cost", Value: ps.Cost, Min: int64(0), Max: b,
			Reason: "a cost above a limit's burst is never admitted"}
	}
	p.fields = newFields(p)
	return p, nil
}

// limits builds the policy's client table and global limiter.
func (p *policy) limits(ps Policy, field string) error {
	var err error
	if ps.Client.set() {
		if p.table, err = keyed.New(ps.Client.Events, ps.Client.Period, ps.Client.Burst, ps.Table...); err != nil {
			return restamp(err, field+"Client.")
		}
		if p.client, err = spec(ps.Client, ps.Name, field+"Client.", clientToken(ps.Client)); err != nil {
			return err
		}
	}
	if ps.Global.set() {
		if p.global, err = gcra.New(ps.Global.Events, ps.Global.Period, ps.Global.Burst); err != nil {
			return restamp(err, field+"Global.")
		}
		p.gparams = p.global.Params()
		if p.gl, err = spec(ps.Global, ps.Name+"-global", field+"Global.", nominal(ps.Global)); err != nil {
			return err
		}
		if p.table != nil && p.gl.name == p.client.name {
			return &limit.ParamError{Pkg: "httplimit", Param: field + "Global.Name", Value: p.gl.name,
				Reason: "the two limits of a policy need different names"}
		}
	}
	return nil
}

// nominal is the ns a token of l takes: gcra refills exactly so.
func nominal(l Limit) float64 { return float64(l.Period) / float64(l.Events) }

// clientToken is the most ns a token of a client's limit takes, as keyed
// rounds it: the longer of the nominal time and what a scratch table makes
// a key wait for one token, and for a whole burst, after spending it.
func clientToken(l Limit) float64 {
	tok := nominal(l)
	t, err := keyed.New(l.Events, l.Period, l.Burst, keyed.WithCapacity(4))
	if err != nil {
		return tok
	}
	const at = 1 << 40
	for _, n := range []int64{1, l.Burst} {
		k := uint64(n) // a fresh key for each
		t.TakeUint64At(k, at, l.Burst)
		if r, _, err := t.TakeUint64At(k, at, n); err == nil && !r.OK {
			tok = max(tok, float64(r.RetryAfter)/float64(n))
		}
	}
	return tok
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

// burstOr returns l's burst, or the most an int64 holds for no limit.
func burstOr(l Limit) int64 {
	if !l.set() {
		return math.MaxInt64
	}
	return l.Burst
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

// hash is the key's 64-bit name in the policy's client table (which
// hashes it again, with its own seed): an IPv4 address is its 32 bits
// under a tag, with no hash to compute; every other kind of key is hashed
// with a seed of its own, an IPv6 address as its prefix.
func (p *policy) hash(k Key) uint64 {
	switch {
	case k.kind == addrKey && k.addr.Is4():
		b := k.addr.As4()
		return ipv4Tag | uint64(binary.BigEndian.Uint32(b[:]))
	case k.kind == addrKey:
		b, n := p.addrBytes(k.addr)
		return maphash.Bytes(p.seeds[0], b[:n])
	case k.kind == stringKey:
		return maphash.String(p.seeds[1], k.s)
	}
	var h maphash.Hash
	h.SetSeed(p.seeds[2])
	if k.addr.IsValid() {
		b, n := p.addrBytes(k.addr)
		h.WriteByte(byte(n))
		h.Write(b[:n])
	}
	h.WriteString(k.s)
	return h.Sum64()
}

// ipv4Tag marks an IPv4 address's name; a hashed key takes it too only as
// any two 64-bit hashes collide.
const ipv4Tag = 0x4a5f_1c00_0000_0000

// addrBytes returns 4 bytes for IPv4 and 16 for IPv6 (the prefix, zero
// beyond it), so no IPv4 address hashes as an IPv6 prefix.
func (p *policy) addrBytes(a netip.Addr) ([16]byte, int) {
	if a.Is4() {
		b4 := a.As4()
		var b [16]byte
		copy(b[:], b4[:])
		return b, 4
	}
	b := a.As16()
	full, part := p.v6bits/8, p.v6bits%8
	if full < 16 {
		b[full] &= ^byte(0xff >> part)
		clear(b[full+1:])
	}
	return b, 16
}
