package main

import (
	"cmp"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/internal/pad"
)

// The c2c probe (docs/workloads.md, "The c2c probe and phases"): the
// median ns per round trip over batches of probeBatch during about
// probeBurst, the first probeSkip dropped (the ponger may be waking up).
const (
	probeBatch = 32
	probeBurst = 3 * time.Millisecond
	probeSkip  = 8
	probeStop  = -1 // tells the ponger to return
)

// probeLine is the cache line the two threads bounce, padded so that
// nothing shares its line or the adjacent one the prefetcher pairs with it.
type probeLine struct {
	_ pad.Pair
	v atomic.Int64
	_ [pad.PairSize - 8]byte
}

// probe measures the round trip between cpus[0] and cpus[1]; NaN with
// fewer than two CPUs.
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
	if err := cmp.Or(errs[0], errs[1]); err != nil {
		return 0, err
	}
	return median(samples), nil
}
