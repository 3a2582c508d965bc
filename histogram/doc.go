// Package histogram is latency histograms in shared memory: HdrHistogram's
// algorithm (github.com/HdrHistogram/hdrhistogram-go's counts layout, index
// for index) in a region of bytes, normally part of a shared file
// (ipc.CreateHistograms), that one agent records into from its duty cycle
// without allocating while other processes (cmd/dutystat, an exporter) read
// it.
//
// # Regions
//
// A histogram lives in a region of Size(cfg) bytes, 8-byte aligned: a
// header (magic and version, config, label of up to MaxLabelLength bytes,
// start time, total count, minimum, maximum, clamped count) and the counts,
// one int64 per HdrHistogram counts index (layout.go). NewRegion allocates
// one on the heap.
//
// # Who may call what
//
//   - Exactly one Recorder per region, for the region's life, across all
//     processes: NewRecorder writes the header and publishes it, and refuses
//     a region already published (ErrInUse). Record and RecordN are called
//     by one goroutine (the agent's duty cycle); they take no lock and
//     allocate nothing. Values outside [Config.Lowest, Config.Highest] are
//     recorded at the bound and counted as clamped: a latency histogram must
//     not lose its worst outliers, and a caller must be able to see that
//     they were cut.
//   - Any number of Readers, in any process, never writing (a read-only
//     mapping will do). NewReader validates the header: another process
//     wrote it, so a bad one is an error wrapping ErrCorrupt (which matches
//     duty.ErrCorrupt), never a panic. Snapshot copies the counts into a
//     caller's Snapshot and allocates nothing once that Snapshot's counts
//     have grown; goroutines may call it concurrently, each with its own
//     Snapshot.
//
// # Intervals
//
// The writer never resets: counts only grow. A reader gets the counts of an
// interval by difference: take a snapshot now and one later, and
// later.Sub(now) leaves the values recorded in between. Any number of
// readers can keep intervals of their own lengths this way, none disturbing
// another.
//
// # Queries
//
// Snapshot.ValueAtQuantile and Snapshot.Mean answer as hdrhistogram's
// Histogram would, to the bit, without allocating; Snapshot.Histogram
// imports the counts into an hdrhistogram.Histogram for everything else.
//
// # Memory ordering
//
// The Recorder updates each word with an atomic load and a release store
// (internal/atomicbuf; no LOCKed instruction, as there is one writer) in a
// fixed order (minimum and maximum, the count, the clamped count, the total)
// and a Reader loads them in the opposite order. So a snapshot's counts sum
// to at least the total count word it read first, its minimum and maximum
// bound every value its counts hold, and its clamped count is at most its
// total. docs/histogram.md, "Memory ordering", gives the argument.
package histogram
