package histogram

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The layout constants, written out again as literals so that a change to
// layout.go breaks this test (docs/layouts.md states them too, checked by
// internal/layoutdoc).
func TestLayoutConstants(t *testing.T) {
	require.Equal(t, 0, magicVersionOffset)
	require.Equal(t, 8, lowestOffset)
	require.Equal(t, 16, highestOffset)
	require.Equal(t, 24, significantFiguresOffset)
	require.Equal(t, 28, labelLengthOffset)
	require.Equal(t, 32, countsLengthOffset)
	require.Equal(t, 40, startMillisOffset)
	require.Equal(t, 48, labelOffset)
	require.Equal(t, 64, MaxLabelLength)
	require.Equal(t, 128, totalCountOffset)
	require.Equal(t, 136, minOffset)
	require.Equal(t, 144, maxOffset)
	require.Equal(t, 152, clampedOffset)
	require.Equal(t, 192, countsOffset)
	require.Equal(t, 192, headerLength)
	require.Equal(t, int64(0x0000_0001_5453_4948), magicVersion)
	require.LessOrEqual(t, labelOffset+MaxLabelLength, totalCountOffset, "the label ends before the written words")
}

// Raw bytes written by a Recorder, decoded at the documented offsets with
// plain little-endian loads.
func TestLayoutRawBytes(t *testing.T) {
	cfg := Config{Lowest: 2, Highest: 1000, SignificantFigures: 1}
	before := time.Now().UnixMilli()
	w, b := newRecorder(t, cfg, "raw")
	require.Equal(t, "HIST", string(b[0:4]))
	require.Equal(t, int32(1), le32(b, 4))
	require.Equal(t, int64(2), le64(b, 8))
	require.Equal(t, int64(1000), le64(b, 16))
	require.Equal(t, int32(1), le32(b, 24))
	require.Equal(t, int32(3), le32(b, 28))
	g, _ := newGeometry(cfg)
	require.Equal(t, int64(g.countsLen), le64(b, 32))
	require.Equal(t, (len(b)-192)/8, g.countsLen)
	require.GreaterOrEqual(t, le64(b, 40), before)
	require.Equal(t, "raw", string(b[48:51]))
	require.Equal(t, make([]byte, 128-51), b[51:128], "label padding and reserved bytes are zero")

	w.RecordN(3, 2)   // unit 1 (Lowest 2): index 1
	w.RecordN(900, 5) // sub-buckets of 2 up to 64, then 4, 8, 16, 32: index of 896
	w.Record(1)       // clamped to 2: index 1
	require.Equal(t, int64(8), le64(b, 128), "total")
	require.Equal(t, int64(2), le64(b, 136), "min")
	require.Equal(t, int64(900), le64(b, 144), "max")
	require.Equal(t, int64(1), le64(b, 152), "clamped")
	require.Equal(t, make([]byte, 32), b[160:192])
	require.Equal(t, int64(3), le64(b, 192+8*1))
	i := g.index(900)
	require.Equal(t, int64(5), le64(b, 192+8*i))
	// 900 is in bucket 4 (sub-buckets 32 wide: 1024/32 = 32 of them, the
	// upper 16 used), sub-bucket 900>>5 = 28: index (4+1)*16 + 28 - 16.
	require.Equal(t, 92, i)
}
