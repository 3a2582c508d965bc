package atomicbuf

import "sync/atomic"

// StoreRelease64 stores v into *p with (at least) release semantics: every
// memory write the caller made before the call is visible to a goroutine or
// process that observes v with an atomic load. Use it only for a store
// whose reader synchronises through the stored word itself (a record
// length, a consumer's head), never where a later load of another word
// must not pass the store: Dekker-style handshakes need Store's full
// fence. On amd64 without -race it is a plain MOV (FastRelease; the
// package documentation says why that is a release store), elsewhere
// atomic.Int64.Store.
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
// On amd64 without -race it is StoreRelease64's plain MOV; elsewhere an
// atomic store and an atomic load of the same word (the package
// documentation, "Ordered stores", says why that suffices).
func StoreOrdered64(p *atomic.Int64, v int64) { storeOrdered64(p, v) }

// StoreOrdered32 is StoreOrdered64 for a 32-bit word.
func StoreOrdered32(p *atomic.Int32, v int32) { storeOrdered32(p, v) }

// StoreOrdered64Pair is StoreOrdered64(p1, v1) then StoreRelease64(p2, v2),
// in one call.
func StoreOrdered64Pair(p1 *atomic.Int64, v1 int64, p2 *atomic.Int64, v2 int64) {
	storeOrdered64Pair(p1, v1, p2, v2)
}
