package errlog

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
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
		require.Equal(t, own, allocs, c.name)
		if c.name != "panic stack" {
			require.Zero(t, allocs, c.name)
		}
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { HasErrors(buf) }))
	allocs := testing.AllocsPerRun(100, func() { _, _ = Read(buf, 0, func(Observation) {}) })
	require.Equal(t, float64(len(readAll(t, buf))), allocs, "one text per observation")
}
