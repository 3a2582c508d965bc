package broadcast

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Benchmarks. Absolute timings on the shared 2-core machines are noisy;
// compare each broadcast figure with the channel baseline of the same run
// (docs/broadcast.md):
//
//	go test -run '^$' -bench . -benchmem -count 5 ./broadcast/

const benchCapacity = 64 * 1024

var benchSizes = []int{32, 256}

// chanMsg is what the channel baseline carries: the payload is copied in and
// out, as the broadcast copies it into the ring and (copy receiver) out.
type chanMsg struct {
	typeID int32
	n      int
	b      [256]byte
}

func benchBuf(b *testing.B) []byte {
	buf, err := NewBuffer(benchCapacity)
	if err != nil {
		b.Fatal(err)
	}
	return buf
}

// Baseline: one buffered channel, send then receive on one goroutine.
func BenchmarkChanSendReceive(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprint(size, "B"), func(b *testing.B) {
			ch := make(chan chanMsg, 1024)
			payload := make([]byte, size)
			out := make([]byte, size)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				var m chanMsg
				m.typeID, m.n = 1, copy(m.b[:], payload)
				ch <- m
				r := <-ch
				copy(out, r.b[:r.n])
			}
		})
	}
}

func BenchmarkTransmit(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprint(size, "B"), func(b *testing.B) {
			tx, _ := NewTransmitter(benchBuf(b))
			payload := make([]byte, size)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				if err := tx.Transmit(1, payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Transmit, then receive with the zero-copy receiver: copy the payload out
// and validate, as a careful caller does.
func BenchmarkTransmitReceive(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprint(size, "B"), func(b *testing.B) {
			buf := benchBuf(b)
			tx, _ := NewTransmitter(buf)
			rx, _ := NewReceiver(buf)
			payload := make([]byte, size)
			out := make([]byte, size)
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				_ = tx.Transmit(1, payload)
				if !rx.ReceiveNext() {
					b.Fatal("no message")
				}
				copy(out, rx.Payload())
				if !rx.Validate() {
					b.Fatal("torn")
				}
			}
		})
	}
}

func BenchmarkTransmitCopyReceive(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(fmt.Sprint(size, "B"), func(b *testing.B) {
			buf := benchBuf(b)
			tx, _ := NewTransmitter(buf)
			rx, _ := NewReceiver(buf)
			cr := NewCopyReceiver(rx, 0)
			payload := make([]byte, size)
			out := make([]byte, size)
			handler := func(_ int32, p []byte) { copy(out, p) }
			b.ReportAllocs()
			b.SetBytes(int64(size))
			for b.Loop() {
				_ = tx.Transmit(1, payload)
				if n, err := cr.Receive(handler); n != 1 || err != nil {
					b.Fatal(n, err)
				}
			}
		})
	}
}

// Fan-out to 4 consumers on one goroutine: one transmit and 4 copy receives,
// against 4 channel sends and 4 receives.
func BenchmarkFanout4(b *testing.B) {
	const fan = 4
	const size = 32
	b.Run("broadcast", func(b *testing.B) {
		buf := benchBuf(b)
		tx, _ := NewTransmitter(buf)
		var crs [fan]*CopyReceiver
		for i := range crs {
			rx, _ := NewReceiver(buf)
			crs[i] = NewCopyReceiver(rx, 0)
		}
		payload := make([]byte, size)
		out := make([]byte, size)
		handler := func(_ int32, p []byte) { copy(out, p) }
		b.ReportAllocs()
		for b.Loop() {
			_ = tx.Transmit(1, payload)
			for _, cr := range crs {
				if n, err := cr.Receive(handler); n != 1 || err != nil {
					b.Fatal(n, err)
				}
			}
		}
	})
	b.Run("chan", func(b *testing.B) {
		var chs [fan]chan chanMsg
		for i := range chs {
			chs[i] = make(chan chanMsg, 1024)
		}
		payload := make([]byte, size)
		out := make([]byte, size)
		b.ReportAllocs()
		for b.Loop() {
			var m chanMsg
			m.typeID, m.n = 1, copy(m.b[:], payload)
			for _, ch := range chs {
				ch <- m
			}
			for _, ch := range chs {
				r := <-ch
				copy(out, r.b[:r.n])
			}
		}
	})
}

// One transmitter (the benchmark loop) and one receiver goroutine on the
// other core. The broadcast never waits: "delivered/op" is the fraction of
// messages the spinning copy receiver got. The channel baseline delivers all
// (it blocks the sender when full). Very sensitive to what else runs on the
// machine; the same-goroutine benchmarks above are the ones to compare.
func BenchmarkConcurrent(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs 2 Ps")
	}
	const size = 32
	b.Run("broadcast", func(b *testing.B) {
		buf := benchBuf(b)
		tx, _ := NewTransmitter(buf)
		rx, _ := NewReceiver(buf)
		cr := NewCopyReceiver(rx, 0)
		var stop atomic.Bool
		var delivered int64
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]byte, size)
			handler := func(_ int32, p []byte) { copy(out, p); delivered++ }
			for !stop.Load() {
				_, _ = cr.Receive(handler)
			}
		}()
		payload := make([]byte, size)
		b.ReportAllocs()
		for b.Loop() {
			_ = tx.Transmit(1, payload)
		}
		stop.Store(true)
		wg.Wait()
		b.ReportMetric(float64(delivered)/float64(b.N), "delivered/op")
	})
	b.Run("chan", func(b *testing.B) {
		ch := make(chan chanMsg, 1024)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := make([]byte, size)
			for m := range ch {
				copy(out, m.b[:m.n])
			}
		}()
		payload := make([]byte, size)
		b.ReportAllocs()
		for b.Loop() {
			var m chanMsg
			m.typeID, m.n = 1, copy(m.b[:], payload)
			ch <- m
		}
		close(ch)
		wg.Wait()
	})
}
