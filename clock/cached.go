package clock

import (
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/dutyrt/duty/internal/pad"
)

// Cached is a monotonic nanosecond clock whose value is set, not read from
// the system (Agrona's CachedNanoClock). One goroutine, the writer, sets it
// with Update or Advance, typically once per duty cycle (runner.WithCachedClock
// does it before every DoWork); any number of goroutines read it with
// Nanos, a single load, far cheaper than a system clock and the same value
// for every reader within a cycle. It is also the standard test clock: a
// test drives time by hand and the code under test sees only that.
//
// The zero value reads 0 and is ready for use. A Cached must not be copied
// after first use (go vet checks it); share a pointer. It occupies its own
// cache line, padded on both sides.
//
// Ordering: Update and Advance publish their value with (at least) a
// release store, and Nanos is an atomic load: everything the writer wrote
// before an Update is visible to a reader whose Nanos returns that
// update's value or a later one. On amd64 without -race, Update is a plain
// MOV (x86 stores are release stores; see internal/atomicbuf), elsewhere a
// sync/atomic store, which is sequentially consistent. Advance is an atomic
// add, sequentially consistent everywhere.
//
// Cached itself does not check that its values increase: its writer
// decides (the runner only ever stores increasing values; a test may set
// any).
type Cached struct {
	_  pad.Line
	ns atomic.Int64
	_  [pad.LineSize - 8]byte
}

var _ Nano = (*Cached)(nil)

// Nanos returns the value of the last Update or Advance (0 before any).
func (c *Cached) Nanos() int64 { return c.ns.Load() }

// Update sets the value to ns. Call it from the writer only: Updates from
// two goroutines race for the last word, and a reader may see the value go
// back.
func (c *Cached) Update(ns int64) { atomicbuf.StoreRelease64(&c.ns, ns) }

// Advance adds d to the value and returns the new value. It is an atomic
// add, so Advances from several goroutines all count; an Update concurrent
// with them may still overwrite them.
func (c *Cached) Advance(d time.Duration) int64 { return c.ns.Add(int64(d)) }
