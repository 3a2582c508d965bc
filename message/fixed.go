package message

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/dutyrt/duty/mailbox"
)

// Fixed is the codec of a fixed-layout type T with its type id: a T
// travels as its own Size bytes (see the package documentation for what
// T may hold). A *Fixed is immutable once made and safe for concurrent
// use.
type Fixed[T any] struct {
	id    int32
	size  int
	align uintptr
	bools []uintptr // offsets of the bool bytes, checked when decoding
	typ   reflect.Type
	// replyHeader: T starts with a ReplyHeader (Reply fills it in).
	replyHeader bool
}

var _ Codec[struct{}] = (*Fixed[struct{}])(nil)

// NewFixed checks T's layout and returns its codec for type id typeID, or
// an error wrapping ErrLayout (naming the field, or saying the machine is
// big-endian) or ErrTypeID.
func NewFixed[T any](typeID int32) (*Fixed[T], error) {
	if typeID < 1 || typeID > mailbox.MaxTypeID {
		return nil, fmt.Errorf("%w: %d is outside 1..%d", ErrTypeID, typeID, mailbox.MaxTypeID)
	}
	if !littleEndian() {
		return nil, fmt.Errorf("%w: fixed layouts need a little-endian machine", ErrLayout)
	}
	t := reflect.TypeFor[T]()
	f := &Fixed[T]{id: typeID, size: int(t.Size()), align: uintptr(t.Align()), typ: t, replyHeader: startsWith[ReplyHeader](t)}
	if err := checkLayout(t, t.String(), 0, &f.bools); err != nil {
		return nil, err
	}
	return f, nil
}

// MustFixed is NewFixed for package-level codecs, whose types are known
// when the program is written: it panics where NewFixed returns an error.
func MustFixed[T any](typeID int32) *Fixed[T] {
	f, err := NewFixed[T](typeID)
	if err != nil {
		panic(err)
	}
	return f
}

func littleEndian() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}

// checkLayout reports whether t, at offset base of the message, is made
// of fixed-size fields with no byte between or after them that is not a
// field's, and collects the offsets of its bools.
func checkLayout(t reflect.Type, path string, base uintptr, bools *[]uintptr) error {
	switch t.Kind() {
	case reflect.Bool:
		*bools = append(*bools, base)
		return nil
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return nil
	case reflect.Array:
		var elem []uintptr
		if err := checkLayout(t.Elem(), path+"[i]", 0, &elem); err != nil {
			return err
		}
		for i := range t.Len() {
			for _, off := range elem {
				*bools = append(*bools, base+uintptr(i)*t.Elem().Size()+off)
			}
		}
		return nil
	case reflect.Struct:
		var next uintptr
		for i := range t.NumField() {
			sf := t.Field(i)
			if sf.Offset != next {
				return fmt.Errorf("%w: %s has %d bytes of implicit padding before field %s: add a blank field (_ [%d]byte) or reorder",
					ErrLayout, path, sf.Offset-next, sf.Name, sf.Offset-next)
			}
			if err := checkLayout(sf.Type, path+"."+sf.Name, base+sf.Offset, bools); err != nil {
				return err
			}
			next = sf.Offset + sf.Type.Size()
		}
		if next != t.Size() {
			return fmt.Errorf("%w: %s has %d bytes of implicit padding at its end: add a blank field (_ [%d]byte)",
				ErrLayout, path, t.Size()-next, t.Size()-next)
		}
		return nil
	case reflect.Int, reflect.Uint, reflect.Uintptr:
		return fmt.Errorf("%w: %s is %s, whose size depends on the platform: use a sized integer", ErrLayout, path, t.Kind())
	}
	return fmt.Errorf("%w: %s is a %s, which cannot travel as its bytes", ErrLayout, path, t.Kind())
}

// TypeID returns the type id messages of T carry.
func (f *Fixed[T]) TypeID() int32 { return f.id }

// Size returns the length of a T's payload: the size of T in memory.
func (f *Fixed[T]) Size(*T) int { return f.size }

// Send sends *v to mb as one message of f's type id: its bytes are copied
// into the ring once, nothing is allocated. Outcomes as for
// mailbox.Mailbox.Send.
func (f *Fixed[T]) Send(mb *mailbox.Mailbox, v *T) error {
	return mb.Send(f.id, bytesOf(v))
}

// Encode copies *v's bytes into dst, which must be at least Size long.
func (f *Fixed[T]) Encode(dst []byte, v *T) { copy(dst, bytesOf(v)) }

// Decode copies a payload into *v after checking its length and its bools
// (ErrPayload otherwise); on error *v is unchanged.
func (f *Fixed[T]) Decode(src []byte, v *T) error {
	if err := f.check(src); err != nil {
		return err
	}
	copy(bytesOf(v), src)
	return nil
}

// view returns the payload as a *T without copying, or nil when src is
// not aligned for T. src has passed check.
func (f *Fixed[T]) view(src []byte) *T {
	if f.size == 0 {
		return new(T) // zero-size: no allocation
	}
	p := unsafe.Pointer(unsafe.SliceData(src))
	if uintptr(p)&(f.align-1) != 0 {
		return nil
	}
	return (*T)(p)
}

// check validates a payload for T; in line for a T without bools.
func (f *Fixed[T]) check(src []byte) error {
	if len(src) == f.size && len(f.bools) == 0 {
		return nil
	}
	return f.checkSlow(src)
}

func (f *Fixed[T]) checkSlow(src []byte) error {
	if len(src) != f.size {
		return errLength(f.id, len(src), f.size)
	}
	for _, off := range f.bools {
		if src[off] > 1 {
			return errInvalidBool(f.id, off, src[off])
		}
	}
	return nil
}

// bytesOf returns *v's bytes. The length is T's size, which the compiler
// knows where it instantiates T: no check of a length it does not know.
func bytesOf[T any](v *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(v)), unsafe.Sizeof(*v))
}

// The error constructors stay out of the hot functions' bodies.

func errLength(typeID int32, got, want int) error {
	return fmt.Errorf("%w: type %d: %d bytes, want %d", ErrPayload, typeID, got, want)
}

func errInvalidBool(typeID int32, off uintptr, b byte) error {
	return fmt.Errorf("%w: type %d: byte %d of the payload is a bool holding %d", ErrPayload, typeID, off, b)
}
