package mailbox

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newMailbox(t testing.TB, cfg Config) *Mailbox {
	t.Helper()
	mb, err := New(cfg)
	require.NoError(t, err)
	return mb
}

// got is a delivered message, copied.
type got struct {
	typeID int32
	parts  []string
	framed bool
}

// collect drains everything available (bounded, as a hang guard) and
// returns copies of the messages.
func collect(t testing.TB, mb *Mailbox) []got {
	t.Helper()
	var out []got
	for range 100 {
		n, err := mb.Drain(func(m *Message) Action {
			g := got{typeID: m.TypeID(), framed: m.framed}
			for _, p := range m.Parts() {
				g.parts = append(g.parts, string(p))
			}
			out = append(out, g)
			return Continue
		}, 1000)
		require.NoError(t, err)
		if n == 0 {
			return out
		}
	}
	t.Fatal("drain did not settle")
	return nil
}

// pattern returns n bytes that depend on seed and the offset.
func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*131 + i*7 + i>>8)
	}
	return b
}

// testClock is a clock.Clock the test sets: Nanos is its value,
// EpochMillis the same in milliseconds.
type testClock struct{ atomic.Int64 }

func (c *testClock) Nanos() int64       { return c.Load() }
func (c *testClock) EpochMillis() int64 { return c.Load() / int64(time.Millisecond) }

// countingClock is a testClock that counts its monotonic reads (the
// liveness check's); heartbeat reads are not counted.
type countingClock struct {
	now   *testClock
	reads *atomic.Int64
}

func (c *countingClock) Nanos() int64       { c.reads.Add(1); return c.now.Nanos() }
func (c *countingClock) EpochMillis() int64 { return c.now.EpochMillis() }
