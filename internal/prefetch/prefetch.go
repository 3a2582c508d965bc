package prefetch

import "unsafe"

// BlockSize is the span that Write and Read cover: 8 cache lines of 64
// bytes, aligned by the caller to BlockSize.
const BlockSize = 512

// Disabled turns Write and Read into no-ops. It exists so that
// cmd/dutybench can run the rings with and without prefetching in the same
// process; set it only while no ring is in use. The assembly tests it, so
// that Write and Read stay small enough to inline into the rings' fast
// paths.
var Disabled bool

// Write asks for the BlockSize bytes at p in a state this core may write:
// PREFETCHW on amd64 CPUs that have it (a read prefetch on those that do
// not). p should be BlockSize-aligned; it need not be valid memory.
func Write(p unsafe.Pointer) { write(p) }

// WriteLines asks for the cache lines holding the n bytes at p (the
// first BlockSize of them, if more) in a state this core may write, as
// Write does: a writer that is about to fill a slot another core reads,
// so that its stores find the lines already its own. p need not be
// aligned, nor valid memory.
func WriteLines(p unsafe.Pointer, n int) { writeLines(p, n) }

// Read asks for the BlockSize bytes at p for reading (PREFETCHT0 on amd64).
func Read(p unsafe.Pointer) { read(p) }

// NoDemote turns Demote into a no-op, as Disabled does for Write and Read,
// so that cmd/dutybench can run a ring with and without demotion in the
// same process. Set it only while no ring is in use.
var NoDemote bool

// Demote asks for the n cache lines from p (valid memory) to leave this
// core's private caches for the cache that all cores share: CLDEMOTE on
// amd64 CPUs that have it, nothing elsewhere. A many-to-one consumer
// demotes the lines it has zeroed and released, which producers on other
// cores claim next (docs/ringbuf.md, "Demoting released lines"). Like a
// prefetch it never changes memory, and no caller may depend on when (or
// whether) it takes effect.
func Demote(p unsafe.Pointer, n int) { demote(p, n) }

// CanPrefetchWrite reports whether Write issues PREFETCHW on this CPU
// (rather than a read prefetch, or nothing off amd64).
func CanPrefetchWrite() bool { return prefetchW() }

// CanDemote reports whether Demote does anything on this CPU (CLDEMOTE).
func CanDemote() bool { return cldemote() }
