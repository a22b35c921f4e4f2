package httplimit

import (
	"github.com/cellrate/cellrate/keyed"
)

// Stats are one policy's counts since New, each read on its own: they add
// up once the requests they count have been decided. Limiter.Stats' map
// is JSON for expvar as it is:
//
//	expvar.Publish("httplimit", expvar.Func(func() any { return lim.Stats() }))
type Stats struct {
	// Admitted and Denied count the requests decided, Denied those a cap
	// on requests in flight denied too (the deny handler tells them by
	// Decision.Limit).
	Admitted, Denied int64
	// Errors counts requests handed to the error handler (a client that
	// could not be named, a cost out of range), answered or let through.
	Errors int64
	// Clients is the per-client table's Stats (zero without a Client
	// limit).
	Clients keyed.Stats
}

// Stats returns each policy's counts by its name (none for the zero
// Limiter).
func (l *Limiter) Stats() map[string]Stats {
	if l == nil || len(l.policies) == 0 {
		return nil
	}
	out := make(map[string]Stats, len(l.policies))
	for _, p := range l.policies {
		s := Stats{Admitted: p.admitted.Load(), Denied: p.denied.Load(), Errors: p.errored.Load()}
		if p.table != nil {
			s.Clients = p.table.Stats()
		}
		out[p.name] = s
	}
	return out
}
