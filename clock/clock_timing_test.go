package clock

import (
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var sink int64

// The clocks' read costs against the package time calls they replace or
// wrap. Reproduce docs/clock.md with
//
//	go test -run '^$' -bench . -count 5 ./clock/
//
// Baselines: BenchmarkTimeSince (one monotonic read) and
// BenchmarkTimeNowUnixNano (a wall and a monotonic read).

func BenchmarkTimeSince(b *testing.B) {
	for range b.N {
		sink += int64(time.Since(epoch))
	}
}

func BenchmarkTimeNowUnixNano(b *testing.B) {
	for range b.N {
		sink += time.Now().UnixNano()
	}
}

func BenchmarkTimeNowUnixMilli(b *testing.B) {
	for range b.N {
		sink += time.Now().UnixMilli()
	}
}

func BenchmarkSystemNanos(b *testing.B) {
	for range b.N {
		sink += System.Nanos()
	}
}

func BenchmarkHostNanos(b *testing.B) {
	for range b.N {
		sink += Host.Nanos()
	}
}

// BenchmarkClockGettimeSyscall reads CLOCK_MONOTONIC as x/sys/unix does:
// a system call every time (the cost Host avoids).
func BenchmarkClockGettimeSyscall(b *testing.B) {
	var ts unix.Timespec
	for range b.N {
		_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
		sink += ts.Nano()
	}
}

// BenchmarkSystemNanosIface reads System through the Nano interface, as an
// agent given a clock.Nano does.
func BenchmarkSystemNanosIface(b *testing.B) {
	var c Nano = System
	for range b.N {
		sink += c.Nanos()
	}
}

func BenchmarkSystemEpochNanos(b *testing.B) {
	for range b.N {
		sink += System.EpochNanos()
	}
}

func BenchmarkCachedNanos(b *testing.B) {
	var c Cached
	c.Update(1)
	for range b.N {
		sink += c.Nanos()
	}
}

func BenchmarkCachedUpdate(b *testing.B) {
	var c Cached
	for i := range b.N {
		c.Update(int64(i))
	}
}

// BenchmarkAtomicStore is the sequentially consistent store (an XCHG on
// amd64) that Update's release store replaces.
func BenchmarkAtomicStore(b *testing.B) {
	var c Cached
	for i := range b.N {
		c.ns.Store(int64(i))
	}
}

func BenchmarkCachedAdvance(b *testing.B) {
	var c Cached
	for range b.N {
		c.Advance(1)
	}
}

// BenchmarkCachedNanosContended reads while another goroutine updates on
// every iteration of its own loop: the cost of the cache line moving.
func BenchmarkCachedNanosContended(b *testing.B) {
	var c Cached
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(0); !stop.Load(); i++ {
			c.Update(i)
		}
	}()
	b.ResetTimer()
	for range b.N {
		sink += c.Nanos()
	}
	b.StopTimer()
	stop.Store(true)
	<-done
}
