package ringbuf

import (
	"encoding/binary"
	"sync"
	"testing"

	"github.com/dutyrt/duty/idle"
)

// Single-goroutine cost of one message through each path: write (or claim
// and commit) then read, in batches of 64, against a buffered channel's send
// and receive in the same run. No cross-core traffic: this measures the
// instructions of the protocol, cmd/dutybench measures the two-core case.

const benchBatch = 64

func benchRing(b *testing.B, k kind) ringBuffer {
	r := newRing(b, k, 1<<16)
	b.ReportAllocs()
	b.SetBytes(32)
	return r
}

func BenchmarkChannelSendReceive(b *testing.B) {
	ch := make(chan [32]byte, 2048)
	b.ReportAllocs()
	b.SetBytes(32)
	var m [32]byte
	var sink uint64
	for i := 0; i < b.N; i += benchBatch {
		for j := 0; j < benchBatch; j++ {
			binary.LittleEndian.PutUint64(m[:], uint64(i+j))
			ch <- m
		}
		for j := 0; j < benchBatch; j++ {
			v := <-ch
			sink += binary.LittleEndian.Uint64(v[:])
		}
	}
	_ = sink
}

func benchWriteRead(b *testing.B, r ringBuffer) {
	payload := make([]byte, 32)
	var sink uint64
	h := func(_ int32, p []byte) { sink += binary.LittleEndian.Uint64(p) }
	for i := 0; i < b.N; i += benchBatch {
		for j := 0; j < benchBatch; j++ {
			binary.LittleEndian.PutUint64(payload, uint64(i+j))
			if r.Write(1, payload) != nil {
				b.Fatal("full")
			}
		}
		for n := 0; n < benchBatch; {
			got, _ := r.Read(h, NoLimit)
			n += got
		}
	}
	_ = sink
}

func BenchmarkOneToOneWriteRead(b *testing.B)  { benchWriteRead(b, benchRing(b, kinds[0])) }
func BenchmarkManyToOneWriteRead(b *testing.B) { benchWriteRead(b, benchRing(b, kinds[1])) }

func BenchmarkManyToOneClaimCommitRead(b *testing.B) {
	r := benchRing(b, kinds[1])
	var sink uint64
	h := func(_ int32, p []byte) Action { sink += binary.LittleEndian.Uint64(p); return Continue }
	for i := 0; i < b.N; i += benchBatch {
		for j := 0; j < benchBatch; j++ {
			c, err := r.TryClaim(1, 32)
			if err != nil {
				b.Fatal(err)
			}
			binary.LittleEndian.PutUint64(c.Payload, uint64(i+j))
			_ = r.Commit(c.Index)
		}
		for n := 0; n < benchBatch; {
			got, _ := r.ControlledRead(h, NoLimit)
			n += got
		}
	}
	_ = sink
}

func BenchmarkManyToOneBatch16Read(b *testing.B) {
	r := benchRing(b, kinds[1])
	var sink uint64
	h := func(_ int32, p []byte) { sink += binary.LittleEndian.Uint64(p) }
	for i := 0; i < b.N; i += benchBatch {
		for j := 0; j < benchBatch; j += 16 {
			batch, err := r.TryClaimBatch(16 * RecordSize(32))
			if err != nil {
				b.Fatal(err)
			}
			for k := 0; k < 16; k++ {
				p, _ := batch.Append(1, 32)
				binary.LittleEndian.PutUint64(p, uint64(i+j+k))
			}
			_ = r.CommitBatch(batch)
		}
		for n := 0; n < benchBatch; {
			got, _ := r.Read(h, NoLimit)
			n += got
		}
	}
	_ = sink
}

func BenchmarkManyToOneRecords16Read(b *testing.B) {
	r := benchRing(b, kinds[1])
	var sink uint64
	h := func(_ int32, p []byte) { sink += binary.LittleEndian.Uint64(p) }
	b.ReportAllocs()
	for i := 0; i < b.N; i += benchBatch {
		for j := 0; j < benchBatch; j += 16 {
			rs, err := r.TryClaimRecords(1, 32, 16)
			if err != nil {
				b.Fatal(err)
			}
			for k := range 16 {
				binary.LittleEndian.PutUint64(rs.Payload(k), uint64(i+j+k))
			}
			_ = r.CommitRecords(rs)
		}
		for n := 0; n < benchBatch; {
			got, _ := r.Read(h, NoLimit)
			n += got
		}
	}
	_ = sink
}

// Two goroutines: one producer, one consumer, both busy-spinning with a
// spin-wait hint (idle.BusySpin, as an agent would), the
// consumer checking the sequence. A development figure only (it needs two
// free cores); cmd/dutybench is the reference (it labels cross-core phases).
func benchTwoGoroutines(b *testing.B, r ringBuffer) {
	b.ReportAllocs()
	b.SetBytes(32)
	spinP, spinC := idle.BusySpin(), idle.BusySpin()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		payload := make([]byte, 32)
		for i := 0; i < b.N; i++ {
			binary.LittleEndian.PutUint64(payload, uint64(i))
			for r.Write(1, payload) != nil {
				spinP.Idle(0)
			}
		}
	}()
	next := uint64(0)
	h := func(_ int32, p []byte) {
		if binary.LittleEndian.Uint64(p) != next {
			panic("out of order")
		}
		next++
	}
	for next < uint64(b.N) {
		n, _ := r.Read(h, NoLimit)
		spinC.Idle(n)
	}
	wg.Wait()
}

func BenchmarkOneToOneTwoGoroutines(b *testing.B) {
	benchTwoGoroutines(b, newRing(b, kinds[0], 1<<16))
}

func BenchmarkManyToOneTwoGoroutines(b *testing.B) {
	benchTwoGoroutines(b, newRing(b, kinds[1], 1<<16))
}

func BenchmarkChannelTwoGoroutines(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(32)
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
			panic("out of order")
		}
	}
}
