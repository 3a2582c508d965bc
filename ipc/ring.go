package ipc

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dutyrt/duty/ringbuf"
)

// Ring is a ringbuf.ManyToOne ring over the single section of a KindRing
// file, with the File that maps it. The ring's methods are promoted from
// the embedded *ringbuf.ManyToOne and follow its concurrency contract: any
// number of producers, in any processes that map the file, and one
// consumer.
//
// Close (the File's) releases the mapping. Using the ring's methods after
// Close is a use-after-free: the memory is unmapped and the access faults.
// Close a Ring only once no goroutine uses it.
type Ring struct {
	*ringbuf.ManyToOne
	*File
}

// CreateRing creates dir/name (see Create) as a KindRing file whose section
// is a many-to-one ring of capacity bytes (a power of two, at least
// one record header, ringbuf.HeaderLength) plus ringbuf.TrailerLength. The ring is
// empty: the file is zero-filled.
func CreateRing(dir, name string, capacity int, opts ...Option) (*Ring, error) {
	if capacity < ringbuf.HeaderLength || capacity&(capacity-1) != 0 || capacity > math.MaxInt32 {
		return nil, fmt.Errorf("%w: ring capacity %d is not a power of two >= %d (%w)", ErrArgument, capacity, ringbuf.HeaderLength, ringbuf.ErrCapacity)
	}
	f, err := create(dir, name, KindRing, []int{capacity + ringbuf.TrailerLength}, opts...)
	if err != nil {
		return nil, err
	}
	return wrapRing(f)
}

// OpenRing opens the KindRing file at path (see Open) and returns the ring
// in it. A file of another kind gives ErrKind; a section that is not a valid
// ring buffer gives ErrCorrupt.
func OpenRing(ctx context.Context, path string, opts ...Option) (*Ring, error) {
	f, err := open(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	if f.Kind() != KindRing {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s has kind %d, want %d (ring)", ErrKind, path, f.Kind(), KindRing)
	}
	return wrapRing(f)
}

func wrapRing(f *File) (*Ring, error) {
	b, err := f.Section(0)
	if err == nil {
		var m *ringbuf.ManyToOne
		if m, err = ringbuf.NewManyToOne(b); err == nil {
			return &Ring{ManyToOne: m, File: f}, nil
		}
		err = fmt.Errorf("%w: %s: ring section: %w", ErrCorrupt, f.Path(), err)
	}
	return nil, errors.Join(err, f.Close())
}
