package histogram

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/internal/atomicbuf"
)

func TestSizeChecksConfig(t *testing.T) {
	for _, cfg := range []Config{
		{Lowest: 0, Highest: 100, SignificantFigures: 3},
		{Lowest: -1, Highest: 100, SignificantFigures: 3},
		{Lowest: 10, Highest: 19, SignificantFigures: 3},
		{Lowest: 1, Highest: 100, SignificantFigures: 0},
		{Lowest: 1, Highest: 100, SignificantFigures: 6},
		{Lowest: math.MaxInt64 / 2, Highest: math.MaxInt64, SignificantFigures: 3},   // unit+half > 61
		{Lowest: math.MaxInt64/2 + 1, Highest: math.MaxInt64, SignificantFigures: 1}, // 2*lowest overflows
	} {
		_, err := Size(cfg)
		require.ErrorIs(t, err, ErrArgument, "%+v", cfg)
	}
	for _, cfg := range []Config{
		{Lowest: 10, Highest: 20, SignificantFigures: 1},
		{Lowest: 1, Highest: math.MaxInt64, SignificantFigures: 5},
		{Lowest: 1 << 40, Highest: math.MaxInt64, SignificantFigures: 2},
		ns,
	} {
		n, err := Size(cfg)
		require.NoError(t, err, "%+v", cfg)
		require.Zero(t, n%8)
		g, _ := newGeometry(cfg)
		require.Equal(t, headerLength+8*g.countsLen, n)
	}
	// 1..2 at 1 figure: sub-bucket count 32 (> 2*10), one bucket and the
	// half above it.
	n, err := Size(Config{Lowest: 1, Highest: 2, SignificantFigures: 1})
	require.NoError(t, err)
	require.Equal(t, headerLength+8*32, n)
}

func TestRecorderChecksArguments(t *testing.T) {
	region, err := NewRegion(ns)
	require.NoError(t, err)
	_, err = NewRecorder(region, Config{Lowest: 1, Highest: 1, SignificantFigures: 3}, "x")
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewRecorder(region, ns, strings.Repeat("x", MaxLabelLength+1))
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewRecorder(region[:len(region)-8], ns, "x")
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewRecorder(atomicbuf.Make(len(region) + 8).Bytes()[4:], ns, "x")
	require.ErrorIs(t, err, ErrArgument)
	require.ErrorIs(t, err, atomicbuf.ErrMisaligned)

	_, err = NewRecorder(region, ns, strings.Repeat("x", MaxLabelLength))
	require.NoError(t, err)
	rd := newReader(t, region)
	require.Equal(t, strings.Repeat("x", MaxLabelLength), rd.Label())
	require.Equal(t, ns, rd.Config())
	_, err = NewRecorder(region, ns, "second writer")
	require.ErrorIs(t, err, ErrInUse)
}

func TestRecordAndSnapshot(t *testing.T) {
	before := time.Now().UnixMilli()
	cfg := Config{Lowest: 10, Highest: 100_000, SignificantFigures: 2}
	w, region := newRecorder(t, cfg, "tick-to-trade")
	rd := newReader(t, region)
	require.Equal(t, "tick-to-trade", rd.Label())
	require.Equal(t, cfg, rd.Config())
	require.Equal(t, len(region), rd.Size())

	s := snapshot(t, rd)
	require.Equal(t, "tick-to-trade", s.Label)
	require.Equal(t, cfg, s.Config)
	require.Zero(t, s.TotalCount)
	require.Zero(t, s.Min)
	require.Zero(t, s.Max)
	require.Zero(t, s.ValueAtQuantile(50))
	require.Zero(t, s.Mean())
	require.GreaterOrEqual(t, s.StartMillis, before)
	require.LessOrEqual(t, s.StartMillis, time.Now().UnixMilli())

	w.Record(500)
	w.RecordN(20, 3)
	w.RecordN(30, 0)  // nothing
	w.RecordN(30, -1) // nothing
	s = snapshot(t, rd)
	require.Equal(t, int64(4), s.TotalCount)
	require.Equal(t, int64(20), s.Min)
	require.Equal(t, int64(500), s.Max)
	require.Zero(t, s.Clamped)
	require.Equal(t, int64(23), s.ValueAtQuantile(50), "the top of 20's bucket (width 8: Lowest 10)")
	require.Equal(t, int64(503), s.ValueAtQuantile(100), "the top of 500's bucket")

	// Clamping: below Lowest at Lowest, above Highest at Highest.
	w.Record(1)
	w.RecordN(0, 2)
	w.Record(-5)
	w.RecordN(1_000_000, 2)
	s = snapshot(t, rd)
	require.Equal(t, int64(10), s.TotalCount)
	require.Equal(t, int64(6), s.Clamped)
	require.Equal(t, int64(10), s.Min)
	require.Equal(t, int64(100_000), s.Max)
	g, _ := newGeometry(cfg)
	require.Equal(t, int64(4), s.Counts[g.index(10)])
	require.Equal(t, int64(2), s.Counts[g.index(100_000)])
	var sum int64
	for _, c := range s.Counts {
		sum += c
	}
	require.Equal(t, s.TotalCount, sum)
	require.Equal(t, s.TotalCount, le64(region, totalCountOffset))
}

func TestRecordNSaturatesTheTotal(t *testing.T) {
	w, region := newRecorder(t, ns, "big")
	w.RecordN(100, math.MaxInt64-1)
	w.RecordN(200, 5)
	w.RecordN(300, 5)
	s := snapshot(t, newReader(t, region))
	require.Equal(t, int64(math.MaxInt64), s.TotalCount)
	require.Equal(t, int64(200), s.Max)
}

