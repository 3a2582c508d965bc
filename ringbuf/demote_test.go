package ringbuf

import (
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
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
	buf, err := Allocate(capacity)
	require.NoError(t, err)
	r, err := NewManyToOne(buf)
	require.NoError(t, err)
	require.Zero(t, uintptr(r.base)%cacheLine, "Allocate's records start on a line")
	got := recordDemotions(t, r.base)
	rng := rand.New(rand.NewPCG(5, 6))
	next := int64(0) // position of the next line to be demoted
	for range 30000 {
		for k := rng.IntN(8); k > 0; k-- {
			if err := r.Write(1, make([]byte, rng.IntN(300))); err != nil {
				require.ErrorIs(t, err, ErrFull)
				break
			}
		}
		before := len(*got)
		if rng.IntN(2) == 0 {
			_, err = r.Read(func(int32, []byte) {}, 1+rng.IntN(10))
		} else {
			_, err = r.ControlledRead(func(int32, []byte) Action {
				if rng.IntN(4) == 0 {
					return Commit
				}
				return Continue
			}, 1+rng.IntN(10))
		}
		require.NoError(t, err)
		released := r.ConsumerPosition()
		for _, d := range (*got)[before:] {
			require.Equal(t, int(next&(capacity-1)), d.off, "demoted out of order or twice")
			require.Positive(t, d.lines)
			require.LessOrEqual(t, d.off+d.lines*cacheLine, capacity, "past the end of the ring")
			next += int64(d.lines * cacheLine)
		}
		require.LessOrEqual(t, next, released, "demoted a line not wholly released")
		require.Greater(t, next, released-cacheLine, "a wholly released line was not demoted")
	}
	require.Greater(t, next, int64(10*capacity), "the test must run many laps")
}

// TestDemoteOff: SetDemote(false) stops the demotions, SetDemote(true)
// resumes them; one-to-one rings (whose consumer writes nothing into the
// ring's lines) and rings too small to prefetch never demote.
func TestDemoteOff(t *testing.T) {
	m, err := NewManyToOne(make([]byte, minPrefetchCapacity+TrailerLength))
	require.NoError(t, err)
	small, err := NewManyToOne(make([]byte, minPrefetchCapacity/2+TrailerLength))
	require.NoError(t, err)
	o, err := NewOneToOne(make([]byte, minPrefetchCapacity+TrailerLength))
	require.NoError(t, err)
	calls := 0
	saved := demoteLines
	demoteLines = func(unsafe.Pointer, int) { calls++ }
	t.Cleanup(func() { demoteLines = saved })
	cycle := func(rb RingBuffer) {
		for range 200 {
			require.NoError(t, rb.Write(1, make([]byte, 100)))
			_, err := rb.Read(func(int32, []byte) {}, NoLimit)
			require.NoError(t, err)
		}
	}
	cycle(m)
	require.Positive(t, calls, "on by default")
	require.True(t, m.Demotes())
	require.False(t, small.Demotes())
	require.False(t, o.ring.demote)
	m.SetDemote(false)
	require.False(t, m.Demotes())
	calls = 0
	cycle(m)
	require.Zero(t, calls, "off")
	m.SetDemote(true)
	cycle(m)
	require.Positive(t, calls, "on again")
	calls = 0
	small.SetDemote(true) // too small: stays off
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
	backing := make([]byte, capacity+TrailerLength+2*cacheLine)
	start := cacheLine - int(uintptr(unsafe.Pointer(&backing[0]))%cacheLine) + 24 // 24 bytes into a line
	r, err := NewManyToOne(backing[start : start+capacity+TrailerLength])
	require.NoError(t, err)
	got := recordDemotions(t, r.base)
	for range 3 * capacity / 64 {
		require.NoError(t, r.Write(1, make([]byte, 56)))
		_, err := r.Read(func(int32, []byte) {}, NoLimit)
		require.NoError(t, err)
	}
	require.NotEmpty(t, *got)
	for _, d := range *got {
		addr := uintptr(r.base) + uintptr(d.off)
		require.Zero(t, addr%cacheLine, "not a line")
		require.Greater(t, d.off, -cacheLine)
		require.LessOrEqual(t, d.off+d.lines*cacheLine, capacity)
	}
}

func TestDemoteDoesNotAllocate(t *testing.T) {
	r, err := NewManyToOne(make([]byte, 16<<10+TrailerLength))
	require.NoError(t, err)
	payload := make([]byte, 32)
	h := func(int32, []byte) {}
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		for range 20 {
			_ = r.Write(1, payload)
		}
		_, _ = r.Read(h, NoLimit)
	}))
}

// TestAllocateAligned: Allocate's buffers start on a 128-byte boundary
// (records on a line, each trailer slot a pair of lines), are zeroed and
// are exactly capacity + TrailerLength bytes long.
func TestAllocateAligned(t *testing.T) {
	for _, capacity := range []int{64, 1024, 16 << 10, 1 << 20} {
		for range 5 {
			b, err := Allocate(capacity)
			require.NoError(t, err)
			require.Len(t, b, capacity+TrailerLength)
			require.Equal(t, capacity+TrailerLength, cap(b))
			require.Zero(t, uintptr(unsafe.Pointer(&b[0]))%allocAlignment)
			require.Equal(t, make([]byte, len(b)), b)
		}
	}
}
