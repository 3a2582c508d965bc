package main

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
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

// latency is one agent's latency histogram, handed to the printer without
// slowing the agent down. The agent records into cur, which only it
// touches. The printer asks for the values (want), and the agent, at its
// next record, swaps cur with the empty spare under the mutex (a pointer
// swap: taken at most once per printer tick, never contended on the
// per-message path, which costs one atomic load). The printer, a little
// later, merges the spare into its own histograms and resets it, under
// the mutex, off the agent's thread.
type latency struct {
	cur *hdrhistogram.Histogram // the agent's
	// clamped counts values outside [0, histMax] recorded at the bound
	// (a negative one means the clocks of two processes disagree). Written
	// by the agent; read after it stopped.
	clamped int64

	_    [64]byte    // a cache line between the agent's words and the printer's
	want atomic.Bool // printer → agent: hand over what you have

	mu    sync.Mutex
	spare *hdrhistogram.Histogram // guarded by mu; empty unless ready
	ready bool                    // guarded by mu: spare holds handed-over values
}

func newLatency() *latency { return &latency{cur: newHist(), spare: newHist()} }

// record adds now-origin. Agent thread only; allocation-free.
func (l *latency) record(now, origin int64) {
	v := now - origin
	if v < 0 || v > histMax {
		l.clamped++
		v = min(max(v, 0), histMax)
	}
	_ = l.cur.RecordValue(v) // in range: cannot fail
	if l.want.Load() {
		l.handOver()
	}
}

func (l *latency) handOver() {
	l.mu.Lock()
	if !l.ready {
		l.cur, l.spare = l.spare, l.cur
		l.ready = true
	}
	l.mu.Unlock()
	l.want.Store(false)
}

// ask asks the agent to hand over what it has recorded, at its next
// record. Printer goroutine.
func (l *latency) ask() { l.want.Store(true) }

// take merges what the agent has handed over, if anything, into each of
// dst. Printer goroutine.
func (l *latency) take(dst ...*hdrhistogram.Histogram) {
	l.mu.Lock()
	if l.ready {
		for _, d := range dst {
			d.Merge(l.spare)
		}
		l.spare.Reset()
		l.ready = false
	}
	l.mu.Unlock()
}

// final merges everything recorded and not yet taken into dst. Call it
// only after the agent has stopped (its runner's Done), which orders the
// agent's writes before these reads.
func (l *latency) final(dst *hdrhistogram.Histogram) {
	l.take(dst)
	dst.Merge(l.cur)
	l.cur.Reset()
}
