package broadcast

import (
	"fmt"
	"sync/atomic"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// NewBuffer allocates a zeroed, 8-byte aligned broadcast buffer with a ring of
// capacity bytes (a power of two, minCapacity..MaxCapacity) followed by the
// trailer. Hand the same slice to one NewTransmitter and any number of
// NewReceiver calls.
func NewBuffer(capacity int) ([]byte, error) {
	if capacity > maxCapacity || capacity < 0 {
		return nil, capacityError(capacity)
	}
	if _, err := checkCapacity(capacity + trailerLength); err != nil {
		return nil, err
	}
	return atomicbuf.Make(capacity + trailerLength).Bytes(), nil
}

// view is the checked, read-only-at-construction wrapping of a broadcast
// buffer shared by Transmitter and Receiver.
type view struct {
	buf      atomicbuf.Buffer
	ring     []byte // buf.Bytes()[:capacity]
	capacity int64
	mask     int64

	tailIntent *atomic.Int64
	tail       *atomic.Int64
	latest     *atomic.Int64
}

// newView checks b's alignment and length. It never writes to b.
func newView(b []byte) (view, error) {
	buf, err := atomicbuf.New(b)
	if err != nil {
		return view{}, fmt.Errorf("%w: not 8-byte aligned: %w", ErrCapacity, err)
	}
	capacity, err := checkCapacity(len(b))
	if err != nil {
		return view{}, err
	}
	return view{
		buf:        buf,
		ring:       b[:capacity:capacity],
		capacity:   int64(capacity),
		mask:       int64(capacity) - 1,
		tailIntent: buf.Int64At(capacity + tailIntentCounterOffset),
		tail:       buf.Int64At(capacity + tailCounterOffset),
		latest:     buf.Int64At(capacity + latestCounterOffset),
	}, nil
}

// validPosition reports whether p can be a record position written by a
// correct transmitter: non-negative, aligned, and far from overflow.
func validPosition(p int64) bool {
	return p >= 0 && p <= maxPosition && p&(recordAlignment-1) == 0
}

// header atomically loads the record header at ring offset off (8-aligned,
// inside the ring by construction: off = position & mask, position aligned).
func (v *view) header(off int64) (length, typeID int32) {
	length = v.buf.Int32At(int(off) + lengthOffset).Load()
	typeID = v.buf.Int32At(int(off) + typeOffset).Load()
	return length, typeID
}
