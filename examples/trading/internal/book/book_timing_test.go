package book

import (
	"testing"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

// BenchmarkAddCancel rests an order at one of 16 levels and cancels the
// one added 64 steps earlier: book depth stays constant.
func BenchmarkAddCancel(b *testing.B) {
	bk, _ := New(Config{MaxOrders: 4096, MaxLevels: 64})
	b.ReportAllocs()
	id := uint64(1)
	for b.Loop() {
		_, err := bk.Submit(id, msg.Buy, msg.Limit, int64(1000+id%16), 5)
		if err != nil {
			b.Fatal(err)
		}
		if id > 64 {
			if _, err := bk.Cancel(id - 64); err != nil {
				b.Fatal(err)
			}
		}
		id++
	}
}

// BenchmarkMatch: each iteration rests a sell and takes it with a buy IOC
// that crosses two orders (one full, one partial fill).
func BenchmarkMatch(b *testing.B) {
	bk, _ := New(Config{MaxOrders: 4096, MaxLevels: 64})
	b.ReportAllocs()
	id := uint64(1)
	for range 100 {
		_, _ = bk.Submit(id, msg.Sell, msg.Limit, 1000+int64(id%4), 10)
		id++
	}
	for b.Loop() {
		if _, err := bk.Submit(id, msg.Sell, msg.Limit, 1000+int64(id%4), 10); err != nil {
			b.Fatal(err)
		}
		id++
		res, err := bk.Submit(id, msg.Buy, msg.IOC, 1003, 10)
		if err != nil || res.Filled != 10 {
			b.Fatal(err, res.Filled)
		}
		id++
	}
}

// BenchmarkMix is the deterministic add/IOC/cancel mix of the allocation
// test.
func BenchmarkMix(b *testing.B) {
	bk, _ := New(Config{MaxOrders: 1024, MaxLevels: 64})
	b.ReportAllocs()
	id := uint64(1)
	for b.Loop() {
		step(bk, &id)
	}
}
