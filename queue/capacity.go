package queue

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// maxCapacity is the largest capacity of a queue, as in Agrona (the largest
// power of two an int32 holds). The slot array is allocated up front, so a
// queue of that size of 8-byte values takes 8 GiB.
const maxCapacity = 1 << 30

// roundCapacity returns requested rounded up to a power of two, or an error
// wrapping ErrCapacity.
func roundCapacity(requested, minimum int) (int, error) {
	if requested < minimum || requested > maxCapacity {
		return 0, fmt.Errorf("%w: %d (want %d..%d)", ErrCapacity, requested, minimum, maxCapacity)
	}
	if requested == 1 {
		return 1, nil
	}
	return 1 << bits.Len(uint(requested-1)), nil
}

// makeSlots allocates the slot array of a queue of c slots (capacity
// requested by the caller). make panics when c values of S cannot be
// addressed at all (large elements, or 8-byte ones at the largest capacity on a
// 32-bit platform): that is an invalid capacity, reported as an error
// wrapping ErrCapacity. An array that can be addressed but not backed by
// memory still fails as make does.
func makeSlots[S any](c, requested int) (s []S, err error) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(runtime.Error); !ok {
				panic(r)
			}
			s, err = nil, fmt.Errorf("%w: %d (%d slots of %d bytes exceed the address space)",
				ErrCapacity, requested, c, unsafe.Sizeof(*new(S)))
		}
	}()
	return make([]S, c), nil
}

// size is Agrona's size(): head, tail, head again until head did not move,
// so that tail and head come from one instant of the consumer's progress
// (a concurrent poll between the loads would otherwise be counted as
// negative room), clamped to [0, capacity] because producers may move tail
// past what the consumer has seen in any case.
func size(head, tail *atomic.Int64, capacity int64) int {
	after := head.Load()
	for {
		before := after
		t := tail.Load()
		after = head.Load()
		if before == after {
			return int(min(max(t-after, 0), capacity))
		}
	}
}

// slot is an element with the sequence word that publishes it (ManyToOne,
// ManyToMany): Go values have no null that could mark an empty slot.
type slot[T any] struct {
	seq atomic.Int64
	v   T
}
