package record

import (
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// testRing is a ring for the core's own tests: records, the position words
// package ringbuf keeps in a ring's trailer, and a consumer over them.
type testRing struct {
	records []byte
	log     Log
	tail    atomic.Int64
	head    atomic.Int64
	rd      Reader
}

// newTestRing returns a ring over capacity bytes of records that start on
// a 128-byte boundary, as ringbuf.Allocate's do; zero makes its consumer
// zero what it consumes (a many-to-one ring).
func newTestRing(t testing.TB, capacity int, zero bool) *testRing {
	t.Helper()
	b := make([]byte, capacity+128)
	off := (128 - int(uintptr(unsafe.Pointer(&b[0]))%128)) % 128
	return newTestRingOver(t, b[off:off+capacity:off+capacity], zero)
}

// newTestRingOver is newTestRing over the given records (8-aligned, a power
// of two long).
func newTestRingOver(t testing.TB, records []byte, zero bool) *testRing {
	t.Helper()
	require.Zero(t, uintptr(unsafe.Pointer(&records[0]))%Alignment)
	r := &testRing{records: records, log: NewLog(records)}
	r.rd.Init(records, &r.head, zero)
	return r
}

// write commits a record of type typeID at the tail, as the only producer
// (a one-to-one producer without the pre-zeroed header: the consumer of a
// zeroing ring stops at the zeros after it), padding the end of the ring
// when the record does not fit before it; it reports false, writing
// nothing, when the ring has no room.
func (r *testRing) write(t testing.TB, typeID int32, payload []byte) bool {
	t.Helper()
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
