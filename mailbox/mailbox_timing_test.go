package mailbox_test

import (
	"encoding/binary"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// Benchmarks of the mailbox layer against the bare many-to-one ring under
// it and a Go channel, in the same run. Each benchmark has sub-benchmarks
// per variant, so one `go test -bench` invocation measures all of them;
// docs/mailbox.md gives the command and the ratios. Every consumer checks
// the sequence number in every message.

const benchBatch = 64

func newBenchMailbox(b *testing.B) *mailbox.Mailbox {
	mb, err := mailbox.New(mailbox.Config{Capacity: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	return mb
}

func newBenchRing(b *testing.B) *ringbuf.ManyToOne {
	buf, err := ringbuf.Allocate(1 << 16)
	if err != nil {
		b.Fatal(err)
	}
	r, err := ringbuf.NewManyToOne(buf)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// BenchmarkSendDrain is the single-goroutine cost of one 32-byte message:
// send 64, then drain them. No cross-core traffic: the instructions of each
// layer.
func BenchmarkSendDrain(b *testing.B) {
	b.Run("chan", func(b *testing.B) {
		ch := make(chan [32]byte, 2048)
		b.ReportAllocs()
		var m [32]byte
		next := uint64(0)
		for i := 0; i < b.N; i += benchBatch {
			for j := range benchBatch {
				binary.LittleEndian.PutUint64(m[:], uint64(i+j))
				ch <- m
			}
			for range benchBatch {
				v := <-ch
				if binary.LittleEndian.Uint64(v[:]) != next {
					b.Fatal("out of order")
				}
				next++
			}
		}
	})
	b.Run("ring", func(b *testing.B) {
		r := newBenchRing(b)
		b.ReportAllocs()
		payload := make([]byte, 32)
		next := uint64(0)
		h := func(_ int32, p []byte) ringbuf.Action {
			if binary.LittleEndian.Uint64(p) != next {
				panic("out of order")
			}
			next++
			return ringbuf.Continue
		}
		for i := 0; i < b.N; i += benchBatch {
			for j := range benchBatch {
				binary.LittleEndian.PutUint64(payload, uint64(i+j))
				if r.Write(1, payload) != nil {
					b.Fatal("full")
				}
			}
			for n := 0; n < benchBatch; {
				got, _ := r.ControlledRead(h, ringbuf.NoLimit)
				n += got
			}
		}
	})
	for _, checksum := range []bool{false, true} {
		name := map[bool]string{false: "mailbox", true: "mailbox-checksum"}[checksum]
		b.Run(name, func(b *testing.B) { benchSendDrainMailbox(b, mailbox.Config{Capacity: 64 * 1024, Checksum: checksum}) })
	}
	b.Run("mailbox-multipart", func(b *testing.B) {
		// Three parts of 8, 8 and 16 bytes: the same 32 bytes, framed.
		mb := newBenchMailbox(b)
		s := mb.NewSender()
		b.ReportAllocs()
		var p0, p1, p2 [16]byte
		next := uint64(0)
		h := func(m *mailbox.Message) mailbox.Action {
			if m.NumParts() != 3 || binary.LittleEndian.Uint64(m.Part(0)) != next {
				panic("out of order")
			}
			next++
			return mailbox.Continue
		}
		for i := 0; i < b.N; i += benchBatch {
			for j := range benchBatch {
				binary.LittleEndian.PutUint64(p0[:], uint64(i+j))
				if s.SendParts(1, p0[:8], p1[:8], p2[:]) != nil {
					b.Fatal("full")
				}
			}
			for n := 0; n < benchBatch; {
				got, _ := mb.Drain(h, ringbuf.NoLimit)
				n += got
			}
		}
	})
}

// BenchmarkSendDrainOne is the single-goroutine cost of one 32-byte
// message sent and drained on its own: the per-call overhead of a drain,
// which dominates a round trip. The actor variant drains in DoWork.
func BenchmarkSendDrainOne(b *testing.B) {
	b.Run("chan", func(b *testing.B) {
		ch := make(chan [32]byte, 2048)
		b.ReportAllocs()
		var m [32]byte
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(m[:], uint64(i))
			ch <- m
			v := <-ch
			if binary.LittleEndian.Uint64(v[:]) != uint64(i) {
				b.Fatal("out of order")
			}
		}
	})
	b.Run("ring", func(b *testing.B) {
		r := newBenchRing(b)
		b.ReportAllocs()
		payload := make([]byte, 32)
		next := uint64(0)
		h := func(_ int32, p []byte) ringbuf.Action {
			if binary.LittleEndian.Uint64(p) != next {
				panic("out of order")
			}
			next++
			return ringbuf.Continue
		}
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(payload, uint64(i))
			if r.Write(1, payload) != nil {
				b.Fatal("full")
			}
			for n := 0; n == 0; {
				n, _ = r.ControlledRead(h, mailbox.DrainLimit)
			}
		}
	})
	b.Run("mailbox", func(b *testing.B) {
		mb := newBenchMailbox(b)
		b.ReportAllocs()
		payload := make([]byte, 32)
		next := uint64(0)
		h := func(m *mailbox.Message) mailbox.Action {
			if binary.LittleEndian.Uint64(m.Payload()) != next {
				panic("out of order")
			}
			next++
			return mailbox.Continue
		}
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(payload, uint64(i))
			if mb.Send(1, payload) != nil {
				b.Fatal("full")
			}
			for n := 0; n == 0; {
				n, _ = mb.Drain(h, mailbox.DrainLimit)
			}
		}
	})
	b.Run("actor", func(b *testing.B) {
		mb := newBenchMailbox(b)
		b.ReportAllocs()
		payload := make([]byte, 32)
		next := uint64(0)
		a, err := mailbox.NewActor("a", mb, func(m *mailbox.Message) mailbox.Action {
			if binary.LittleEndian.Uint64(m.Payload()) != next {
				panic("out of order")
			}
			next++
			return mailbox.Continue
		})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(payload, uint64(i))
			if mb.Send(1, payload) != nil {
				b.Fatal("full")
			}
			for n := 0; n == 0; {
				n, _ = a.DoWork()
			}
		}
	})
}

