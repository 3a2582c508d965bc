// Package ticks is a cheap clock for measuring short intervals on a hot
// path: the runner's stall tracker reads it once per duty cycle.
//
// Now returns a reading in ticks and Nanos converts a difference of two
// readings to nanoseconds. Where the CPU's time-stamp counter is a usable
// clock (amd64, an invariant TSC, and a Linux kernel that itself keeps time
// with it, so the counters of all CPUs agree), a tick is one TSC cycle and
// Now is one RDTSC, cheaper than time.Since, which goes through the vDSO
// on the system stack (BenchmarkNow). Elsewhere a tick is a nanosecond of
// the monotonic clock and Now is time.Since of a fixed epoch.
//
// Nanos learns the TSC's rate from the monotonic clock: it divides the time
// elapsed since the package was initialised by the ticks elapsed, and keeps
// the rate once that span is long enough (CalibrationSpan) for the error to
// be below a millionth. Earlier conversions are less exact, by about the
// time between two clock reads over the time since start. That is plenty
// for a stall tracker; do not use it where nanoseconds must add up over
// hours.
//
// RDTSC does not wait for earlier instructions, so a reading can be a few
// dozen cycles early; it orders nothing, which suits a measurement of
// durations of tens of ns and up.
package ticks
