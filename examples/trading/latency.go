package main

import (
	"sync"
	"time"

	"github.com/dutyrt/duty/histogram"
	"github.com/dutyrt/duty/ipc"
)

// histConfig is every latency's range: 1 ns to a minute, 3 significant
// digits.
var histConfig = histogram.Config{Lowest: 1, Highest: int64(time.Minute), SignificantFigures: 3}

// percentile returns s's nearest-rank percentile perMille/10: the
// ⌈perMille·n/1000⌉-th smallest of its n values (at the top of its
// bucket), 0 when empty. ValueAtQuantile rounds the rank to the nearest;
// asking it for rank r as r−¼ of n gives the nearest rank.
func percentile(s *histogram.Snapshot, perMille int64) int64 {
	n := s.TotalCount
	if n == 0 {
		return 0
	}
	rank := min(max((perMille*n+999)/1000, 1), n)
	return s.ValueAtQuantile(100 * (float64(rank) - 0.25) / float64(n))
}

// latency is one agent's latency histogram in shared memory: the agent
// records into it from its duty cycle (no lock, no allocation), dutystat
// reads it live, the printer takes what was recorded since its last look.
// A value outside the range (two processes' clocks disagree) is recorded
// at the bound and counted as clamped.
type latency struct {
	rec *histogram.Recorder
	rd  *histogram.Reader

	mu             sync.Mutex // the printer's and run's
	now, last, gap histogram.Snapshot
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

// interval returns what was recorded since the last call (empty if the
// histogram cannot be read), valid until the next call.
func (l *latency) interval() *histogram.Snapshot {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.rd.Snapshot(&l.now) != nil {
		return &histogram.Snapshot{}
	}
	l.now.CopyTo(&l.gap)
	if l.last.Label != "" {
		_ = l.gap.Sub(&l.last) // the same histogram both times: never fails
	}
	l.now.CopyTo(&l.last)
	return &l.gap
}

// total returns everything recorded (Clamped: how many values were
// clamped); empty if the histogram cannot be read.
func (l *latency) total() histogram.Snapshot {
	var s histogram.Snapshot
	if l.rd.Snapshot(&s) != nil {
		return histogram.Snapshot{}
	}
	return s
}
