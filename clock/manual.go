package clock

import (
	"sync/atomic"
	"time"
)

// Clock is both clocks a component with timeouts reads: monotonic
// nanoseconds for the durations it measures itself (Nano) and wall-clock
// milliseconds for the timestamps other processes compare (Epoch). It is
// the one shape of injected clock across duty's configurations
// (mailbox.Config.Clock, ipc.WithClock, the publication's options):
// System in production, a Manual in tests.
type Clock interface {
	Nano
	Epoch
}

var _ Clock = System

// Manual is a Clock driven by hand, for tests: Advance moves both of its
// readings by the same amount, so that what a component measures with
// Nanos and what other processes would compare with EpochMillis never
// disagree. Any goroutine may read it and advance it. The zero value reads
// 0 on both clocks; NewManual starts the wall clock at a given time.
type Manual struct {
	ns atomic.Int64 // Nanos
	wo atomic.Int64 // wall clock at Nanos 0, ns since the Unix epoch
}

var _ Clock = (*Manual)(nil)

// NewManual returns a Manual whose Nanos read 0 and whose wall clock reads
// wall.
func NewManual(wall time.Time) *Manual {
	m := &Manual{}
	m.wo.Store(wall.UnixNano())
	return m
}

// Nanos returns the nanoseconds advanced so far.
func (m *Manual) Nanos() int64 { return m.ns.Load() }

// EpochMillis returns the wall clock: the start time plus what was
// advanced, in milliseconds since the Unix epoch.
func (m *Manual) EpochMillis() int64 { return (m.wo.Load() + m.ns.Load()) / int64(time.Millisecond) }

// Now returns the wall clock as a time.Time (no monotonic reading).
func (m *Manual) Now() time.Time { return time.Unix(0, m.wo.Load()+m.ns.Load()) }

// Advance moves both clocks forward by d (backward for a negative d, which
// a monotonic clock never does: tests of a wall clock stepped back use
// SetWall) and returns the new Nanos.
func (m *Manual) Advance(d time.Duration) int64 { return m.ns.Add(int64(d)) }

// SetWall steps the wall clock to wall without moving Nanos, as a system
// clock adjustment does.
func (m *Manual) SetWall(wall time.Time) { m.wo.Store(wall.UnixNano() - m.ns.Load()) }

// Func is a Clock that reads the time a function returns: it adapts a
// time.Now-shaped clock (a test's, or one derived from another source).
// Nanos is that time in nanoseconds since the Unix epoch: it moves with
// the function's wall time, stepped or not, so it is a monotonic clock
// only when the function's time is (time.Now's is not, across a step).
type Func func() time.Time

var _ Clock = Func(nil)

// Nanos returns f's time in nanoseconds since the Unix epoch.
func (f Func) Nanos() int64 { return f().UnixNano() }

// EpochMillis returns f's time in milliseconds since the Unix epoch.
func (f Func) EpochMillis() int64 { return f().UnixMilli() }
