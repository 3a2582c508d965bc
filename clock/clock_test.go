package clock

import (
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/pad"
)

func TestSystemNanosNeverGoesBack(t *testing.T) {
	last := System.Nanos()
	require.GreaterOrEqual(t, last, int64(0), "the origin is this package's initialisation")
	for range 100_000 {
		now := System.Nanos()
		require.GreaterOrEqual(t, now, last)
		last = now
	}
	time.Sleep(time.Millisecond)
	require.GreaterOrEqual(t, System.Nanos()-last, int64(time.Millisecond), "a sleep of 1 ms advances it by at least 1 ms")
}

func TestSystemEpochClocksAgreeWithTimeNow(t *testing.T) {
	before := time.Now()
	ns, ms := System.EpochNanos(), System.EpochMillis()
	after := time.Now()
	require.GreaterOrEqual(t, ns, before.UnixNano())
	require.LessOrEqual(t, ns, after.UnixNano())
	require.GreaterOrEqual(t, ms, before.UnixMilli())
	require.LessOrEqual(t, ms, after.UnixMilli())
}

func TestCachedZeroValueUpdateAdvance(t *testing.T) {
	var c Cached
	require.Zero(t, c.Nanos())
	c.Update(5)
	require.Equal(t, int64(5), c.Nanos())
	require.Equal(t, int64(5+int64(time.Microsecond)), c.Advance(time.Microsecond))
	require.Equal(t, int64(5+int64(time.Microsecond)), c.Nanos())
	c.Update(1) // the writer decides: no monotonic check
	require.Equal(t, int64(1), c.Nanos())
	require.Equal(t, int64(0), c.Advance(-1))
}

func TestCachedAdvanceFromManyGoroutinesLosesNothing(t *testing.T) {
	var c Cached
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 1000 {
				c.Advance(3)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(4*1000*3), c.Nanos())
}

// TestCachedIsPaddedOnBothSides: the value has a cache line to itself
// whatever is allocated around the clock.
func TestCachedIsPaddedOnBothSides(t *testing.T) {
	var c Cached
	require.Equal(t, uintptr(pad.LineSize), unsafe.Offsetof(c.ns))
	require.Equal(t, uintptr(2*pad.LineSize), unsafe.Sizeof(c))
}

// TestCachedOneWriterManyReaders: each reader sees the value never go
// back, and sees the data the writer wrote before the Update that stored
// the value it read (plain writes, so -race checks the happens-before).
func TestCachedOneWriterManyReaders(t *testing.T) {
	const n = 20_000
	var c Cached
	data := make([]int64, n+1) // data[v] is written before Update(v)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			var last int64
			for last < n {
				v := c.Nanos()
				if v < last {
					t.Errorf("Cached went back from %d to %d", last, v)
					return
				}
				if data[v] != v {
					t.Errorf("value %d read before the data written ahead of it (%d)", v, data[v])
					return
				}
				last = v
				runtime.Gosched()
			}
		})
	}
	for v := int64(1); v <= n; v++ {
		data[v] = v
		c.Update(v)
	}
	wg.Wait()
}

func TestReadsAndUpdatesAllocateNothing(t *testing.T) {
	var c Cached
	var sink int64
	for name, f := range map[string]func(){
		"Cached.Nanos":      func() { sink += c.Nanos() },
		"Cached.Update":     func() { c.Update(sink) },
		"Cached.Advance":    func() { sink += c.Advance(1) },
		"System.Nanos":      func() { sink += System.Nanos() },
		"System.EpochNanos": func() { sink += System.EpochNanos() },
	} {
		require.Zero(t, testing.AllocsPerRun(1000, f), name)
	}
}

func TestManualMovesBothClocksTogether(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	m := NewManual(start)
	require.Zero(t, m.Nanos())
	require.Equal(t, start.UnixMilli(), m.EpochMillis())
	require.Equal(t, int64(2*time.Second), m.Advance(2*time.Second))
	require.Equal(t, start.UnixMilli()+2000, m.EpochMillis())
	require.True(t, m.Now().Equal(start.Add(2*time.Second)))
	m.SetWall(start) // stepped back: Nanos stay
	require.Equal(t, int64(2*time.Second), m.Nanos())
	require.Equal(t, start.UnixMilli(), m.EpochMillis())
	var z Manual
	require.Zero(t, z.EpochMillis())
}

func TestFuncReadsTheFunction(t *testing.T) {
	at := time.UnixMilli(1_700_000_000_123).Add(456 * time.Microsecond)
	f := Func(func() time.Time { return at })
	require.Equal(t, int64(1_700_000_000_123), f.EpochMillis())
	require.Equal(t, at.UnixNano(), f.Nanos())
}
