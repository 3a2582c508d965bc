package timer

import (
	"container/heap"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"testing"
)

// The baseline: a binary heap of deadlines (container/heap) with
// cancellation by index, the usual alternative to a wheel. Items come from
// a free list and go into the heap as pointers, so it allocates nothing
// once warm either: the comparison is of the algorithms, O(log n) against
// a scan of one tick.
type hitem struct {
	deadline int64
	index    int
}

type hqueue []*hitem

func (q hqueue) Len() int           { return len(q) }
func (q hqueue) Less(i, j int) bool { return q[i].deadline < q[j].deadline }
func (q hqueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *hqueue) Push(x any) { it := x.(*hitem); it.index = len(*q); *q = append(*q, it) }
func (q *hqueue) Pop() any {
	old := *q
	it := old[len(old)-1]
	*q = old[:len(old)-1]
	return it
}

type heapTimers struct {
	q    hqueue
	free []*hitem
}

func (h *heapTimers) schedule(deadline int64) *hitem {
	var it *hitem
	if n := len(h.free); n > 0 {
		it, h.free = h.free[n-1], h.free[:n-1]
	} else {
		it = new(hitem)
	}
	it.deadline = deadline
	heap.Push(&h.q, it)
	return it
}

func (h *heapTimers) cancel(it *hitem) {
	heap.Remove(&h.q, it.index)
	h.free = append(h.free, it)
}

func (h *heapTimers) poll(now int64, f func(now int64, it *hitem) bool, limit int) int {
	n := 0
	for n < limit && len(h.q) > 0 && h.q[0].deadline <= now {
		it := heap.Pop(&h.q).(*hitem)
		n++
		f(now, it)
		h.free = append(h.free, it)
	}
	return n
}

const benchResolution = 1 << 10 // ns, about 1 µs

// wheelFor sizes a wheel as a user would: one rotation covers span.
func wheelFor(b *testing.B, span int64) *Wheel {
	ticks := 1 << bits.Len64(uint64(span/benchResolution))
	w, err := NewWheel(Config{Resolution: benchResolution, TicksPerWheel: ticks})
	if err != nil {
		b.Fatal(err)
	}
	return w
}

var benchSizes = []int{1_000, 100_000}

// BenchmarkScheduleCancel: with n timers pending at random deadlines up to
// n µs ahead, schedule one more and cancel it. Reproduce docs/timer.md with
//
//	go test -run '^$' -bench 'BenchmarkScheduleCancel|BenchmarkSchedulePoll' -count 5 ./timer/
func BenchmarkScheduleCancel(b *testing.B) {
	for _, n := range benchSizes {
		span := int64(n) * 1000
		r := rand.New(rand.NewPCG(1, 2))
		deadlines := make([]int64, 4096)
		for i := range deadlines {
			deadlines[i] = r.Int64N(span)
		}
		b.Run(fmt.Sprintf("wheel/timers=%d", n), func(b *testing.B) {
			w := wheelFor(b, span)
			for range n {
				w.Schedule(r.Int64N(span))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				id, _ := w.Schedule(deadlines[i&4095])
				w.Cancel(id)
			}
		})
		b.Run(fmt.Sprintf("heap/timers=%d", n), func(b *testing.B) {
			var h heapTimers
			for range n {
				h.schedule(r.Int64N(span))
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				h.cancel(h.schedule(deadlines[i&4095]))
			}
		})
	}
}

// BenchmarkSchedulePoll is a steady state of n pending timers with the same
// timeout: each op moves time by 100 ns, schedules a timer 100n ns ahead
// and polls, so about one timer expires per op.
func BenchmarkSchedulePoll(b *testing.B) {
	const step = 100
	for _, n := range benchSizes {
		timeout := int64(n) * step
		b.Run(fmt.Sprintf("wheel/timers=%d", n), func(b *testing.B) {
			w := wheelFor(b, timeout)
			var s sink
			now := int64(0)
			for range 2 * n { // fill, and let the ticks reach their size
				now += step
				w.Schedule(now + timeout)
				w.Poll(now, s.onTimer, 100)
			}
			s.n = 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				now += step
				w.Schedule(now + timeout)
				w.Poll(now, s.onTimer, 100)
			}
			b.StopTimer()
			if s.n < b.N-2*benchResolution/step-10 || w.TimerCount() > n+benchResolution/step+10 {
				b.Fatalf("expired %d of %d, %d pending", s.n, b.N, w.TimerCount())
			}
		})
		b.Run(fmt.Sprintf("heap/timers=%d", n), func(b *testing.B) {
			var h heapTimers
			expired := 0
			f := func(int64, *hitem) bool { expired++; return true }
			now := int64(0)
			for range 2 * n {
				now += step
				h.schedule(now + timeout)
				h.poll(now, f, 100)
			}
			expired = 0
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				now += step
				h.schedule(now + timeout)
				h.poll(now, f, 100)
			}
			b.StopTimer()
			if expired != b.N {
				b.Fatalf("expired %d of %d", expired, b.N)
			}
		})
	}
}
