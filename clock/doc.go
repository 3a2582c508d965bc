// Package clock provides the clocks an agent reads time from (Agrona's
// org.agrona.concurrent clocks, docs/agrona.md "Clocks"): small
// interfaces, the system clocks behind them, and cached clocks that a duty cycle updates once so that
// everything else reads them for the cost of a load.
//
// # Interfaces
//
//   - Nano: monotonic nanoseconds (Nanos), for durations, timeouts and
//     deadlines inside one process.
//   - Epoch: wall-clock milliseconds since the Unix epoch (EpochMillis),
//     for timestamps other processes read.
//
// An agent takes the interface it needs; its driver decides what stands
// behind it: the system clock, a cached clock updated by the runner, or a
// test clock driven by hand.
//
// # Implementations
//
//   - System: Nanos is time.Since of an origin fixed when this package is
//     initialised, shared by the whole process (so readings of different
//     goroutines and runners compare); EpochMillis and EpochNanos read
//     time.Now.
//   - Host: Nanos is the host's monotonic clock (CLOCK_MONOTONIC on
//     Linux), read as the runtime reads it. Readings of different
//     processes on one host compare, which makes it the clock of
//     cross-process latency stamps; System's do not.
//   - Cached: a value set by its one writer (Update, Advance) and read
//     by anyone (Nanos) with one atomic load, on a cache line of its own. runner.WithCachedClock makes a
//     runner set a Cached to System's time before every DoWork. A Cached
//     is also the test clock: tests set or advance it and the code under
//     test sees nothing else.
//
// # Ordering
//
// A Cached's Update is (at least) a release store and its reads are
// atomic loads: a reader that sees a value also sees every write its
// writer made before storing it. Advance is a sequentially consistent
// atomic add.
//
// # Departures from Agrona
//
// There is no EpochMicroClock (divide EpochNanos), no SystemEpochNanoClock
// separate from System (System.EpochNanos reads time.Now), no
// OffsetEpochNanoClock and no CachedEpochClock. Cached.Advance takes a
// time.Duration and is an atomic add (Agrona: a read and a release store).
//
// docs/clock.md gives the measured cost of each clock and of the runner
// option.
package clock
