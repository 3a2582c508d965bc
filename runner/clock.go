package runner

import (
	"time"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/internal/ticks"
)

// clockResync is how often the cached clock's ticks-to-nanoseconds
// extrapolation is anchored again to clock.System. Once internal/ticks has
// calibrated its rate (error below 1e-6), a span this long adds at most
// a millionth of the span in error.
const clockResync = time.Millisecond

// maxAnchorWindow is the widest pair of clock.System readings around a
// ticks reading accepted as an anchor at once (a wider one means the thread
// was interrupted between them).
const maxAnchorWindow = 2 * time.Microsecond

// cachedClock keeps a clock.Cached at clock.System's Nanos from the duty
// cycle's ticks readings, without reading the system clock on every cycle.
// Used by the agent's thread only.
type cachedClock struct {
	c *clock.Cached
	// An anchor: a clock.System reading and the ticks read just after it.
	baseNs, baseTicks int64
	// last is the last value stored: values never go back.
	last int64
}

// anchor pairs clock.System's reading with a ticks reading. The System
// reading taken before the ticks is kept, so the extrapolation runs behind
// clock.System by at most the pair's window rather than ahead of it.
func (k *cachedClock) anchor() {
	var ns, t int64
	for range 10 {
		ns = clock.System.Nanos()
		t = ticks.Now()
		if clock.System.Nanos()-ns < int64(maxAnchorWindow) {
			break
		}
	}
	k.baseNs, k.baseTicks = ns, t
}

// set stores the clock.System time at ticks reading t.
func (k *cachedClock) set(t int64) {
	ns := ticks.Nanos(t - k.baseTicks)
	if ns >= int64(clockResync) || ns < 0 {
		k.anchor()
		ns = ticks.Nanos(t - k.baseTicks) // t predates the anchor: < 0, the clamp below holds the value
	}
	v := k.baseNs + ns
	if v < k.last {
		v = k.last
	}
	k.last = v
	k.c.Update(v)
}
