// Package keyed holds millions of per-key rate limiters (per client
// address, API key, user) in one fixed-size, lock-free table: memory chosen
// at construction that never grows, holds no Go pointers and is not
// allocated from per decision, new keys included; no locks, no sweeper.
//
// # The table
//
// A table is an array of 16-byte slots in groups of four, one group to a
// 64-byte cache line. A slot is one atomic128 pair: the key's 64-bit tag
// and its limiter's state, a package packed64 word (a token bucket or a
// sliding-window counter, with one parameter set per table). Claiming a
// slot, deciding on it and giving it to another key are compare-and-swaps
// of the whole pair, so each is atomic with the state.
//
// A key may live in two groups, both found from its hash (hash/maphash
// under a seed made at random for each table, so keys chosen by a client
// cannot be aimed at one group): its first group, tried first, and a
// second. A new key takes a free slot in whichever of the two has more,
// so groups fill evenly and few keys land in their second group. A
// decision on a key in its first group loads at most four slots of one
// cache line, steps the word and writes the pair back (a denial writes
// nothing); a key in its second group, or a new key, reads a second line.
//
// A key is its hash: two keys with the same tag share a limiter. The tag
// is the hash's low 63 bits; the first group comes from its high bits and
// the second from its low bits, so two keys meet in a group only if their
// hashes agree in about log2(G) bits, G the number of groups. A key shares
// its limiter with one of the at most seven other keys of its two groups
// with probability about 7*G/2^63 (2e-13 for a million slots), and among N
// distinct keys ever used, some two share with probability below N^2/2^64.
//
// # Eviction without loss
//
// A bucket that is full at now, or a window that counts nothing at now, is
// the same as no entry at all: every later decision on it is what a fresh
// limiter would decide. Such a slot is idle, and a new key takes it
// without changing any decision. When a new key's group holds no idle
// slot, the table's Policy decides: EvictLeastLoss takes the slot whose key
// loses least (the bucket lacking the fewest tokens, the window counting
// the fewest units) and counts the loss in Stats; Refuse denies the new
// key with ErrFull (fails closed) and a RetryAfter at which a slot of the
// group becomes idle.
//
// Times can arrive stale and out of order; a slot idle at one caller's now
// is not at an earlier now. So each group keeps a mark: when a slot is
// taken from a key, the mark rises to the time from which that key was
// idle (the taker's now, if it was not idle), and a key starting afresh
// admits nothing before the later mark of its two groups (RetryAfter says
// until when). Under one clock that only moves forward, read when each
// request is decided, a new key is never before its groups' marks; a
// caller that decides on a time read long before can see such denials.
//
// # The bound
//
// Each key is held to its own limiter's exact bound (package packed64's:
// for a bucket, burst + (b - a + u)/T tokens over the times in [a, b] its
// callers pass, in any order; for a window, L*(ceil(T/W)+1) units in any
// interval of length T), across its slots, plus what lossy evictions
// forgave it: the sum of the Stats.Forgiven counts of its evictions. With
// the Refuse policy, or with no eviction that was not idle, the bound is
// exact.
//
// Sketch, for a bucket: in units, its state is its empty time z, raised by
// at least each admission's cost and left at most the admission's time plus
// the capacity. If a key's state S1 is taken when it is idle at z1, the
// mark is at least z1, so its next state S2 admits only at times at or
// after z1; S1's admissions at times in [a, b] cost at most z1 - a, S2's at
// most b + capacity - max(a, z1), together b - a + capacity. Taken at an
// earlier now e, the mark is at least e and the excess z1 - e is what was
// forgiven. A window is the same with the end of its last counted window,
// and its counted units as the loss.
//
// A new key is placed in two steps (claim, then settle) so that concurrent
// first decisions on one key never leave it in two slots; see the code.
//
// # Memory
//
// SlotBytes (18) a slot: its 16 bytes and a share of its group's mark, in
// memory allocated once by New, plus at most 64 bytes of alignment. Groups
// fill unevenly, so a table holds its capacity of keys only while most of
// them are idle: a table of 5/4 slots a key (22.5 bytes a key) placed
// 98.7% of a million keys all busy at once (TestFill), the rest refused
// (or, under EvictLeastLoss, each taking a busy key's slot).
//
// # Ends of time
//
// Times at the ends of int64 are decided as packed64 decides them. A word
// idle only after math.MaxInt64 is never idle (never reused losslessly),
// and every wait (RetryAfter) saturates at limit.Never.
//
// # Keys
//
// Strings, []byte (without allocating), uint64 and netip.Addr, the last
// grouping IPv6 clients by prefix (/64 unless WithIPv6Prefix sets another).
// AllowAt and its forms take one unit on a fast path; AllowNAt takes n
// and returns packed64's Result. RemainingAt reads without deciding.
//
// There is no Reserve or Wait: a reservation would hold a slot's state in
// debt past what eviction can account for, and the table is for deciding
// at the door.
//
// Time is int64 nanoseconds on a fixed-origin clock (package nanotime);
// each method has an ...At form taking now, and the plain form reads the
// table's clock (WithClock).
package keyed
