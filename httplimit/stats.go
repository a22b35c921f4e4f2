package httplimit

import (
	"expvar"

	"github.com/cellrate/cellrate/keyed"
)

// Stats are one policy's counts since New, each read on its own (see
// striped.Counter's Load): they add up once the requests they count have
// been decided.
type Stats struct {
	// Policy is the policy's name.
	Policy string
	// Admitted and Denied count the requests decided.
	Admitted, Denied int64
	// Errors counts requests the error handler answered (a client that
	// could not be named, a cost out of range); Unnamed counts those
	// WithFailOpen let through unlimited.
	Errors, Unnamed int64
	// Clients is the per-client table's Stats (zero without a Client
	// limit).
	Clients keyed.Stats
}

// Stats returns each policy's counts, in the policies' order.
func (l *Limiter) Stats() []Stats {
	out := make([]Stats, len(l.policies))
	for i, p := range l.policies {
		out[i] = Stats{Policy: p.name, Admitted: p.admitted.Load(), Denied: p.denied.Load(),
			Errors: p.errored.Load(), Unnamed: p.unnamed.Load()}
		if p.table != nil {
			out[i].Clients = p.table.Stats()
		}
	}
	return out
}

// Var returns an expvar.Var whose value is the JSON object of Stats by
// policy name, for expvar.Publish (httplimit publishes nothing itself):
//
//	expvar.Publish("httplimit", lim.Var())
func (l *Limiter) Var() expvar.Var {
	return expvar.Func(func() any {
		m := make(map[string]Stats, len(l.policies))
		for _, s := range l.Stats() {
			m[s.Policy] = s
		}
		return m
	})
}
