package record

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/buildtags"
)

// Log is a view of a region of records: a ring's records (without its
// trailer) or a publication's log. Its capacity is a power of two, and
// indexes into it are 8-aligned offsets of records below the capacity;
// positions (bytes written since the log was created) map to indexes with
// Mask. A Log is three words, copied into the structures that use it so
// that their hot paths load its fields directly.
type Log struct {
	base     unsafe.Pointer
	capacity int
	mask     int64
}

// NewLog returns the view of records, whose length is a power of two and
// whose first byte is 8-aligned (the caller has checked both). The view
// aliases records; it writes nothing.
func NewLog(records []byte) Log {
	return Log{base: unsafe.Pointer(unsafe.SliceData(records)), capacity: len(records), mask: int64(len(records) - 1)}
}

// Capacity returns the log's length in bytes.
func (l *Log) Capacity() int { return l.capacity }

// Mask returns capacity-1: position & Mask() is the index of a position.
func (l *Log) Mask() int64 { return l.mask }

// Bytes returns the records as a slice.
func (l *Log) Bytes() []byte { return unsafe.Slice((*byte)(l.base), l.capacity) }

// At returns the address of byte index of the log, for copies that must
// not be calls (CopyBlocks). index+n <= capacity for the n bytes used is
// the caller's to ensure.
func (l *Log) At(index int) unsafe.Pointer { return unsafe.Add(l.base, index) }

// LengthAt, TypeAt and WordAt return the header words of the record at
// index: its length (atomic: the word that publishes a record), its type
// (plain: published by the length), and the whole 8-byte header. The index
// is 8-aligned and below capacity by construction (a masked position that
// is checked for alignment, or an offset within a record already checked
// against the log); with -tags duty_invariants that is checked.
func (l *Log) LengthAt(index int) *atomic.Int32 {
	if buildtags.Invariants {
		l.mustRecord(index)
	}
	return (*atomic.Int32)(unsafe.Add(l.base, index))
}

func (l *Log) TypeAt(index int) *int32 {
	if buildtags.Invariants {
		l.mustRecord(index)
	}
	return (*int32)(unsafe.Add(l.base, index+TypeOffset))
}

func (l *Log) WordAt(index int) *atomic.Int64 {
	if buildtags.Invariants {
		l.mustRecord(index)
	}
	return (*atomic.Int64)(unsafe.Add(l.base, index))
}

// Payload returns the n payload bytes of the record at index (capped at
// n), aliasing the log. The record was checked against the log (Check) or
// claimed within it, so index+HeaderLength+n <= capacity.
func (l *Log) Payload(index, n int) []byte {
	if buildtags.Invariants {
		l.mustRecord(index)
		if n < 0 || n > l.capacity-index-HeaderLength {
			panic(fmt.Sprintf("duty_invariants: payload of %d bytes at %d runs past the log's %d bytes", n, index, l.capacity))
		}
	}
	return unsafe.Slice((*byte)(unsafe.Add(l.base, index+HeaderLength)), n)
}

// IndexOf returns the index of the record whose payload is payload: a
// slice that starts right after a record header in this log (an 8-aligned
// header) and lies within it. It reports false for any other slice,
// wherever it points (another log, the heap, an offset inside a record),
// so that a layer can find a record from the payload it handed out
// without arithmetic on pointers of its own.
func (l *Log) IndexOf(payload []byte) (int, bool) {
	// Offsets as unsigned integers: memory below the log wraps to a huge
	// offset, which fails the bound. The pointer is only compared.
	off := uintptr(unsafe.Pointer(unsafe.SliceData(payload))) - uintptr(l.base)
	capacity := uintptr(l.capacity)
	if off < HeaderLength || off > capacity || (off-HeaderLength)%Alignment != 0 || uintptr(len(payload)) > capacity-off {
		return 0, false
	}
	return int(off) - HeaderLength, true
}

func (l *Log) mustRecord(index int) {
	if index < 0 || index > l.capacity-HeaderLength || index%Alignment != 0 {
		panic(fmt.Sprintf("duty_invariants: record index %d outside a log of %d bytes", index, l.capacity))
	}
}
