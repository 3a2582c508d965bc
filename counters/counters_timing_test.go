package counters

import (
	"sync/atomic"
	"testing"

	"github.com/dutyrt/duty/internal/countertype"
)

// Benchmarks. Each group has a baseline measured in the same run: a bare
// sync/atomic word on the heap. See docs/counters.md for the figures and the
// command that reproduces them.

func benchCounter(b *testing.B, n int) (*Manager, []*Counter) {
	m, _, _ := mustManager(b, n, Config{})
	cs := make([]*Counter, n)
	for i := range cs {
		cs[i] = allocate(b, m, "bench", countertype.TotalWork, nil)
	}
	return m, cs
}

func BenchmarkSingle(b *testing.B) {
	_, cs := benchCounter(b, 1)
	c := cs[0]
	var base atomic.Int64
	b.Run("baseline=atomic.Int64.Add", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			base.Add(1)
		}
	})
	b.Run("Increment", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.Add(1)
		}
	})
	b.Run("IncrementSingleWriter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.AddSingleWriter(1)
		}
	})
	b.Run("baseline=atomic.Int64.Store", func(b *testing.B) {
		b.ReportAllocs()
		i := int64(0)
		for b.Loop() {
			i++
			base.Store(i)
		}
	})
	b.Run("Set", func(b *testing.B) {
		b.ReportAllocs()
		i := int64(0)
		for b.Loop() {
			i++
			c.Set(i)
		}
	})
	b.Run("Get", func(b *testing.B) {
		b.ReportAllocs()
		var s int64
		for b.Loop() {
			s += c.Get()
		}
		_ = s
	})
}

// Parallel goroutines each increment their own counter. The baseline packs
// the words next to each other (false sharing); counters sit 128 bytes apart.
func BenchmarkParallelOwnCounter(b *testing.B) {
	_, cs := benchCounter(b, 64)
	var packed [64]atomic.Int64
	b.Run("baseline=packed-atomic-words", func(b *testing.B) {
		var next atomic.Int32
		b.RunParallel(func(pb *testing.PB) {
			w := &packed[next.Add(1)%64]
			for pb.Next() {
				w.Add(1)
			}
		})
	})
	b.Run("counters", func(b *testing.B) {
		var next atomic.Int32
		b.RunParallel(func(pb *testing.PB) {
			c := cs[next.Add(1)%64]
			for pb.Next() {
				c.Add(1)
			}
		})
	})
}

func BenchmarkReader(b *testing.B) {
	m, cs := benchCounter(b, 64)
	for i, c := range cs {
		c.Set(int64(i))
	}
	r := m.Reader()
	vals := make([]int64, 64)
	b.Run("baseline=Value-per-id", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			for id := range 64 {
				vals[id], _ = r.Value(id)
			}
		}
	})
	b.Run("ForEachRecord", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = r.ForEachRecord(func(c Record) bool { vals[c.ID] = c.Value; return true })
		}
	})
	b.Run("ForEach", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = r.forEach(func(id int, _ int32, _ string, _ []byte, v int64) bool { vals[id] = v; return true })
		}
	})
}

func BenchmarkAllocateClose(b *testing.B) {
	m, _, _ := mustManager(b, 4, Config{})
	b.ReportAllocs()
	for b.Loop() {
		c, err := m.Allocate("a label of thirty-two bytes....", countertype.TotalWork, []byte("key"))
		if err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
