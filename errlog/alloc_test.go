package errlog

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/buildtags"
)

// Recording an error already in the log allocates nothing beyond what the
// error's own Error methods allocate (nothing for errors.New and
// fmt.Errorf errors; a Sprintf for one like runner.PanicError), nor does
// HasErrors; Read allocates only the delivered texts.
func TestRecordRepeatedDoesNotAllocate(t *testing.T) {
	buf := newBuf(1 << 14)
	l := mustLog(t, buf)
	plain := errors.New("boom")
	wrapped := fmt.Errorf("op: %w", fmt.Errorf("inner: %w", plain))
	stack := &panicked{"x", panicSiteA(1)}
	for _, c := range []struct {
		name string
		err  error
	}{{"plain", plain}, {"wrapped", wrapped}, {"panic stack", stack}} {
		ok := true
		allocs := testing.AllocsPerRun(200, func() { ok = ok && l.Record(c.err) })
		require.True(t, ok)
		own := testing.AllocsPerRun(200, func() { _ = c.err.Error() })
		if c.name != "panic stack" {
			require.Zero(t, allocs, c.name)
		} else if buildtags.Race {
			// The error's Sprintf allocates a varying number of times
			// (sync.Pool drops items at random under -race): a bound.
			require.LessOrEqual(t, allocs, own+1, c.name)
		} else {
			require.Equal(t, own, allocs, c.name)
		}
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { HasErrors(buf) }))
	allocs := testing.AllocsPerRun(100, func() { _, _ = Read(buf, 0, func(Observation) {}) })
	require.Equal(t, float64(len(readAll(t, buf))), allocs, "one text per observation")
}

// bigErr is an error with a prebuilt message: its Error allocates nothing.
type bigErr struct{ msg string }

func (e *bigErr) Error() string { return e.msg }

// An error whose message cannot fit in the room left in the log is refused
// without encoding it: Record allocates nothing in proportion to the
// message, and the Log keeps no scratch buffer of that size afterwards,
// neither after a refused record nor after a large one that fits.
func TestOversizedErrorIsNotEncodedOrRetained(t *testing.T) {
	buf := newBuf(1 << 20)
	l := mustLog(t, buf)
	huge := &bigErr{strings.Repeat("x", 8<<20)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 4 {
		require.False(t, l.Record(huge))
	}
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(256<<10), "bytes allocated by 4 refused records")
	require.LessOrEqual(t, cap(l.encoded), maxRetained)

	require.True(t, l.Record(&bigErr{strings.Repeat("y", 512<<10)}))
	require.LessOrEqual(t, cap(l.encoded), maxRetained)
	obs := readAll(t, buf)
	require.Len(t, obs, 1)
	require.Contains(t, obs[0].Text, "*errlog.bigErr: "+strings.Repeat("y", 512<<10)+"\n")
}
