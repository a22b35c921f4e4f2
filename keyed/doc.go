// Package keyed limits each of millions of keys (client addresses, API
// keys, account names) on its own, in one fixed-size, lock-free table: give
// it a rate and a burst (New) or a sliding window (NewWindow), then call
// Allow with a key for each request. Memory is chosen at construction (24
// bytes a slot) and never grows, whatever keys arrive. Use it in front of
// login forms and public APIs; for one limiter, use package gcra. See the
// Example.
//
// # Contract
//
// Each key is held to its own limiter's exact bound, on any schedule of
// times and goroutines, whatever other keys do, with no term for keys that
// lost their slot: for New, the admitted units whose times lie in any
// closed interval of length d are at most burst + events*d/period (package
// gcra's bound, exact to the nanosecond); for NewWindow, at most
// limit*(ceil(d/window)+1) (package packed64's window). A table may deny
// more than a key's own limiter would, never admit more.
//
// When a new key finds every slot of its two groups held by keys that
// still owe something, by default it takes the slot of the one
// that owes most and keeps what it owes in a sketch of fixed size; a key
// that comes back owes at least its own debt. A key that shares both of
// its sketch registers with other evicted keys' debts starts owing the
// least of them: an innocent key can be delayed by a flood of other keys
// that do not fit the table, never admitted early. While the keys that owe
// something fit the table, only keys that owed nothing lose their slots,
// and no key is delayed that way (see below). Under a flood far larger
// than the table, most keys that lose their slot are delayed, each time
// until up to a burst (a window: two windows) past the latest time the
// table decided at; while the flood lasts it keeps the registers that far
// ahead, so a key that loses its slot between its requests (one asking
// once a token time, say) can be denied for as long as the flood lasts.
// With WithRefuse a new key that finds no idle slot is denied with ErrFull
// instead, and a key whose idle slot was reused is denied for as long as
// its groups stay busy.
//
// A key never seen before is denied only by the sketch, that is only for
// other keys' debts, and not while the keys that owed something in the
// last 10ms fill at most about half the table (a slot is reused as idle
// only once its key has owed nothing for 10ms; fuller, a key can find all
// its candidate slots busy and take one whose key still owes): under the plain forms (Allow, AllowN, ...), which
// read the table's clock after consulting the sketch, with any number of
// goroutines, as long as the clock never goes back; under the ...At forms,
// which decide at the time given, as long as no time given is more than
// 10ms older than one given before it.
//
// A key is its hash (hash/maphash under seeds made at random for each
// table, so keys chosen by a client cannot be aimed at one group): keys of
// different kinds (strings and byte slices, numbers, addresses) are hashed
// under different seeds and never share a limiter; two keys of one kind
// share one with probability about 2^-63 per pair.
//
// The zero Table has no slots: it denies every request, its N and Take
// forms returning ErrFull. Times are int64 nanoseconds on a fixed-origin
// clock (package nanotime); every wait (RetryAfter) saturates at
// limit.Never.
//
// # How it works
//
// A table is an array of 16-byte slots in groups of four, one group to a
// 64-byte cache line. A slot is one atomic128 pair: the key's 64-bit tag
// and its limiter's state word, for New a GCRA's theoretical arrival time
// (TAT), for NewWindow a packed64 window word. Claiming a slot, deciding on
// it and giving it to another key are compare-and-swaps of the whole pair,
// so each is atomic with the state. A key may live in two groups found from
// its hash; a new key takes an empty slot, else an idle one (a key that
// owes nothing, whose state decides as a fresh one would), else (unless
// WithRefuse) the slot of the key that owes most, whose debt (its TAT, or the end of
// its window's count) first goes to the sketch.
//
// The sketch is one max-register a slot; a key has two, chosen by
// independent hashes of its tag. A key new to the table starts from the
// least of its registers: a GCRA at that TAT, a window counting its whole
// limit in the two windows that end at that time. A key whose slot was taken had both of its registers
// raised to its debt before the slot went, so its new limiter owes at least
// what the old one did and its admissions continue the old ones' under the
// same bound. The bound's proof only uses, for a GCRA, that its TAT rises
// by at least the cost of each admission and is at most burst ahead of it;
// for a window, that each of its windows counts at least the units
// admitted in it. A debt in the past is no debt, so registers expire by
// time alone.
//
// A new key is placed in two steps, taking a slot and then deciding in it, so
// that concurrent first decisions on one key never leave it in two slots; the
// decision reads the sketch after making sure no other slot holds the key.
package keyed
