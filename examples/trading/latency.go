package main

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dutyrt/duty/histogram"
	"github.com/dutyrt/duty/ipc"
)

// Histogram range: 1 ns to a minute, 3 significant digits.
const (
	histMin     = 1
	histMax     = int64(time.Minute)
	histSigFigs = 3
)

func newHist() *hdrhistogram.Histogram { return hdrhistogram.New(histMin, histMax, histSigFigs) }

// percentile returns h's nearest-rank percentile perMille/10: the
// ⌈perMille·n/1000⌉-th smallest of its n values (at the top of its
// histogram bucket, so within the 3 significant digits), or 0 when h is
// empty. hdrhistogram's own ValueAtQuantile rounds the rank to the nearest
// instead (of 6 values its p90 is the 5th); asking it for the rank r as
// r−¼ of n, which rounds and ceils to r alike, gives the nearest rank
// without walking the buckets here. Per mille, so that ranks are exact
// integers (99.9·1000/100 is not exactly 999 in floating point).
func percentile(h *hdrhistogram.Histogram, perMille int64) int64 {
	n := h.TotalCount()
	if n == 0 {
		return 0
	}
	rank := min(max((perMille*n+999)/1000, 1), n)
	return h.ValueAtQuantile(100 * (float64(rank) - 0.25) / float64(n))
}

// histConfig is the library histogram's configuration for every latency
// of the demo (the same range as newHist's).
var histConfig = histogram.Config{Lowest: histMin, Highest: histMax, SignificantFigures: histSigFigs}

// latency is one agent's latency histogram, in shared memory
// (histogram): the agent records into it from its duty cycle (no lock,
// no allocation), dutystat and its exporter read it live from another
// process, and the printer reads what was recorded since its last look by
// difference of two snapshots, off the agent's thread. A value outside
// 1 ns..histMax (a negative one means the clocks of two processes
// disagree) is recorded at the bound and counted as clamped.
type latency struct {
	rec *histogram.Recorder // the agent's
	rd  *histogram.Reader

	mu             sync.Mutex         // the printer's and run's: take and final
	now, last, gap histogram.Snapshot // guarded by mu
}

// fileLatency is histogram i of a histograms file this process created.
func fileLatency(f *ipc.HistogramsFile, i int) *latency {
	return &latency{rec: f.Recorder(i), rd: f.Reader(i)}
}

// heapLatency is a latency whose histogram is on the heap (tests).
func heapLatency(label string) (*latency, error) {
	region, err := histogram.NewRegion(histConfig)
	if err != nil {
		return nil, err
	}
	rec, err := histogram.NewRecorder(region, histConfig, label)
	if err != nil {
		return nil, err
	}
	rd, err := histogram.NewReader(region)
	if err != nil {
		return nil, err
	}
	return &latency{rec: rec, rd: rd}, nil
}

// record adds now-origin. Agent thread only; allocation-free.
func (l *latency) record(now, origin int64) { l.rec.Record(now - origin) }

// take merges what was recorded since the last take into each of dst.
// Printer goroutine, or run's after the agents stopped.
func (l *latency) take(dst ...*hdrhistogram.Histogram) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rd.Snapshot(&l.now) != nil {
		return // our own region: never corrupt
	}
	l.now.CopyTo(&l.gap)
	if l.last.Label != "" && l.gap.Sub(&l.last) != nil {
		return // the same histogram both times: never
	}
	if l.gap.TotalCount > 0 { // the first take has nothing to subtract
		h := l.gap.Histogram()
		for _, d := range dst {
			d.Merge(h)
		}
	}
	l.now.CopyTo(&l.last)
}

// final merges everything recorded and not yet taken into dst. Call it
// after the agent has stopped (its runner's Done).
func (l *latency) final(dst *hdrhistogram.Histogram) { l.take(dst) }

// clamped returns how many values were recorded at a bound of the range.
func (l *latency) clamped() int64 {
	var s histogram.Snapshot
	if l.rd.Snapshot(&s) != nil {
		return 0
	}
	return s.Clamped
}
