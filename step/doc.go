// Package step holds the pure decision steps cellrate's limiters run, for
// authors of other limiters and stores: a step takes a limiter's packed state,
// the time and a cost, and returns the next state and the decision, with no
// atomics, no clock and no allocation. Keep the state where you like (a
// variable, a map, a database row, another CAS) and store the next state only
// when the decision changed it. See ExampleGCRA_Step.
//
// Most users want a limiter, not a step: package gcra, bucket or packed64
// runs these same steps in lock-free cells, keyed and httplimit in tables.
//
// # Contract
//
// Each step decides exactly as its package's limiter does on the same state,
// time and cost (that package's doc states the bound), so a state stepped
// anywhere keeps that bound if each next state is stored only over the state
// it was computed from (a compare-and-swap, a transaction, one goroutine). A
// denial returns the state unchanged. Time is int64 nanoseconds on a clock of
// your choice, the same for every step of one state; the zero state of each
// kind is a full limiter at any time. Constructors validate as the limiters'
// do and return a *limit.ParamError naming the parameter; the zero parameters
// of each kind admit nothing.
package step
