package record

import (
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/pad"
)

// demotion is one call of demoteLines: the ring offset of its first line
// and how many lines.
type demotion struct{ off, lines int }

// recordDemotions replaces demoteLines for the test with a recorder of
// what it is given, as offsets into the ring at base.
func recordDemotions(t *testing.T, base unsafe.Pointer) *[]demotion {
	t.Helper()
	var got []demotion
	saved := demoteLines
	demoteLines = func(p unsafe.Pointer, n int) {
		got = append(got, demotion{int(uintptr(p) - uintptr(base)), n})
	}
	t.Cleanup(func() { demoteLines = saved })
	return &got
}

// TestDemoteReleasedLines drives a many-to-one ring through many laps with
// records of random sizes and reads and controlled reads of random limits
// (some committing mid-read), and checks what the consumer demotes: only
// whole lines that every byte of was released, each line exactly once per
// lap, in order of position, inside the ring.
func TestDemoteReleasedLines(t *testing.T) {
	const capacity = 16 << 10
	r := newTestRing(t, capacity, true)
	require.Zero(t, uintptr(r.log.base)%pad.LineSize, "the records start on a line")
	got := recordDemotions(t, r.log.base)
	rng := rand.New(rand.NewPCG(5, 6))
	next := int64(0) // position of the next line to be demoted
	for range 30000 {
		for k := rng.IntN(8); k > 0; k-- {
			if !r.write(t, 1, make([]byte, rng.IntN(300))) {
				break
			}
		}
		before := len(*got)
		var err error
		if rng.IntN(2) == 0 {
			_, err = r.rd.Read(func(int32, []byte) {}, 1+rng.IntN(10))
		} else {
			_, err = r.rd.ControlledRead(func(int32, []byte) Action {
				if rng.IntN(4) == 0 {
					return Commit
				}
				return Continue
			}, 1+rng.IntN(10))
		}
		require.NoError(t, err)
		released := r.head.Load()
		for _, d := range (*got)[before:] {
			require.Equal(t, int(next&(capacity-1)), d.off, "demoted out of order or twice")
			require.Positive(t, d.lines)
			require.LessOrEqual(t, d.off+d.lines*pad.LineSize, capacity, "past the end of the ring")
			next += int64(d.lines * pad.LineSize)
		}
		require.LessOrEqual(t, next, released, "demoted a line not wholly released")
		require.Greater(t, next, released-pad.LineSize, "a wholly released line was not demoted")
	}
	require.Greater(t, next, int64(10*capacity), "the test must run many laps")
}

// TestDemoteOff: SetDemote(false) stops the demotions, SetDemote(true)
// resumes them; consumers that do not zero (one-to-one rings, whose
// consumer writes nothing into the ring's lines) and rings too small to
// prefetch never demote.
func TestDemoteOff(t *testing.T) {
	m := newTestRing(t, MinPrefetchCapacity, true)
	small := newTestRing(t, MinPrefetchCapacity/2, true)
	o := newTestRing(t, MinPrefetchCapacity, false)
	calls := 0
	saved := demoteLines
	demoteLines = func(unsafe.Pointer, int) { calls++ }
	t.Cleanup(func() { demoteLines = saved })
	cycle := func(r *testRing) {
		for range 200 {
			require.True(t, r.write(t, 1, make([]byte, 100)))
			_, err := r.rd.Read(func(int32, []byte) {}, math.MaxInt)
			require.NoError(t, err)
		}
	}
	cycle(m)
	require.Positive(t, calls, "on by default")
	require.True(t, m.rd.Demotes())
	require.False(t, small.rd.Demotes())
	require.False(t, o.rd.Demotes())
	m.rd.SetDemote(false)
	require.False(t, m.rd.Demotes())
	calls = 0
	cycle(m)
	require.Zero(t, calls, "off")
	m.rd.SetDemote(true)
	cycle(m)
	require.Positive(t, calls, "on again")
	calls = 0
	small.rd.SetDemote(true) // too small: stays off
	o.rd.SetDemote(true)     // does not zero: stays off
	require.False(t, o.rd.Demotes())
	cycle(small)
	cycle(o)
	require.Zero(t, calls)
}

// TestDemoteUnalignedBase: a ring whose records do not start on a cache
// line (a caller's buffer, 8-byte aligned) demotes whole lines of memory,
// each holding bytes of the ring (the first may start before it: the
// demotion changes nothing there either), none past the ring's end.
func TestDemoteUnalignedBase(t *testing.T) {
	const capacity = 8 << 10
	backing := make([]byte, capacity+3*pad.LineSize)
	start := pad.LineSize - int(uintptr(unsafe.Pointer(&backing[0]))%pad.LineSize) + 24 // 24 bytes into a line
	r := newTestRingOver(t, backing[start:start+capacity], true)
	got := recordDemotions(t, r.log.base)
	for range 3 * capacity / 64 {
		require.True(t, r.write(t, 1, make([]byte, 56)))
		_, err := r.rd.Read(func(int32, []byte) {}, math.MaxInt)
		require.NoError(t, err)
	}
	require.NotEmpty(t, *got)
	for _, d := range *got {
		addr := uintptr(r.log.base) + uintptr(d.off)
		require.Zero(t, addr%pad.LineSize, "not a line")
		require.Greater(t, d.off, -pad.LineSize)
		require.LessOrEqual(t, d.off+d.lines*pad.LineSize, capacity)
	}
}
