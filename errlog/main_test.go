package errlog

import (
	"encoding/binary"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a settable epoch-ms clock.
type fakeClock struct{ now atomic.Int64 }

func newClock(ms int64) *fakeClock      { c := &fakeClock{}; c.now.Store(ms); return c }
func (c *fakeClock) Now() int64         { return c.now.Load() }
func (c *fakeClock) EpochMillis() int64 { return c.now.Load() }
func (c *fakeClock) Nanos() int64       { return c.now.Load() * 1e6 }
func (c *fakeClock) Set(ms int64)       { c.now.Store(ms) }

func le32(b []byte, off int) int32     { return int32(binary.LittleEndian.Uint32(b[off:])) }
func le64(b []byte, off int) int64     { return int64(binary.LittleEndian.Uint64(b[off:])) }
func put32(b []byte, off int, v int32) { binary.LittleEndian.PutUint32(b[off:], uint32(v)) }

// newBuf returns a zeroed, 8-byte aligned buffer of n bytes.
func newBuf(n int) []byte { return atomicbuf.Make(n).Bytes() }

func mustLog(t testing.TB, buf []byte, opts ...Option) *Log {
	t.Helper()
	l, err := New(buf, opts...)
	require.NoError(t, err)
	return l
}

// readAll returns every observation in buf.
func readAll(t testing.TB, buf []byte) []Observation {
	t.Helper()
	var obs []Observation
	n, err := Read(buf, 0, func(o Observation) { obs = append(obs, o) })
	require.NoError(t, err)
	require.Equal(t, len(obs), n)
	return obs
}

// step is one Record call of a script, at a clock time.
type step struct {
	at    int64
	err   error
	after func() // if not nil, runs after the Record call
}

// recordAll records each step's error at its time, all from one call site
// (so equal errors are the same observation), and returns Record's results.
func recordAll(l *Log, clock *fakeClock, steps ...step) []bool {
	var oks []bool
	for _, s := range steps {
		clock.Set(s.at)
		oks = append(oks, l.Record(s.err))
		if s.after != nil {
			s.after()
		}
	}
	return oks
}
