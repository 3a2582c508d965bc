package clock

import "time"

// Nano is a monotonic clock in nanoseconds (Agrona's NanoClock). Only
// differences of two readings mean anything; the origin is the clock's
// own, and readings from clocks of other processes cannot be compared.
type Nano interface {
	// Nanos returns the current reading. A reading is never less than an
	// earlier reading of the same clock (for System: of any clock of the
	// process sharing its origin, see System).
	Nanos() int64
}

// Epoch is a wall clock in milliseconds since the Unix epoch (Agrona's
// EpochClock): for timestamps other processes read (heartbeats, error
// logs, counters' reuse deadlines). A wall clock can be stepped by the
// system, backwards included; measure durations with a Nano.
type Epoch interface {
	// EpochMillis returns the milliseconds since 1970-01-01 UTC.
	EpochMillis() int64
}

// epoch is System's origin: the monotonic reading taken when the package
// was initialised.
var epoch = time.Now()

// systemClock reads the system's clocks through package time: System's
// type.
type systemClock struct{}

// System is the process's system clock. Its Nanos are the monotonic
// nanoseconds since an origin fixed when this package was initialised, the
// same for every caller in the process, so readings taken on different
// goroutines (a runner's cached clock included, see runner.WithCachedClock)
// compare directly. It starts near 0, not at the Unix epoch. Its
// EpochMillis is the wall clock in milliseconds since the Unix epoch
// (time.Now), an Epoch, and its EpochNanos the same in nanoseconds.
var System systemClock

var (
	_ Nano  = System
	_ Epoch = System
)

// Nanos returns the monotonic nanoseconds since the process's origin: one
// read of the monotonic clock (time.Since, a vDSO call on Linux).
func (systemClock) Nanos() int64 { return int64(time.Since(epoch)) }

// EpochMillis returns the wall clock in milliseconds since the Unix epoch.
func (systemClock) EpochMillis() int64 { return time.Now().UnixMilli() }

// EpochNanos returns the wall clock in nanoseconds since the Unix epoch:
// time.Now().UnixNano(), which reads the monotonic clock as well as the
// wall clock.
func (systemClock) EpochNanos() int64 { return time.Now().UnixNano() }
