package queue

import (
	"runtime"
	"sync"
	"testing"
)

// Benchmarks of each queue beside a buffered channel of the same capacity
// (1024 int64 values), measured in the same run. Compare ratios, never
// absolute figures: the machines are shared 2-vCPU guests whose
// core-to-core latency changes by phases (docs/workloads.md, "The c2c
// probe and phases"). Build with -tags duty_queue_seqcst to measure the
// queues with sync/atomic stores instead of atomicbuf's release store
// (docs/queue.md has both).

const (
	benchCapacity = 1024
	benchBatch    = 64
)

type benchQueue struct {
	name string
	new  func() testPipe[int64]
}

var benchQueues = []benchQueue{
	{"OneToOne", func() testPipe[int64] { q, _ := NewOneToOne[int64](benchCapacity); return q }},
	{"ManyToOne", func() testPipe[int64] { q, _ := NewManyToOne[int64](benchCapacity); return q }},
	{"ManyToMany", func() testPipe[int64] { q, _ := NewManyToMany[int64](benchCapacity); return q }},
}

// BenchmarkOfferPoll: one goroutine offers a batch of 64 then polls it
// back. No cross-core traffic: the instructions of the protocol.
func BenchmarkOfferPoll(b *testing.B) {
	b.Run("chan", func(b *testing.B) {
		ch := make(chan int64, benchCapacity)
		b.ReportAllocs()
		var sink int64
		for i := 0; i < b.N; i += benchBatch {
			for j := range benchBatch {
				ch <- int64(i + j)
			}
			for range benchBatch {
				sink += <-ch
			}
		}
		_ = sink
	})
	for _, bq := range benchQueues {
		b.Run(bq.name, func(b *testing.B) {
			benchOfferPoll(b, bq.new())
		})
	}
}

// benchOfferPoll calls through the concrete type so that Offer and Poll
// can be inlined as a user's code would.
func benchOfferPoll(b *testing.B, p testPipe[int64]) {
	switch q := p.(type) {
	case *OneToOne[int64]:
		offerPoll(b, q)
	case *ManyToOne[int64]:
		offerPoll(b, q)
	case *ManyToMany[int64]:
		offerPoll(b, q)
	}
}

func offerPoll[Q interface {
	Offer(int64) bool
	Poll() (int64, bool)
}](b *testing.B, q Q) {
	b.ReportAllocs()
	var sink int64
	for i := 0; i < b.N; i += benchBatch {
		for j := range benchBatch {
			if !q.Offer(int64(i + j)) {
				b.Fatal("full")
			}
		}
		for range benchBatch {
			v, _ := q.Poll()
			sink += v
		}
	}
	_ = sink
}

// spinLimit is how many failed attempts a spinning side makes before it
// yields: with more busy goroutines than cores (2P1C on two vCPUs) a side
// that never yields holds its core until the scheduler preempts it.
const spinLimit = 100

// BenchmarkThroughput: producers on their own goroutines offer b.N values
// in all (spinning when full), the benchmark goroutine drains them
// (spinning when empty, batches of up to 256). The channel baseline
// blocks in send and receive.
func BenchmarkThroughput(b *testing.B) {
	for _, producers := range []int{1, 2} {
		name := map[int]string{1: "1P1C", 2: "2P1C"}[producers]
		b.Run(name+"/chan", func(b *testing.B) {
			ch := make(chan int64, benchCapacity)
			b.ReportAllocs()
			var wg sync.WaitGroup
			for p := range producers {
				wg.Go(func() {
					for i := p; i < b.N; i += producers {
						ch <- int64(i)
					}
				})
			}
			var sink int64
			for range b.N {
				sink += <-ch
			}
			wg.Wait()
			_ = sink
		})
		for _, bq := range benchQueues {
			if producers > 1 && bq.name == "OneToOne" {
				continue
			}
			b.Run(name+"/"+bq.name, func(b *testing.B) {
				switch q := bq.new().(type) {
				case *OneToOne[int64]:
					throughput(b, q, producers)
				case *ManyToOne[int64]:
					throughput(b, q, producers)
				case *ManyToMany[int64]:
					throughput(b, q, producers)
				}
			})
		}
	}
}

func throughput[Q interface {
	Offer(int64) bool
	Drain(func(int64), int) int
}](b *testing.B, q Q, producers int) {
	b.ReportAllocs()
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := p; i < b.N; i += producers {
				for spins := 0; !q.Offer(int64(i)); spins++ {
					if spins == spinLimit {
						runtime.Gosched()
						spins = 0
					}
				}
			}
		})
	}
	var sink int64
	fn := func(v int64) { sink += v }
	for n, spins := 0, 0; n < b.N; {
		got := q.Drain(fn, 256)
		n += got
		if got == 0 {
			if spins++; spins == spinLimit {
				runtime.Gosched()
				spins = 0
			}
		}
	}
	wg.Wait()
	_ = sink
}
