package counters

import (
	"encoding/binary"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeClock is a settable epoch-ms clock.
type fakeClock struct{ now atomic.Int64 }

func (c *fakeClock) Now() int64         { return c.now.Load() }
func (c *fakeClock) EpochMillis() int64 { return c.now.Load() }
func (c *fakeClock) Nanos() int64       { return c.now.Load() * 1e6 }
func (c *fakeClock) Set(ms int64)       { c.now.Store(ms) }
func (c *fakeClock) Advance(ms int64)   { c.now.Add(ms) }
func newClock(ms int64) *fakeClock      { c := &fakeClock{}; c.Set(ms); return c }
func le32(b []byte, off int) int32      { return int32(binary.LittleEndian.Uint32(b[off:])) }
func le64(b []byte, off int) int64      { return int64(binary.LittleEndian.Uint64(b[off:])) }
func put32(b []byte, off int, v int32)  { binary.LittleEndian.PutUint32(b[off:], uint32(v)) }
func put64(b []byte, off int, v int64)  { binary.LittleEndian.PutUint64(b[off:], uint64(v)) }

// newRegions returns zeroed regions for n counters.
func newRegions(t testing.TB, n int) (metadata, values []byte) {
	t.Helper()
	metadata, values, err := NewRegions(n)
	require.NoError(t, err)
	return metadata, values
}

func mustManager(t testing.TB, n int, cfg Config) (*Manager, []byte, []byte) {
	t.Helper()
	metadata, values := newRegions(t, n)
	m, err := NewManager(metadata, values, cfg)
	require.NoError(t, err)
	return m, metadata, values
}

func allocate(t testing.TB, m *Manager, label string, typeID int32, key []byte) *Counter {
	t.Helper()
	c, err := m.Allocate(label, typeID, key)
	require.NoError(t, err)
	return c
}
