package publication

import (
	"runtime"
	"sync"
	"testing"

	"github.com/dutyrt/duty/ringbuf"
)

// BenchmarkPublicationOfferPoll measures one 32-byte offer plus the poll
// that consumes it, on one goroutine: the per-message cost without
// cross-core traffic. Baselines in the same run: a heap ringbuf.OneToOne
// write+read and a ringbuf.ManyToOne (the file ring's algorithm) on the
// heap. "fragmented" offers 1000 bytes as 4 fragments with a 256-byte MTU.
func BenchmarkPublicationOfferPoll(b *testing.B) {
	const capacity = 64 << 10
	payload := make([]byte, 32)
	sink := 0
	h := func(_ int32, p []byte) { sink += len(p) }
	b.Run("onetoone-heap", func(b *testing.B) {
		buf, _ := ringbuf.Allocate(capacity)
		r, _ := ringbuf.NewOneToOne(buf)
		b.ReportAllocs()
		for b.Loop() {
			if err := r.Write(pubTypeID, payload); err != nil {
				b.Fatal(err)
			}
			if _, err := r.Read(h, ringbuf.NoLimit); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("manytoone-heap", func(b *testing.B) {
		buf, _ := ringbuf.Allocate(capacity)
		r, _ := ringbuf.NewManyToOne(buf)
		b.ReportAllocs()
		for b.Loop() {
			if err := r.Write(pubTypeID, payload); err != nil {
				b.Fatal(err)
			}
			if _, err := r.Read(h, ringbuf.NoLimit); err != nil {
				b.Fatal(err)
			}
		}
	})
	pubRun := func(b *testing.B, msg []byte, opts ...Option) {
		p := newTestPublication(b, capacity, opts...)
		s := newTestSubscription(b, p)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := p.Offer(pubTypeID, msg); err != nil {
				b.Fatal(err)
			}
			if _, err := s.Poll(h, ringbuf.NoLimit); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("publication", func(b *testing.B) { pubRun(b, payload) })
	b.Run("publication-fragmented", func(b *testing.B) { pubRun(b, make([]byte, 1000), withMTU(256)) })
}

// BenchmarkPublicationThroughput streams 32-byte messages from one
// publisher goroutine to N subscriber goroutines (each with its own
// Subscription) with busy spinning; ns/op is per message. The baseline in
// the same run is a heap ringbuf.OneToOne with one producer and one
// consumer goroutine. On a 2-core machine the 2-subscriber variant has
// three busy goroutines: oversubscribed by design, like W2 (docs/workloads.md, "Workloads and rules").
func BenchmarkPublicationThroughput(b *testing.B) {
	const capacity = 64 << 10
	payload := make([]byte, 32)
	b.Run("onetoone-heap", func(b *testing.B) {
		buf, _ := ringbuf.Allocate(capacity)
		r, _ := ringbuf.NewOneToOne(buf)
		n := b.N
		var wg sync.WaitGroup
		b.ReportAllocs()
		b.ResetTimer()
		wg.Go(func() {
			for got := 0; got < n; {
				k, _ := r.Read(func(int32, []byte) {}, ringbuf.NoLimit)
				if k == 0 {
					runtime.Gosched()
				}
				got += k
			}
		})
		for range n {
			for r.Write(pubTypeID, payload) != nil {
				runtime.Gosched()
			}
		}
		wg.Wait()
	})
	for _, subs := range []int{1, 2} {
		b.Run("publication-"+string(rune('0'+subs))+"sub", func(b *testing.B) {
			p := newTestPublication(b, capacity)
			ss := make([]*Subscription, subs)
			for i := range ss {
				ss[i] = newTestSubscription(b, p)
			}
			n := b.N
			var wg sync.WaitGroup
			b.ReportAllocs()
			b.ResetTimer()
			for _, s := range ss {
				wg.Go(func() {
					for got := 0; got < n; {
						k, err := s.Poll(func(int32, []byte) {}, ringbuf.NoLimit)
						if err != nil {
							panic(err)
						}
						if k == 0 {
							runtime.Gosched()
						}
						got += k
					}
				})
			}
			for range n {
				for {
					_, err := p.Offer(pubTypeID, payload)
					if err == nil {
						break
					}
					if err != ErrBackPressured && err != ErrAdminAction {
						panic(err)
					}
					runtime.Gosched()
				}
			}
			wg.Wait()
		})
	}
}
