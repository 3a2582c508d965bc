package atomicbuf

import "sync/atomic"

// StoreRelease64 stores v into *p with (at least) release semantics: every
// memory write the caller made before the call is visible to a goroutine or
// process that observes v with an atomic load.
//
// On amd64 without -race it is a plain MOV in a function the compiler may not
// inline (x86-TSO gives stores release order; the call is an opaque compiler
// barrier, so Go cannot move earlier stores past it; a test checks the
// machine code). Everywhere else it is atomic.Int64.Store, which is
// sequentially consistent (on amd64, an XCHG that drains the store buffer).
// Use it only for a store whose reader synchronises through the stored word
// itself: publication of a record length, of a consumer's head. Never use it
// where a later load of another word must not pass the store (Dekker-style
// handshakes need the full fence of Store).
func StoreRelease64(p *atomic.Int64, v int64) { storeRelease64(p, v) }

// StoreRelease32 is StoreRelease64 for a 32-bit word.
func StoreRelease32(p *atomic.Int32, v int32) { storeRelease32(p, v) }

// StoreRelease64Pair is StoreRelease64(p1, v1) then StoreRelease64(p2, v2),
// in that order, in one call: on the fast path one call instead of two.
func StoreRelease64Pair(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64) {
	storeRelease64Pair(p1, v1, p2, v2)
}

// StoreRelease64Triple is three StoreRelease64 calls, in argument order, in
// one call. A one-to-one producer publishes a record with it: zero the next
// header, store the tail, then the record's header (length and type), so
// the consumer finds the zero behind every record it accepts.
func StoreRelease64Triple(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64, p3 *atomic.Int64, v3 int64) {
	storeRelease64Triple(p1, v1, p2, v2, p3, v3)
}

// StoreOrdered64 stores v into *p as StoreRelease64 does (every write the
// caller made before the call is visible to whoever observes v) and also
// before every memory access the caller makes after it: no later store of
// the caller, plain ones included, becomes visible to another core or
// process before v. A claim marker needs both: a reader that finds any of
// the claim's later plain stores (its payload) must find the marker too.
//
// On amd64 without -race it is StoreRelease64's plain MOV: x86-TSO never
// makes a store visible before an earlier one. Everywhere else it is
// atomic.Int64.Store followed by a Load of the same word, the value
// discarded. Go's atomics are sequentially consistent, so every
// architecture orders an atomic store before a later atomic load (with a
// fence after the store, one before the load, or release and acquire
// instructions that are ordered with each other), and an atomic load
// before every later access (acquire): the store comes before everything
// after the load. On arm64 that is STLR then LDAR: a load-acquire that
// follows a store-release is ordered after it, whatever the addresses.
// Neither half suffices alone there: STLR orders only what came before it,
// and an atomic swap, which Go compiles to SWPALD where the CPU has LSE
// atomics, is LDAXR/STLXR on a CPU without them, after which later accesses
// may be observed before its store half (Linux follows that loop with DMB
// ISH for its fully ordered exchange). Where Go's atomic store is fenced
// already (ppc64, s390x, mips, riscv64, loong64) the load is redundant; it
// is kept for the one argument above, which holds on every architecture.
func StoreOrdered64(p *atomic.Int64, v int64) { storeOrdered64(p, v) }

// StoreOrdered32 is StoreOrdered64 for a 32-bit word.
func StoreOrdered32(p *atomic.Int32, v int32) { storeOrdered32(p, v) }

// StoreOrdered64Pair is StoreOrdered64(p1, v1) then StoreRelease64(p2, v2),
// in one call.
func StoreOrdered64Pair(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64) {
	storeOrdered64Pair(p1, v1, p2, v2)
}
