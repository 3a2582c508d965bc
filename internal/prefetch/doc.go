// Package prefetch asks the CPU to bring a block of ring memory into this
// core's cache before the code needs it (Write, Read), or to move a block
// the code is done with out to the cache all cores share (Demote). It is
// not an API: the rings call it once per BlockSize bytes they pass
// (docs/ringbuf.md, "Prefetching" and "Demoting released lines").
//
// A prefetch or a demotion is only a hint. It never changes memory and
// never orders anything, so it cannot affect what another goroutine or
// process sees; it only decides when a cache line moves between cores. A
// prefetch never faults either (the rings may ask for any address); Demote
// is only given memory the caller owns. The contract is therefore about
// cost: each call must be cheap enough for a hot path, and on a platform
// without the instructions it does nothing.
package prefetch
