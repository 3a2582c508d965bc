package clock_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/clock"
)

// TestHostIsClockMonotonic brackets Host's reading between two readings of
// CLOCK_MONOTONIC taken with the system call, so that it fails if Host
// reads another clock or has another origin (System's, say, which is
// near 0, or the wall clock, which is decades ahead).
func TestHostIsClockMonotonic(t *testing.T) {
	mono := func() int64 {
		var ts unix.Timespec
		if err := unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts); err != nil {
			t.Fatal(err)
		}
		return ts.Nano()
	}
	for range 1000 {
		before := mono()
		h := clock.Host.Nanos()
		after := mono()
		if h < before || h > after {
			t.Fatalf("Host.Nanos() = %d, not within CLOCK_MONOTONIC's [%d, %d]", h, before, after)
		}
	}
}

func TestHostDoesNotAllocate(t *testing.T) {
	var sink int64
	if n := testing.AllocsPerRun(1000, func() { sink += clock.Host.Nanos() }); n != 0 {
		t.Fatalf("Host.Nanos allocates %v times", n)
	}
	_ = sink
}
