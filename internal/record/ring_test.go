package record

import (
	"math"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// testRing is a ring for the core's own tests: records, the position words
// package ringbuf keeps in a ring's trailer, a Producer and a Reader over
// them.
type testRing struct {
	records   []byte
	log       Log
	tail      atomic.Int64
	headCache atomic.Int64
	head      atomic.Int64
	p         Producer
	rd        Reader
}

// newTestRing returns a ring over capacity bytes of records that start on
// a 128-byte boundary, as ringbuf.Allocate's do; many makes it a
// many-to-one ring (its producer the many-to-one protocol, its consumer
// zeroing what it consumes).
func newTestRing(t testing.TB, capacity int, many bool) *testRing {
	t.Helper()
	b := make([]byte, capacity+128)
	off := (128 - int(uintptr(unsafe.Pointer(&b[0]))%128)) % 128
	return newTestRingOver(t, b[off:off+capacity:off+capacity], many)
}

// newTestRingOver is newTestRing over the given records (8-aligned, a power
// of two long).
func newTestRingOver(t testing.TB, records []byte, many bool) *testRing {
	t.Helper()
	require.Zero(t, uintptr(unsafe.Pointer(&records[0]))%Alignment)
	r := &testRing{records: records, log: NewLog(records)}
	r.p.Init(records, &r.tail, &r.headCache, &r.head, max(8, len(records)/8), many)
	r.rd.Init(records, &r.head, many)
	return r
}

// write commits a record of type typeID at the tail and reports false,
// writing nothing, when the ring has no room. A many-to-one ring writes
// with its Producer; the other (a ring whose consumer does not zero) as
// its only producer, a one-to-one producer without the pre-zeroed header
// (the one-to-one protocol is package ringbuf's): padding the end when the
// record does not fit before it.
func (r *testRing) write(t testing.TB, typeID int32, payload []byte) bool {
	t.Helper()
	if r.p.many {
		err := r.p.Write(typeID, payload)
		if err == ErrFull {
			return false
		}
		require.NoError(t, err)
		return true
	}
	size := Size(len(payload))
	tail := r.tail.Load()
	index := int(tail & r.log.mask)
	padding := 0
	if size > r.log.capacity-index {
		padding = r.log.capacity - index
	}
	if tail+int64(padding+size)-r.head.Load() > int64(r.log.capacity) {
		return false
	}
	if padding != 0 {
		*r.log.TypeAt(index) = PaddingTypeID
		r.log.LengthAt(index).Store(int32(padding))
		index = 0
	}
	copy(r.log.Payload(index, len(payload)), payload)
	*r.log.TypeAt(index) = typeID
	r.log.LengthAt(index).Store(int32(len(payload) + HeaderLength))
	r.tail.Store(tail + int64(padding+size))
	return true
}

type msg struct {
	typeID  int32
	payload string
}

// drain reads until a read delivers nothing twice in a row (a read can
// stop at padding at the end of the ring with messages waiting at the
// start).
func (r *testRing) drain(t testing.TB) []msg {
	t.Helper()
	var got []msg
	for empty := 0; empty < 2; {
		n, err := r.rd.Read(func(typeID int32, p []byte) { got = append(got, msg{typeID, string(p)}) }, math.MaxInt)
		require.NoError(t, err)
		if n == 0 {
			empty++
		} else {
			empty = 0
		}
	}
	return got
}
