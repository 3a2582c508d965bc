package ipc

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty"
	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/histogram"
)

// histogramsOwnerRole is the child role of the cross-process histograms
// test, dispatched by this init function (before TestMain), as
// countersOwnerRole is.
const histogramsOwnerRole = "histograms-owner"

func init() {
	if os.Getenv(childEnv) != histogramsOwnerRole {
		return
	}
	if err := childHistogramsOwner(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "child", histogramsOwnerRole, "failed:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

var testHistogramSpecs = []HistogramSpec{
	{Label: "tick-to-order", Config: histogram.Config{Lowest: 1, Highest: 10_000_000_000, SignificantFigures: 3}},
	{Label: "tick-to-trade", Config: histogram.Config{Lowest: 1000, Highest: 60_000_000_000, SignificantFigures: 2}},
	{Label: "", Config: histogram.Config{Lowest: 1, Highest: 2, SignificantFigures: 1}},
}

// childHistogramsOwner creates the histograms file DUTY_IPC_DIR/DUTY_IPC_NAME
// with testHistogramSpecs and obeys commands one line at a time:
//
//	record <i> <value> <n>  -> records value n times in histogram i, one by one; "recorded"
//	crash                   -> exits with status 3 without closing anything
func childHistogramsOwner(in io.Reader, out io.Writer) error {
	hf, err := CreateHistograms(os.Getenv("DUTY_IPC_DIR"), os.Getenv("DUTY_IPC_NAME"), testHistogramSpecs)
	if err != nil {
		return err
	}
	defer hf.Close()
	if err := hf.File.Heartbeat(time.Now().UnixMilli()); err != nil {
		return err
	}
	fmt.Fprintln(out, "ready", hf.File.Path())
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		var i int
		var v, n int64
		switch line := sc.Text(); {
		case strings.HasPrefix(line, "record "):
			if _, err := fmt.Sscanf(line, "record %d %d %d", &i, &v, &n); err != nil {
				return err
			}
			for range n {
				hf.Recorder(i).Record(v)
			}
			fmt.Fprintln(out, "recorded")
		case line == "crash":
			os.Exit(3)
		default:
			return fmt.Errorf("unknown command %q", line)
		}
	}
	return sc.Err()
}

// TestCrossProcessHistograms: a child records; this process snapshots its
// histograms through a read-only mapping while the child records a burst
// (totals and counts never decrease), and again after the child died
// without closing the file.
func TestCrossProcessHistograms(t *testing.T) {
	dir := testDir(t)
	p := startChild(t, "", histogramsOwnerRole, "DUTY_IPC_DIR="+dir, "DUTY_IPC_NAME=latency").Start(t)
	ready := p.Line(t)
	require.True(t, strings.HasPrefix(ready, "ready "), ready)

	require.Equal(t, "recorded", ask(t, p, "record 0 1500 10"))
	view, err := OpenHistograms(ctxT(t), filepath.Join(dir, "latency"))
	require.NoError(t, err)
	defer view.Close()
	require.True(t, view.isReadOnly())
	require.Equal(t, 3, view.Len())
	require.Nil(t, view.Recorder(0))
	for i, s := range testHistogramSpecs {
		require.Equal(t, s.Label, view.Reader(i).Label())
		require.Equal(t, s.Config, view.Reader(i).Config())
	}
	var prev, cur histogram.Snapshot
	require.NoError(t, view.Reader(0).Snapshot(&prev))
	require.Equal(t, int64(10), prev.TotalCount)
	require.Equal(t, int64(1500), prev.Min)

	// A burst, snapshotted while it is recorded.
	const burst = 200_000
	_, err = fmt.Fprintf(p.Stdin, "record 0 %d %d\n", 70_000, burst)
	require.NoError(t, err)
	done := p.LineAsync()
	for running := true; running; {
		select {
		case answer := <-done:
			require.Equal(t, "recorded", answer)
			running = false
		default:
		}
		require.NoError(t, view.Reader(0).Snapshot(&cur))
		require.GreaterOrEqual(t, cur.TotalCount, prev.TotalCount)
		for i, c := range prev.Counts {
			require.GreaterOrEqual(t, cur.Counts[i], c)
		}
		cur.CopyTo(&prev)
	}
	require.Equal(t, int64(10+burst), prev.TotalCount)
	require.Equal(t, int64(70_000), prev.Max)

	require.Equal(t, "recorded", ask(t, p, "record 1 99 2")) // clamped to 1000
	require.Equal(t, "recorded", ask(t, p, "record 2 7 1"))  // clamped to 2
	_, err = fmt.Fprintln(p.Stdin, "crash")
	require.NoError(t, err)
	require.Error(t, p.Wait(t))
	require.Equal(t, 3, p.Cmd.ProcessState.ExitCode())

	after, err := OpenHistograms(ctxT(t), filepath.Join(dir, "latency"))
	require.NoError(t, err)
	defer after.Close()
	require.NoError(t, after.Reader(1).Snapshot(&cur))
	require.Equal(t, int64(2), cur.TotalCount)
	require.Equal(t, int64(2), cur.Clamped)
	require.Equal(t, int64(1000), cur.Min)
	require.NoError(t, after.Reader(2).Snapshot(&cur))
	require.Equal(t, int64(1), cur.Clamped)
	require.Equal(t, int64(2), cur.Max)
}

// TestHistogramsFileLayout: the regions follow one another from the
// section's start, each at an 8-byte boundary, and fill the section.
func TestHistogramsFileLayout(t *testing.T) {
	dir := testDir(t)
	hf, err := CreateHistograms(dir, "h", testHistogramSpecs)
	require.NoError(t, err)
	defer hf.Close()
	require.False(t, hf.isReadOnly())
	require.True(t, hf.File.IsOwner())
	require.Equal(t, KindHistograms, hf.File.Kind())
	require.Equal(t, 3, hf.Len())
	require.Nil(t, hf.Recorder(3))
	require.Nil(t, hf.Recorder(-1))
	require.Nil(t, hf.Reader(3))
	hf.Recorder(1).RecordN(5000, 4)

	raw, err := os.ReadFile(hf.File.Path())
	require.NoError(t, err)
	le := binary.LittleEndian
	require.Equal(t, uint32(5), le.Uint32(raw[kindOffset:]))
	off := headerLength
	for i, s := range testHistogramSpecs {
		n, err := histogram.Size(s.Config)
		require.NoError(t, err)
		require.Zero(t, off%8)
		require.Equal(t, uint64(histMagicVersion), le.Uint64(raw[off+histMagicVersionOffset:]), "histogram %d", i)
		require.Equal(t, uint64(s.Config.Lowest), le.Uint64(raw[off+histLowestOffset:]))
		require.Equal(t, s.Label, string(raw[off+histLabelOffset:off+histLabelOffset+len(s.Label)]))
		require.Equal(t, hf.Reader(i).Size(), n)
		off += n
	}
	sec, err := hf.File.Section(0)
	require.NoError(t, err)
	require.Equal(t, off-headerLength, len(sec))
	second, _ := histogram.Size(testHistogramSpecs[0].Config)
	require.Equal(t, uint64(4), le.Uint64(raw[headerLength+second+histTotalCountOffset:]))

	var s histogram.Snapshot
	require.NoError(t, hf.Reader(1).Snapshot(&s))
	require.Equal(t, int64(4), s.TotalCount)
	require.Equal(t, "tick-to-trade", s.Label)
}

// TestHistogramsFileBadArguments covers CreateHistograms's argument checks
// and OpenHistograms on files that are not histograms files or hold bad
// headers.
func TestHistogramsFileBadArguments(t *testing.T) {
	dir := testDir(t)
	for name, specs := range map[string][]HistogramSpec{
		"none":   nil,
		"config": {{Label: "x", Config: histogram.Config{Lowest: 0, Highest: 10, SignificantFigures: 2}}},
		"label":  {{Label: strings.Repeat("x", histogram.MaxLabelLength+1), Config: testHistogramSpecs[0].Config}},
	} {
		_, err := CreateHistograms(dir, "bad", specs)
		require.ErrorIs(t, err, ErrArgument, name)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing left behind")

	cf, err := CreateCounters(dir, "counters", 4, nil)
	require.NoError(t, err)
	defer cf.Close()
	_, err = OpenHistograms(ctxT(t), cf.File.Path())
	require.ErrorIs(t, err, ErrKind)

	// Headers damaged by the owner (or anyone with write access): the
	// reader refuses the file with a corruption error.
	for name, spoil := range map[string]func(sec []byte){
		"magic":   func(sec []byte) { binary.LittleEndian.PutUint32(sec[histMagicVersionOffset:], 1) },
		"config":  func(sec []byte) { binary.LittleEndian.PutUint64(sec[histHighestOffset:], math.MaxInt64) },
		"overrun": func(sec []byte) { binary.LittleEndian.PutUint32(sec[histSignificantFiguresOffset:], 1) },
	} {
		hf, err := CreateHistograms(dir, "damaged-"+name, testHistogramSpecs[:1])
		require.NoError(t, err)
		sec, err := hf.File.Section(0)
		require.NoError(t, err)
		spoil(sec)
		_, err = OpenHistograms(ctxT(t), hf.File.Path())
		require.ErrorIs(t, err, ErrCorrupt, name)
		require.ErrorIs(t, err, duty.ErrCorrupt, name)
		require.NoError(t, hf.Close())
	}
}

// TestOpenHistogramsWaitsForHeaders: a file whose creator has not written
// a header yet (here: never) is waited for, until ctx ends (ErrNotReady)
// or, once it is old, refused as corrupt.
func TestOpenHistogramsWaitsForHeaders(t *testing.T) {
	dir := testDir(t)
	f, err := create(dir, "blank", KindHistograms, []int{4096})
	require.NoError(t, err)
	defer f.Close()

	ctx, cancel := context.WithCancel(ctxT(t))
	cancel()
	_, err = OpenHistograms(ctx, f.Path(), withPollInterval(time.Millisecond))
	require.ErrorIs(t, err, ErrNotReady)

	late := WithClock(clock.Func(func() time.Time { return f.Created().Add(histogramsReadyWait + time.Second) }))
	_, err = OpenHistograms(ctxT(t), f.Path(), late)
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorIs(t, err, histogram.ErrNotReady)
}

// The histogram region's layout, from docs/layouts.md (the histogram
// package keeps its offsets unexported).
const (
	histMagicVersionOffset             = 0
	histLowestOffset                   = 8
	histHighestOffset                  = 16
	histSignificantFiguresOffset       = 24
	histLabelOffset                    = 48
	histTotalCountOffset               = 128
	histMagicVersion             int64 = 1<<32 | 0x54534948
)
