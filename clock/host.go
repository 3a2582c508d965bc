package clock

import _ "unsafe" // go:linkname

// hostClock reads the host's monotonic clock: Host's type.
type hostClock struct{}

// Host is the host's monotonic clock in nanoseconds: on Linux
// CLOCK_MONOTONIC itself, which every process on the host reads alike, so
// a reading taken in one process and sent to another can be subtracted
// from a reading there (cross-process latency stamps). It is the clock the
// Go runtime keeps its own time with, read the way the runtime reads it
// (a vDSO call on Linux, no system call), so it costs what System.Nanos
// costs and a fraction of unix.ClockGettime, which always enters the
// kernel. Its origin is the host's (boot, on Linux), not the process's.
//
// On other systems it is the runtime's monotonic clock, which is
// host-wide on darwin and windows as well; duty's cross-process features
// are Linux-only.
var Host hostClock

var _ Nano = Host

// Nanos returns the host's monotonic clock in nanoseconds.
func (hostClock) Nanos() int64 { return runtimeNanotime() }

// runtimeNanotime is the runtime's monotonic clock: on Linux,
// clock_gettime(CLOCK_MONOTONIC) through the vDSO. The runtime keeps the
// symbol linkable by name for the packages that read it this way.
//
//go:linkname runtimeNanotime runtime.nanotime
func runtimeNanotime() int64
