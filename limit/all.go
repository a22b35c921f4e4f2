package limit

import "reflect"

// All is the all-or-nothing AND of Members: a request is admitted only if
// every member admits it, and then it has taken n from each. Typical uses are
// a per-key limit and a global limit, or a hierarchy of buckets (a user's, its
// tenant's, the service's). A key of a keyed.Table is a Member through a
// small wrapper that holds the key (keyed's ExampleTable_TakeAt).
//
// A decision asks the members in order. When one denies (or refuses n), the
// members before it that admitted are refunded at once, from their Receipts,
// before All returns. So no member keeps units for a request All denied, as
// far as the member's Refund is exact (see Member), and each member's own
// bound holds over the admissions it made: All adds no way past a member's
// bound. Put the member that many callers share (the global one) last: the
// last member is never refunded, and a refund is exact for every member
// when no other caller was admitted by that member in between, which is rare
// for a per-key limit.
//
// All is not atomic across members: between the first member's admission
// and a refund, another caller can see the units taken and be denied by that
// member. That caller is then denied by a member that, a moment later, has
// the units again; it never gets more than the member's bound allows.
//
// All is safe for concurrent use if its members are. It holds no state of
// its own, only its members: a copy asks the same members. The zero All has
// no members and, failing safe, admits nothing: it refuses every n > 0 with
// ErrCostExceedsBurst, as a limiter of burst 0 does; make one with NewAll.
type All struct {
	ms []Member
}

// NewAll returns the composition of the members, in the order they are
// asked. It returns a *ParamError for no members (Param "members") or a nil
// member, a nil interface or a nil pointer (Param "member", Value its index).
func NewAll(members ...Member) (*All, error) {
	if len(members) == 0 {
		return nil, &ParamError{Pkg: "limit", Param: "members", Value: 0, Min: 1}
	}
	for i, m := range members {
		if isNil(m) {
			return nil, &ParamError{Pkg: "limit", Param: "member", Value: i, Reason: "member is nil"}
		}
	}
	return &All{ms: append([]Member(nil), members...)}, nil
}

// AllowAt reports whether one unit may be taken at now from every member,
// and takes it from each if so.
func (a *All) AllowAt(now int64) bool {
	r, _ := a.AllowNAt(now, 1)
	return r.OK
}

// AllowNAt takes n units at now from every member if every member admits
// them, else from none. When all admit, the Result is OK with the least
// Remaining among the members. Otherwise it is the Result and the error of
// the first member that denied or refused n, after the members before it
// were refunded: its RetryAfter is that member's, a lower bound on the
// composition's wait.
//
// An n above some member's burst is refused with that member's
// ErrCostExceedsBurst when the members before it admit n; if one of them
// denies first, All returns that denial, and a retry gets the error. Put the
// member with the smallest burst first to always get the error at once (a
// per-key limit before a global one does both).
func (a *All) AllowNAt(now, n int64) (Result, error) {
	if len(a.ms) == 0 {
		switch {
		case n < 0:
			return Result{RetryAfter: Never}, ErrNegativeCost
		case n > 0:
			return Result{RetryAfter: Never}, ErrCostExceedsBurst
		}
		return Result{OK: true}, nil
	}
	return a.take(0, now, n)
}

// take asks members i on and, if any denies, refunds member i before it
// returns; the recursion keeps each Receipt on the stack, so a decision
// allocates nothing for any number of members.
func (a *All) take(i int, now, n int64) (Result, error) {
	r, rc, err := a.ms[i].TakeAt(now, n)
	if !r.OK || err != nil || i == len(a.ms)-1 {
		return r, err
	}
	rest, err := a.take(i+1, now, n)
	if !rest.OK || err != nil {
		a.ms[i].Refund(rc)
		return rest, err
	}
	rest.Remaining = min(rest.Remaining, r.Remaining)
	return rest, nil
}

// isNil reports whether m is nil or holds a nil pointer, which would panic
// at the first decision.
func isNil(m Member) bool {
	v := reflect.ValueOf(m)
	return m == nil || v.Kind() == reflect.Pointer && v.IsNil()
}
