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
