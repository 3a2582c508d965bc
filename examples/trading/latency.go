package main

import (
	"sync"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dutyrt/duty/histogram"
	"github.com/dutyrt/duty/ipc"
)

// histConfig is every latency's range: 1 ns to a minute, 3 significant
// digits.
var histConfig = histogram.Config{Lowest: 1, Highest: int64(time.Minute), SignificantFigures: 3}

func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(histConfig.Lowest, histConfig.Highest, int(histConfig.SignificantFigures))
}

// percentile returns h's nearest-rank percentile perMille/10: the
// ⌈perMille·n/1000⌉-th smallest of its n values (at the top of its
// bucket), or 0 when h is empty. ValueAtQuantile rounds the rank to the
// nearest instead; asking it for rank r as r−¼ of n gives the nearest
// rank. Per mille, so that ranks are exact integers.
func percentile(h *hdrhistogram.Histogram, perMille int64) int64 {
	n := h.TotalCount()
	if n == 0 {
		return 0
	}
	rank := min(max((perMille*n+999)/1000, 1), n)
	return h.ValueAtQuantile(100 * (float64(rank) - 0.25) / float64(n))
}

// latency is one agent's latency histogram in shared memory: the agent
// records into it from its duty cycle (no lock, no allocation), dutystat
// reads it live from another process, the printer takes what was
// recorded since its last look. A value outside the range (a negative
// one: two processes' clocks disagree) is recorded at the bound and
// counted as clamped.
type latency struct {
	rec *histogram.Recorder
	rd  *histogram.Reader

	mu        sync.Mutex // the printer's and run's
	now, last histogram.Snapshot
}

// fileLatency is histogram i of a histograms file this process created.
func fileLatency(f *ipc.HistogramsFile, i int) *latency {
	return &latency{rec: f.Recorder(i), rd: f.Reader(i)}
}

// heapLatency is a latency whose histogram is on the heap.
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
	return &latency{rec: rec, rd: rd}, err
}

// record adds now-origin. Agent thread only; allocation-free.
func (l *latency) record(now, origin int64) { l.rec.Record(now - origin) }

// interval returns what was recorded since the last call.
func (l *latency) interval() *hdrhistogram.Histogram {
	l.mu.Lock()
	defer l.mu.Unlock()
	var gap histogram.Snapshot
	if l.rd.Snapshot(&l.now) != nil {
		return newHist()
	}
	l.now.CopyTo(&gap)
	if l.last.Label != "" {
		_ = gap.Sub(&l.last) // the same histogram both times: never fails
	}
	l.now.CopyTo(&l.last)
	return gap.Histogram()
}

// total returns everything recorded, and how many values were clamped.
func (l *latency) total() (*hdrhistogram.Histogram, int64) {
	var s histogram.Snapshot
	if l.rd.Snapshot(&s) != nil {
		return newHist(), 0
	}
	return s.Histogram(), s.Clamped
}
