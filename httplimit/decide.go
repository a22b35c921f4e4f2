package httplimit

import (
	"math"
	"net/http"
	"time"

	"github.com/cellrate/cellrate/concurrency"
	"github.com/cellrate/cellrate/httplimit/clientkey"
	"github.com/cellrate/cellrate/httplimit/internal/keypart"
	"github.com/cellrate/cellrate/limit"
)

type outcome int

const (
	serve    outcome = iota
	denied           // the deny handler answers
	answered         // the error handler has answered
)

// decide fills d with the request's Decision and returns what to do with
// it, with the response's fields set.
func (l *Limiter) decide(w http.ResponseWriter, r *http.Request, d *Decision, h *hold) outcome {
	p, err := l.policyFor(r)
	if err != nil {
		return l.fail(w, r, p, err)
	}
	if p == nil {
		return serve
	}
	d.Key, err = p.key(r) // d is the deny handler's only after a decision
	k := parts(&d.Key)
	if err == nil && k.Kind == keypart.None {
		err = clientkey.ErrNoKey
	}
	if err != nil {
		return l.fail(w, r, p, err)
	}
	cost := int64(1)
	if p.cost != nil {
		cost = p.cost(r)
	}
	now := l.cfg.clock()
	d.Policy = p.name
	if (p.flights != nil || p.inFlight != nil) && !p.takeFlight(h, k, now) {
		p.denied.Add(1)
		d.RetryAfter, d.reset = time.Second, 1
		p.fields.busy(w.Header())
		return denied
	}
	var v verdict
	err = p.admit(&v, k, now, cost)
	if (!v.ok || err != nil) && h.held() {
		h.release(concurrency.Ignored)
	}
	if err != nil {
		return l.fail(w, r, p, err)
	}
	if p.table == nil && p.global == nil {
		p.admitted.Add(1)
		return serve
	}
	if v.ok {
		p.admitted.Add(1)
		s := p.report(&v, d)
		if l.cfg.admitHdrs {
			p.fields.admitted(w.Header(), s, d, l.cfg.legacy)
		}
		return serve
	}
	p.denied.Add(1)
	s := p.explain(&v, now, cost, d)
	p.fields.denied(w.Header(), s, d, l.cfg.legacy)
	return denied
}

// fail counts a request that cannot be decided and hands it to the error
// handler, which answers it or has it served unlimited.
func (l *Limiter) fail(w http.ResponseWriter, r *http.Request, p *policy, err error) outcome {
	p.errored.Add(1)
	if l.cfg.onErr(w, r, err) {
		return serve
	}
	return answered
}

// verdict is one decision over the policy's limits: each limit's Result,
// when it was asked.
type verdict struct {
	ok             bool
	client, global limit.Result
	askedC, askedG bool
}

// admit takes n at now from the client's limit and then the global one if
// both admit it, else from neither: the all-or-nothing decision of
// limit.All, with the shared limit last so that it is never refunded.
func (p *policy) admit(v *verdict, k *keypart.Key, now, n int64) error {
	var rc limit.Receipt
	var err error
	v.ok = true
	if p.table != nil {
		v.client, rc, err = p.take(k, now, n)
		v.askedC = true
		if err != nil || !v.client.OK {
			v.ok = false
			return err
		}
	}
	if p.global != nil {
		v.global, err = p.global.allowNAt(now, n)
		v.askedG = true
		if err != nil || !v.global.OK {
			v.ok = false
			if p.table != nil {
				p.table.Refund(rc)
				v.client.Remaining += n // given back, exactly
			}
			return err
		}
	}
	return nil
}

// report fills an admitted Decision from the limit with the fewest units
// left, and returns it.
func (p *policy) report(v *verdict, d *Decision) *limitSpec {
	s, rem := &p.gl, v.global.Remaining
	if v.askedC && (!v.askedG || v.client.Remaining <= v.global.Remaining) {
		s, rem = &p.client, v.client.Remaining
	}
	d.Limit, d.remaining = s.name, max(rem, 0)
	d.reset = s.fullIn(s.quota - d.remaining)
	return s
}

// explain fills a denied Decision: the wait is the longest of the limits'
// waits at now (a client limit that denies leaves the global one unasked,
// so it is read here by a pure step that takes nothing), the limit named
// is the one that waits longest (the client's on a tie), and Remaining the
// least any limit holds, since the denial took nothing.
func (p *policy) explain(v *verdict, now, n int64, d *Decision) *limitSpec {
	var s *limitSpec
	wait, rem := time.Duration(0), int64(math.MaxInt64)
	if p.table != nil {
		s, wait, rem = &p.client, v.client.RetryAfter, v.client.Remaining
	}
	if p.global != nil {
		g := v.global
		if !v.askedG {
			g = p.global.peek(now, n)
			if g.OK {
				g.Remaining += n // what the step would have taken is still there
			}
		}
		rem = min(rem, g.Remaining)
		if s == nil || g.RetryAfter > wait {
			s, wait = &p.gl, g.RetryAfter
		}
	}
	d.Limit, d.remaining = s.name, max(rem, 0)
	d.RetryAfter = wait
	d.reset = retrySeconds(wait)
	return s
}
