package atomicbuf

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/buildtags"
)

// Alignment is the alignment, in bytes, that New requires of a buffer's
// first byte. 64-bit words at 8-aligned indices are then 8-aligned in memory.
const Alignment = 8

var (
	// ErrMisaligned reports a buffer whose first byte, or a word index, is not
	// aligned to the word size.
	ErrMisaligned = errors.New("atomicbuf: misaligned address")
	// ErrOutOfBounds reports a word that does not lie entirely inside the buffer,
	// or a buffer too short for what the caller needs.
	ErrOutOfBounds = errors.New("atomicbuf: index out of bounds")
)

// Buffer is an atomic view of a byte slice. The zero value is an empty buffer.
// A Buffer is a small value (pointer and length); copies share the memory.
type Buffer struct {
	b []byte
}

// New returns an atomic view of b. b's first byte must be 8-byte aligned
// (heap allocations of 8 bytes or more and mmap'd regions are). New never
// writes to b.
func New(b []byte) (Buffer, error) {
	if len(b) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%Alignment != 0 {
		return Buffer{}, fmt.Errorf("%w: buffer starts at %p, want %d-byte alignment", ErrMisaligned, unsafe.SliceData(b), Alignment)
	}
	return Buffer{b: b}, nil
}

// Make allocates a zeroed, 8-byte aligned buffer of n bytes.
func Make(n int) Buffer {
	if n <= 0 {
		return Buffer{}
	}
	words := make([]uint64, (n+7)/8)
	return Buffer{b: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), n)}
}

// Bytes returns the underlying slice.
func (b Buffer) Bytes() []byte { return b.b }

// Len returns the buffer length in bytes.
func (b Buffer) Len() int { return len(b.b) }

// Check reports whether a word of size bytes at index lies inside the buffer
// and is aligned to size.
func (b Buffer) Check(index, size int) error {
	if index < 0 || size <= 0 || index > len(b.b)-size {
		return fmt.Errorf("%w: word of %d bytes at %d, buffer length %d", ErrOutOfBounds, size, index, len(b.b))
	}
	if index%size != 0 {
		return fmt.Errorf("%w: word of %d bytes at index %d", ErrMisaligned, size, index)
	}
	return nil
}

// Need reports ErrOutOfBounds unless the buffer holds at least n bytes.
func (b Buffer) Need(n int) error {
	if len(b.b) < n {
		return fmt.Errorf("%w: buffer length %d, need %d", ErrOutOfBounds, len(b.b), n)
	}
	return nil
}

func (b Buffer) ptr(index int) unsafe.Pointer {
	return unsafe.Add(unsafe.Pointer(unsafe.SliceData(b.b)), index)
}

// Int64At returns the word at index as an atomic.Int64 without checking it.
// The caller guarantees 0 <= index <= Len()-8 and index%8 == 0.
func (b Buffer) Int64At(index int) *atomic.Int64 {
	if buildtags.Invariants {
		mustCheck(b, index, 8)
	}
	return (*atomic.Int64)(b.ptr(index))
}

// Int32At returns the word at index as an atomic.Int32 without checking it.
// The caller guarantees 0 <= index <= Len()-4 and index%4 == 0.
func (b Buffer) Int32At(index int) *atomic.Int32 {
	if buildtags.Invariants {
		mustCheck(b, index, 4)
	}
	return (*atomic.Int32)(b.ptr(index))
}

func mustCheck(b Buffer, index, size int) {
	if err := b.Check(index, size); err != nil {
		panic("duty_invariants: " + err.Error())
	}
}

// LoadInt64 atomically loads the 64-bit word at index.
func (b Buffer) LoadInt64(index int) (int64, error) {
	if err := b.Check(index, 8); err != nil {
		return 0, err
	}
	return b.Int64At(index).Load(), nil
}

// StoreInt64 atomically stores v at index.
func (b Buffer) StoreInt64(index int, v int64) error {
	if err := b.Check(index, 8); err != nil {
		return err
	}
	b.Int64At(index).Store(v)
	return nil
}

// CompareAndSwapInt64 atomically replaces old with new at index and reports
// whether it did.
func (b Buffer) CompareAndSwapInt64(index int, old, new int64) (bool, error) {
	if err := b.Check(index, 8); err != nil {
		return false, err
	}
	return b.Int64At(index).CompareAndSwap(old, new), nil
}

// AddInt64 atomically adds delta at index and returns the new value.
func (b Buffer) AddInt64(index int, delta int64) (int64, error) {
	if err := b.Check(index, 8); err != nil {
		return 0, err
	}
	return b.Int64At(index).Add(delta), nil
}

// LoadInt32 atomically loads the 32-bit word at index.
func (b Buffer) LoadInt32(index int) (int32, error) {
	if err := b.Check(index, 4); err != nil {
		return 0, err
	}
	return b.Int32At(index).Load(), nil
}

// StoreInt32 atomically stores v at index.
func (b Buffer) StoreInt32(index int, v int32) error {
	if err := b.Check(index, 4); err != nil {
		return err
	}
	b.Int32At(index).Store(v)
	return nil
}

// CompareAndSwapInt32 atomically replaces old with new at index and reports
// whether it did.
func (b Buffer) CompareAndSwapInt32(index int, old, new int32) (bool, error) {
	if err := b.Check(index, 4); err != nil {
		return false, err
	}
	return b.Int32At(index).CompareAndSwap(old, new), nil
}

// AddInt32 atomically adds delta at index and returns the new value.
func (b Buffer) AddInt32(index int, delta int32) (int32, error) {
	if err := b.Check(index, 4); err != nil {
		return 0, err
	}
	return b.Int32At(index).Add(delta), nil
}
