package queue

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/buildtags"
)

// Offer, Poll, Drain and DrainTo (into a slice with room) allocate nothing,
// full or empty or not, for pointer and struct values alike.
func TestNoAllocations(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
	type order struct {
		id  int64
		tag string
	}
	o := &order{id: 1, tag: "p"}
	for _, k := range kinds {
		t.Run(k.name+"/pointer", func(t *testing.T) {
			testNoAllocations(t, newPipe[*order](t, k, 8), o)
		})
		t.Run(k.name+"/struct", func(t *testing.T) {
			testNoAllocations(t, newPipe[order](t, k, 8), order{id: 2, tag: "x"})
		})
	}
}

func testNoAllocations[T any](t *testing.T, p testPipe[T], v T) {
	var sink int
	fn := func(T) { sink++ }
	dst := make([]T, 0, 16)
	allocs := testing.AllocsPerRun(200, func() {
		for p.Offer(v) {
		}
		p.Offer(v) // full
		p.Poll()
		p.Drain(fn, 3)
		dst = p.DrainTo(dst[:0], 2)
		p.Drain(fn, math.MaxInt)
		p.Poll() // empty
		p.Drain(fn, 1)
		dst = p.DrainTo(dst[:0], 1)
	})
	require.Zero(t, allocs)
	require.NotZero(t, sink)
}
