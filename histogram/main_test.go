package histogram

import (
	"encoding/binary"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// ns is a latency config: 1 ns to 10 s at 3 significant figures.
var ns = Config{Lowest: 1, Highest: 10_000_000_000, SignificantFigures: 3}

func le32(b []byte, off int) int32     { return int32(binary.LittleEndian.Uint32(b[off:])) }
func le64(b []byte, off int) int64     { return int64(binary.LittleEndian.Uint64(b[off:])) }
func put32(b []byte, off int, v int32) { binary.LittleEndian.PutUint32(b[off:], uint32(v)) }
func put64(b []byte, off int, v int64) { binary.LittleEndian.PutUint64(b[off:], uint64(v)) }

// soak multiplies iteration counts by DUTY_SOAK (default 1).
func soak(n int) int {
	if k, err := strconv.Atoi(os.Getenv("DUTY_SOAK")); err == nil && k > 1 {
		return n * k
	}
	return n
}

func newRecorder(t testing.TB, cfg Config, label string) (*Recorder, []byte) {
	t.Helper()
	region, err := NewRegion(cfg)
	require.NoError(t, err)
	r, err := NewRecorder(region, cfg, label)
	require.NoError(t, err)
	return r, region
}

func newReader(t testing.TB, region []byte) *Reader {
	t.Helper()
	r, err := NewReader(region)
	require.NoError(t, err)
	return r
}

func snapshot(t testing.TB, r *Reader) *Snapshot {
	t.Helper()
	var s Snapshot
	require.NoError(t, r.Snapshot(&s))
	return &s
}
