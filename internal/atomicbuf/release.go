package atomicbuf

import "sync/atomic"

// StoreRelease64 stores v into *p with (at least) release semantics: every
// memory write the caller made before the call is visible to a goroutine or
// process that observes v with an atomic load.
//
// On amd64 without -race it is a plain MOV in assembly (x86-TSO gives stores
// release order; the call is an opaque compiler barrier, so Go cannot move
// earlier stores past it). Everywhere else it is atomic.Int64.Store, which is
// sequentially consistent (on amd64, an XCHG that drains the store buffer).
// Use it only for a store whose reader synchronises through the stored word
// itself: publication of a record length, of a consumer's head. Never use it
// where a later load of another word must not pass the store (Dekker-style
// handshakes need the full fence of Store).
func StoreRelease64(p *atomic.Int64, v int64) { storeRelease64(p, v) }

// StoreRelease32 is StoreRelease64 for a 32-bit word.
func StoreRelease32(p *atomic.Int32, v int32) { storeRelease32(p, v) }

// StoreRelease64Pair is StoreRelease64(p1, v1) then StoreRelease64(p2, v2),
// in that order, in one call: on the fast path one assembly call instead of
// two (a one-to-one producer publishes its tail and zeroes the next header
// on every claim).
func StoreRelease64Pair(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64) {
	storeRelease64Pair(p1, v1, p2, v2)
}
