package main

import (
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/internal/pad"
)

// The c2c probe (docs/workloads.md, "The c2c probe and phases"): two
// threads, each locked to its OS thread and pinned to one of the first two
// CPUs, bounce one cache line with atomic stores; the result is the median
// ns per round trip over batches of probeBatch round trips during about
// probeBurst.
const (
	probeBatch = 32
	probeBurst = 3 * time.Millisecond
	// probeSkip batches are dropped at the start: the ponger's thread may
	// still be waking up.
	probeSkip = 8
)

// probeLine is the cache line the two threads bounce, padded on both sides
// so nothing else shares its line (or the adjacent one the prefetcher
// pairs with it).
type probeLine struct {
	_ pad.Pair
	v atomic.Int64
	_ [pad.PairSize - 8]byte
}

// probeStop tells the ponger to return.
const probeStop = -1

// probe measures the inter-core round trip between cpus[0] and cpus[1] and
// returns the median ns per round trip. With fewer than two CPUs there is
// no inter-core path: it returns NaN (phase "unprobed").
func probe(cpus []int) (float64, error) {
	if len(cpus) < 2 {
		return math.NaN(), nil
	}
	line := new(probeLine)
	samples := make([]float64, 0, 4096)
	var ready, done sync.WaitGroup
	var errs [2]error
	ready.Add(2)
	done.Add(2)
	go func() { // ponger: answers every odd value with the next even one
		defer done.Done()
		runtime.LockOSThread() // never unlocked: the pinned thread ends with the goroutine
		errs[1] = pinTo(cpus[1])
		ready.Done()
		if errs[1] != nil {
			return
		}
		for {
			v := line.v.Load()
			if v == probeStop {
				return
			}
			if v&1 == 1 {
				line.v.Store(v + 1)
			}
		}
	}()
	go func() { // pinger
		defer done.Done()
		runtime.LockOSThread()
		errs[0] = pinTo(cpus[0])
		ready.Done()
		ready.Wait()
		defer line.v.Store(probeStop)
		if errs[0] != nil || errs[1] != nil {
			return
		}
		var v int64
		start := time.Now()
		for b := 0; len(samples) < cap(samples); b++ {
			t0 := time.Now()
			for range probeBatch {
				v++
				line.v.Store(v)
				v++
				for line.v.Load() != v {
				}
			}
			el := time.Since(t0)
			if b >= probeSkip {
				samples = append(samples, float64(el.Nanoseconds())/probeBatch)
			}
			if time.Since(start) > probeBurst && len(samples) >= 16 {
				break
			}
		}
	}()
	done.Wait()
	if errs[0] != nil {
		return 0, errs[0]
	}
	if errs[1] != nil {
		return 0, errs[1]
	}
	return median(samples), nil
}