// BenchmarkConsume is the consumer's side alone: the ring is filled with
// 1200 messages of 32 bytes (timer stopped), then drained, by the ring's
// Read and ControlledRead and by the mailbox's Drain and an actor's DoWork.
// When the consumer is the slower side (W1, where the ring is often full),
// this per-message difference is what the mailbox variant loses against
// manytoone-write (docs/mailbox.md, "In cmd/dutybench").
func BenchmarkConsume(b *testing.B) {
	const filled = 1200 // about 60 KiB of records: the ring holds 64 KiB
	fill := func(b *testing.B, r *ringbuf.ManyToOne) {
		b.StopTimer()
		var p [32]byte
		for i := range filled {
			binary.LittleEndian.PutUint64(p[:], uint64(i))
			if err := r.Write(1, p[:]); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	// drain runs consume until it has taken filled messages.
	drain := func(b *testing.B, r *ringbuf.ManyToOne, sum *uint64, consume func() (int, error)) {
		b.ReportAllocs()
		for i := 0; i < b.N; i += filled {
			fill(b, r)
			*sum = 0
			for n := 0; n < filled; {
				k, err := consume()
				if err != nil {
					b.Fatal(err)
				}
				n += k
			}
			if *sum != filled*(filled-1)/2 {
				b.Fatalf("sum of sequence numbers %d, want %d", *sum, filled*(filled-1)/2)
			}
		}
	}
	b.Run("ring-read", func(b *testing.B) {
		r := newBenchRing(b)
		var sum uint64
		h := func(_ int32, p []byte) { sum += binary.LittleEndian.Uint64(p) }
		drain(b, r, &sum, func() (int, error) { return r.Read(h, ringbuf.NoLimit) })
	})
	b.Run("ring-controlled", func(b *testing.B) {
		r := newBenchRing(b)
		var sum uint64
		h := func(_ int32, p []byte) ringbuf.Action { sum += binary.LittleEndian.Uint64(p); return ringbuf.Continue }
		drain(b, r, &sum, func() (int, error) { return r.ControlledRead(h, ringbuf.NoLimit) })
	})
	b.Run("mailbox-drain", func(b *testing.B) {
		mb := newBenchMailbox(b)
		var sum uint64
		h := func(m *mailbox.Message) mailbox.Action {
			sum += binary.LittleEndian.Uint64(m.Payload())
			return mailbox.Continue
		}
		drain(b, mailbox.RingOf(mb), &sum, func() (int, error) { return mb.Drain(h, mailbox.DrainLimit) })
	})
	b.Run("actor", func(b *testing.B) {
		mb := newBenchMailbox(b)
		var sum uint64
		a, err := mailbox.NewActor("a", mb, func(m *mailbox.Message) mailbox.Action {
			sum += binary.LittleEndian.Uint64(m.Payload())
			return mailbox.Continue
		})
		if err != nil {
			b.Fatal(err)
		}
		drain(b, mailbox.RingOf(mb), &sum, a.DoWork)
	})
}

// BenchmarkFragmented is a 20 KB message (three records) sent and drained
// (reassembled), against the ring writing the same bytes as one batch of
// three records read without reassembly.
func BenchmarkFragmented(b *testing.B) {
	const size = 20000
	b.Run("ring-batch", func(b *testing.B) {
		r := newBenchRing(b)
		b.ReportAllocs()
		b.SetBytes(size)
		payload := make([]byte, size)
		parts := [][]byte{payload[:8192], payload[8192:16384], payload[16384:]}
		sink := 0
		h := func(_ int32, p []byte) { sink += len(p) }
		for i := 0; i < b.N; i++ {
			if err := r.WriteBatch(1, parts); err != nil {
				b.Fatal(err)
			}
			if _, err := r.Read(h, ringbuf.NoLimit); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("mailbox", func(b *testing.B) {
		mb := newBenchMailbox(b)
		s := mb.NewSender()
		b.ReportAllocs()
		b.SetBytes(size)
		payload := make([]byte, size)
		h := func(m *mailbox.Message) mailbox.Action {
			if len(m.Payload()) != size {
				panic("wrong size")
			}
			return mailbox.Continue
		}
		for i := 0; i < b.N; i++ {
			if err := s.Send(1, payload); err != nil {
				b.Fatal(err)
			}
			if _, err := mb.Drain(h, ringbuf.NoLimit); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkThroughput is W1 in miniature: one producer goroutine, one
// consumer (the benchmark goroutine), both busy-spinning with a spin-wait
// hint; the consumer checks the sequence. The mailbox variant drains in an
// Actor's DoWork, as cmd/dutybench's `mailbox` variant does.
func BenchmarkThroughput(b *testing.B) {
	b.Run("chan", func(b *testing.B) {
		b.ReportAllocs()
		ch := make(chan [32]byte, 2048)
		go func() {
			var m [32]byte
			for i := 0; i < b.N; i++ {
				binary.LittleEndian.PutUint64(m[:], uint64(i))
				ch <- m
			}
		}()
		for i := 0; i < b.N; i++ {
			v := <-ch
			if binary.LittleEndian.Uint64(v[:]) != uint64(i) {
				b.Fatal("out of order")
			}
		}
	})
	b.Run("ring", func(b *testing.B) {
		r := newBenchRing(b)
		b.ReportAllocs()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			spin := idle.BusySpin()
			payload := make([]byte, 32)
			for i := 0; i < b.N; i++ {
				binary.LittleEndian.PutUint64(payload, uint64(i))
				for r.Write(1, payload) != nil {
					spin.Idle(0)
				}
			}
		}()
		next := uint64(0)
		h := func(_ int32, p []byte) ringbuf.Action {
			if binary.LittleEndian.Uint64(p) != next {
				panic("out of order")
			}
			next++
			return ringbuf.Continue
		}
		spin := idle.BusySpin()
		for next < uint64(b.N) {
			n, _ := r.ControlledRead(h, mailbox.DrainLimit)
			spin.Idle(n)
		}
		wg.Wait()
	})
	b.Run("mailbox", func(b *testing.B) {
		mb := newBenchMailbox(b)
		b.ReportAllocs()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			spin := idle.BusySpin()
			payload := make([]byte, 32)
			for i := 0; i < b.N; i++ {
				binary.LittleEndian.PutUint64(payload, uint64(i))
				for mb.Send(1, payload) != nil {
					spin.Idle(0)
				}
			}
		}()
		next := uint64(0)
		a, err := mailbox.NewActor("consumer", mb, func(m *mailbox.Message) mailbox.Action {
			if binary.LittleEndian.Uint64(m.Payload()) != next {
				panic("out of order")
			}
			next++
			return mailbox.Continue
		})
		if err != nil {
			b.Fatal(err)
		}
		spin := idle.BusySpin()
		for next < uint64(b.N) {
			n, _ := a.DoWork()
			spin.Idle(n)
		}
		wg.Wait()
	})
}

// BenchmarkRoundTrip is W3 in miniature: a ping from the benchmark
// goroutine to a second goroutine and a pong back, per operation, both
// sides busy-spinning. The mailbox variant is two actors, each draining
// its own mailbox in DoWork and sending to the other's (cmd/dutybench's
// `mailbox-actors`).
func BenchmarkRoundTrip(b *testing.B) {
	b.Run("chan", func(b *testing.B) {
		b.ReportAllocs()
		ping, pong := make(chan [32]byte), make(chan [32]byte)
		go func() {
			for i := 0; i < b.N; i++ {
				pong <- <-ping
			}
		}()
		var m [32]byte
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(m[:], uint64(i))
			ping <- m
			v := <-pong
			if binary.LittleEndian.Uint64(v[:]) != uint64(i) {
				b.Fatal("out of order")
			}
		}
	})
	b.Run("ring", func(b *testing.B) {
		a2b, b2a := newBenchRing(b), newBenchRing(b)
		b.ReportAllocs()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			spin := idle.BusySpin()
			echo := func(t int32, p []byte) ringbuf.Action {
				for b2a.Write(t, p) != nil {
					spin.Idle(0)
				}
				return ringbuf.Continue
			}
			for done := 0; done < b.N; {
				n, _ := a2b.ControlledRead(echo, mailbox.DrainLimit)
				done += n
				spin.Idle(n)
			}
		}()
		payload := make([]byte, 32)
		var got uint64
		h := func(_ int32, p []byte) ringbuf.Action { got = binary.LittleEndian.Uint64(p); return ringbuf.Continue }
		spin := idle.BusySpin()
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(payload, uint64(i))
			for a2b.Write(1, payload) != nil {
				spin.Idle(0)
			}
			for {
				n, _ := b2a.ControlledRead(h, mailbox.DrainLimit)
				if n > 0 {
					break
				}
				spin.Idle(0)
			}
			if got != uint64(i) {
				b.Fatal("out of order")
			}
		}
		wg.Wait()
	})
	b.Run("mailbox-actors", func(b *testing.B) {
		boxA, boxB := newBenchMailbox(b), newBenchMailbox(b)
		b.ReportAllocs()
		ponger, err := mailbox.NewActor("pong", boxB, func(m *mailbox.Message) mailbox.Action {
			if boxA.Send(m.TypeID(), m.Payload()) != nil {
				return mailbox.Abort // full: again next cycle
			}
			return mailbox.Continue
		})
		if err != nil {
			b.Fatal(err)
		}
		var got uint64
		var gotOne bool
		pinger, err := mailbox.NewActor("ping", boxA, func(m *mailbox.Message) mailbox.Action {
			got, gotOne = binary.LittleEndian.Uint64(m.Payload()), true
			return mailbox.Continue
		})
		if err != nil {
			b.Fatal(err)
		}
		var stop atomic.Bool
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			spin := idle.BusySpin()
			for !stop.Load() {
				n, _ := ponger.DoWork()
				spin.Idle(n)
			}
		}()
		payload := make([]byte, 32)
		spin := idle.BusySpin()
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(payload, uint64(i))
			for boxB.Send(1, payload) != nil {
				spin.Idle(0)
			}
			for gotOne = false; !gotOne; {
				n, _ := pinger.DoWork()
				spin.Idle(n)
			}
			if got != uint64(i) {
				b.Fatal("out of order")
			}
		}
		stop.Store(true)
		wg.Wait()
	})
}

// benchSendDrainMailbox is BenchmarkSendDrain's mailbox variant for cfg.
func benchSendDrainMailbox(b *testing.B, cfg mailbox.Config) {
	mb, err := mailbox.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	payload := make([]byte, 32)
	next := uint64(0)
	h := func(m *mailbox.Message) mailbox.Action {
		if binary.LittleEndian.Uint64(m.Payload()) != next {
			panic("out of order")
		}
		next++
		return mailbox.Continue
	}
	for i := 0; i < b.N; i += benchBatch {
		for j := range benchBatch {
			binary.LittleEndian.PutUint64(payload, uint64(i+j))
			if mb.Send(1, payload) != nil {
				b.Fatal("full")
			}
		}
		for n := 0; n < benchBatch; {
			got, _ := mb.Drain(h, ringbuf.NoLimit)
			n += got
		}
	}
}
