package clientkey

import (
	"errors"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/cellrate/cellrate/httplimit/internal/keypart"
	"github.com/cellrate/cellrate/internal/netaddr"
	"github.com/cellrate/cellrate/limit"
)

// Key names a client: an address, a string (an API key, a user id), or
// several of these joined (Join). Keys of different kinds never name the
// same client: the address 65.66.67.68 and the string "ABCD" are two
// clients. An IPv6 address names its /64 (see IPv6Prefix). The zero Key
// names no client: a request whose Func returns it is refused with
// ErrNoKey.
type Key struct{ p keypart.Key }

// defaultBits is the IPv6 prefix that names a client unless IPv6Prefix
// says otherwise: one client usually owns a whole /64.
const defaultBits = 64

// ErrNoKey is the error for a request whose client has no key: a Func
// returned the zero Key, String(""), or ErrNoKey itself. First passes over
// it to its next Func; package httplimit handles it as any Func error, and
// never puts keyless requests under one shared limit.
var ErrNoKey = errors.New("clientkey: the request has no client key")

// Addr returns the key of a client address. An IPv6 address that carries
// an IPv4 one is that IPv4 address: IPv4-mapped, 6to4 (2002::/16, whose
// /48 one IPv4 host owns), Teredo (2001::/32) and NAT64's 64:ff9b::/96.
// The zone is ignored. The invalid Addr is no key.
func Addr(a netip.Addr) Key {
	if a.Is4() { // neither mapped nor zoned: the common key, at no cost
		return Key{keypart.Key{Addr: a, Kind: keypart.Addr}}
	}
	if !a.IsValid() {
		return Key{}
	}
	a = netaddr.Carried4(a.Unmap().WithZone(""))
	if a.Is4() {
		return Key{keypart.Key{Addr: a, Kind: keypart.Addr}}
	}
	return Key{keypart.Key{Addr: a, Kind: keypart.Addr, Bits: defaultBits}}
}

// String returns the key of a client named by a string; the empty string
// is no key (see ErrNoKey).
func String(s string) Key {
	if s == "" {
		return Key{}
	}
	return Key{keypart.Key{S: s, Kind: keypart.String}}
}

// String returns the key in text: an address, the string, or a joined
// key's parts joined by "+", each string part quoted. The first IPv6
// address is printed whole, as the request gave it, though the client it
// names is its prefix (two addresses of one /64 print apart and share one
// limit); each IPv6 address after it is printed as its prefix
// ("2001:db8::/64").
func (k Key) String() string {
	switch k.p.Kind {
	case keypart.Addr:
		return k.p.Addr.String()
	case keypart.Joined:
		if k.p.Addr.IsValid() {
			return strings.Replace(k.p.S, "\x00", k.p.Addr.String(), 1)
		}
	}
	return k.p.S
}

// A Func returns the key of the client that sent r, or an error when the
// client cannot be named. Package httplimit refuses such a request unless
// its error handler says otherwise.
type Func func(r *http.Request) (Key, error)

// Join returns a Func whose key joins the keys of fs, in order: a client
// is one value of every part, as an address and a route. Each IPv6
// address part names its prefix, as it does alone, the first one's set by
// an IPv6Prefix around Join, any other's by one around its part. An error
// or no key from any part is the joined Func's error.
func Join(fs ...Func) Func {
	fs = append([]Func(nil), fs...)
	return func(r *http.Request) (Key, error) {
		var j keypart.Key
		var b []byte
		for i, f := range fs {
			k, err := f(r)
			if err == nil && k.p.Kind == keypart.None {
				err = ErrNoKey
			}
			if err != nil {
				return Key{}, err
			}
			if i > 0 {
				b = append(b, '+')
			}
			b = joinPart(&j, b, &k.p)
		}
		if len(fs) == 0 {
			return Key{}, ErrNoKey
		}
		j.S, j.Kind = string(b), keypart.Joined
		return Key{j}, nil
	}
}

// joinPart appends the part k to the joined key j, whose text is b, and
// returns the text. j's address is the first address part, kept whole
// with its prefix (IPv6Prefix may still change it); any other address is
// text, cut to its own prefix, so that no part of a joined key names less
// than its prefix does alone.
func joinPart(j *keypart.Key, b []byte, k *keypart.Key) []byte {
	switch {
	case k.Addr.IsValid() && !j.Addr.IsValid():
		j.Addr, j.Bits = k.Addr, k.Bits
		if k.Kind == keypart.Joined {
			return append(b, k.S...) // its marker is j's now
		}
		return append(b, 0) // where the address goes in String
	case k.Kind == keypart.String:
		return strconv.AppendQuote(b, k.S)
	case k.Kind == keypart.Addr:
		return appendPrefix(b, k)
	case k.Addr.IsValid(): // a joined key's address, as text where its marker is
		before, after, _ := strings.Cut(k.S, "\x00")
		return append(appendPrefix(append(b, before...), k), after...)
	}
	return append(b, k.S...)
}

// appendPrefix appends the address that names k's client: an IPv4
// address, or an IPv6 prefix ("2001:db8::/64").
func appendPrefix(b []byte, k *keypart.Key) []byte {
	b = k.Cut().AppendTo(b)
	if k.Addr.Is4() {
		return b
	}
	return strconv.AppendUint(append(b, '/'), uint64(k.Bits), 10)
}

// First returns a Func whose key is the first of fs to name the client: an
// fs[i] that returns ErrNoKey (or no key) passes to fs[i+1]; any other
// error is First's error. First(Header("X-Api-Key"), Peer) keys a request
// by its API key, else by its address.
func First(fs ...Func) Func {
	fs = append([]Func(nil), fs...)
	return func(r *http.Request) (Key, error) {
		for _, f := range fs {
			k, err := f(r)
			if errors.Is(err, ErrNoKey) || err == nil && k.p.Kind == keypart.None {
				continue
			}
			return k, err
		}
		return Key{}, ErrNoKey
	}
}

// Header returns a Func whose key is the string value of the request
// header name (its first value), and ErrNoKey when it is absent or empty.
// A value a client invents is a new client, with a full limit: key by a
// header only once it is checked, or put the route behind a limit by
// address too.
func Header(name string) Func {
	name = http.CanonicalHeaderKey(name)
	return func(r *http.Request) (Key, error) {
		if v := r.Header[name]; len(v) > 0 && v[0] != "" {
			return String(v[0]), nil
		}
		return Key{}, ErrNoKey
	}
}

// IPv6Prefix returns f with the IPv6 address it names a client by (alone
// or as a joined key's first address) standing for the prefix of its
// leading bits, in [1, 128], instead of its /64: 48 makes a whole site one
// client, 128 each address. It returns a *limit.ParamError for bits out of range.
func IPv6Prefix(bits int, f Func) (Func, error) {
	if bits < 1 || bits > 128 {
		return nil, &limit.ParamError{Pkg: "clientkey", Param: "bits", Value: bits, Min: 1, Max: 128}
	}
	if f == nil {
		return nil, &limit.ParamError{Pkg: "clientkey", Param: "f", Value: f, Reason: "the Func must not be nil"}
	}
	return func(r *http.Request) (Key, error) {
		k, err := f(r)
		if err == nil && k.p.Addr.IsValid() && !k.p.Addr.Is4() {
			k.p.Bits = uint8(bits)
		}
		return k, err
	}, nil
}
