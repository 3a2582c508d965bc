// Package prefetch asks the CPU to bring a block of ring memory into this
// core's cache before the code needs it. It is not an API: the rings call
// it once per BlockSize bytes they pass (docs/ringbuf.md, "Prefetching").
//
// A prefetch is only a hint. It never faults, never changes memory and never
// orders anything, so it cannot affect what another goroutine or process
// sees; it only decides when a cache line moves between cores. Its contract
// is therefore about cost: Write and Read must be cheap enough to call on a
// hot path, and on a platform without the instructions they do nothing.
package prefetch