func TestSub(t *testing.T) {
	w, region := newRecorder(t, ns, "interval")
	rd := newReader(t, region)
	for v := int64(1); v <= 1000; v++ {
		w.Record(v)
	}
	prev := snapshot(t, rd)
	for v := int64(5000); v <= 6000; v++ {
		w.Record(v)
	}
	w.Record(ns.Highest + 1)
	cur := snapshot(t, rd)

	var keep Snapshot
	cur.CopyTo(&keep)
	require.NoError(t, cur.Sub(prev))
	require.Equal(t, int64(1002), cur.TotalCount)
	require.Equal(t, int64(1), cur.Clamped)
	require.Equal(t, int64(5000), cur.Min)
	h := cur.Histogram()
	require.Equal(t, h.Min(), cur.Min)
	require.Equal(t, h.Max(), cur.Max)
	require.Equal(t, h.TotalCount(), cur.TotalCount)
	require.Equal(t, "interval", h.Tag())
	require.GreaterOrEqual(t, cur.Max, ns.Highest)
	require.Equal(t, h.ValueAtQuantile(50), cur.ValueAtQuantile(50))

	// The interval from a snapshot to itself is empty.
	var same Snapshot
	keep.CopyTo(&same)
	require.NoError(t, same.Sub(&keep))
	require.Zero(t, same.TotalCount)
	require.Zero(t, same.Min)
	require.Zero(t, same.Max)

	// A later snapshot, another label or config: ErrArgument, receiver unchanged.
	var before Snapshot
	prev.CopyTo(&before)
	require.ErrorIs(t, prev.Sub(&keep), ErrArgument)
	require.Equal(t, before, *prev)
	other := keep
	other.Label = "other"
	require.ErrorIs(t, keep.Sub(&other), ErrArgument)
	other = keep
	other.Config.SignificantFigures = 2
	require.ErrorIs(t, keep.Sub(&other), ErrArgument)
}

func TestReaderRejectsBadHeaders(t *testing.T) {
	cfg := Config{Lowest: 1, Highest: 1000, SignificantFigures: 2}
	good := func() []byte {
		_, region := newRecorder(t, cfg, "h")
		return region
	}
	region := good()
	_, err := NewReader(region[:len(region)-8])
	require.ErrorIs(t, err, ErrCorrupt, "region shorter than the counts")
	_, err = NewReader(region[:headerLength-8])
	require.ErrorIs(t, err, ErrCorrupt)
	_, err = NewReader(region[4:])
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewReader(atomicbuf.Make(len(region)).Bytes())
	require.ErrorIs(t, err, ErrNotReady)
	require.NotErrorIs(t, err, duty.ErrCorrupt)
	_, err = NewReader(atomicbuf.Make(16).Bytes())
	require.ErrorIs(t, err, ErrNotReady)

	for name, spoil := range map[string]func(b []byte){
		"magic":          func(b []byte) { put32(b, 0, 0x12345678) },
		"version":        func(b []byte) { put32(b, 4, 2) },
		"lowest":         func(b []byte) { put64(b, lowestOffset, 0) },
		"highest":        func(b []byte) { put64(b, highestOffset, 1) },
		"figures":        func(b []byte) { put32(b, significantFiguresOffset, 9) },
		"geometry":       func(b []byte) { put64(b, highestOffset, 100_000) }, // more counts than the length word
		"counts length":  func(b []byte) { put64(b, countsLengthOffset, le64(b, countsLengthOffset)-1) },
		"label length":   func(b []byte) { put32(b, labelLengthOffset, MaxLabelLength+1) },
		"negative label": func(b []byte) { put32(b, labelLengthOffset, -1) },
	} {
		b := good()
		spoil(b)
		_, err := NewReader(b)
		require.ErrorIs(t, err, ErrCorrupt, name)
		require.ErrorIs(t, err, duty.ErrCorrupt, name)
	}
}

func TestSnapshotRejectsBadWords(t *testing.T) {
	cfg := Config{Lowest: 1, Highest: 1000, SignificantFigures: 2}
	for name, spoil := range map[string]func(b []byte){
		"negative count": func(b []byte) { put64(b, countsOffset+8, -1) },
		"sum overflows":  func(b []byte) { put64(b, countsOffset, math.MaxInt64) },
		"total above":    func(b []byte) { put64(b, totalCountOffset, 100) },
		"clamped above":  func(b []byte) { put64(b, clampedOffset, 100) },
		"min below":      func(b []byte) { put64(b, minOffset, 0) },
		"max above":      func(b []byte) { put64(b, maxOffset, 1001) },
		"magic changed":  func(b []byte) { put64(b, 0, 1) },
	} {
		w, region := newRecorder(t, cfg, "h")
		w.RecordN(5, 3)
		rd := newReader(t, region)
		spoil(region)
		var s Snapshot
		err := rd.Snapshot(&s)
		require.ErrorIs(t, err, ErrCorrupt, name)
		require.ErrorIs(t, err, duty.ErrCorrupt, name)
	}
}

// The reader keeps the header it validated: a header rewritten afterwards
// (a larger counts length) cannot make it read beyond the region.
func TestReaderKeepsItsHeader(t *testing.T) {
	w, region := newRecorder(t, ns, "h")
	rd := newReader(t, region)
	put64(region, highestOffset, math.MaxInt64)
	put64(region, countsLengthOffset, 1<<40)
	w.Record(7)
	s := snapshot(t, rd)
	require.Equal(t, ns, s.Config)
	require.Equal(t, int64(1), s.TotalCount)
}
