package ringbuf

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/prefetch"
	"github.com/dutyrt/duty/internal/record"
)

// TestPrefetchOnlyInLargeRings: rings of at least record.MinPrefetchCapacity bytes
// prefetch (the one-to-one producer and the consumers of both kinds), and
// smaller ones do not.
func TestPrefetchOnlyInLargeRings(t *testing.T) {
	blocks := ^int64(prefetch.BlockSize - 1)
	for _, c := range []struct {
		capacity int
		want     int64
	}{
		{64, 0},
		{record.MinPrefetchCapacity / 2, 0},
		{record.MinPrefetchCapacity, blocks},
		{1 << 20, blocks},
	} {
		o, err := NewOneToOne(make([]byte, c.capacity+TrailerLength))
		require.NoError(t, err)
		m, err := NewManyToOne(make([]byte, c.capacity+TrailerLength))
		require.NoError(t, err)
		require.Equal(t, c.want, o.prefetchBlocks, "one-to-one, capacity %d", c.capacity)
		require.Equal(t, c.want, m.prefetchBlocks, "many-to-one, capacity %d", c.capacity)
	}
}

// TestPrefetchWindow checks, against a block-by-block scan, that a producer
// moving its tail asks for each block prefetchDistance ahead exactly once
// (whatever the sizes of its claims), that the single-record fast path asks
// for the same block as the general one, and that every block lies inside
// the ring.
func TestPrefetchWindow(t *testing.T) {
	const capacity = 1 << 16
	mask := int64(capacity - 1)
	rng := rand.New(rand.NewPCG(1, 2))
	var tail int64
	asked := map[int64]int{}
	for range 20000 {
		var size int64
		if rng.IntN(4) == 0 {
			size = int64(RecordSize(rng.IntN(3000))) // a batch
		} else {
			size = int64(RecordSize(rng.IntN(64))) // a record the fast path takes
		}
		next := tail + size
		first, last := prefetchWindow(tail, next)
		var want []int64
		for p := tail + prefetchDistance + 1; p <= next+prefetchDistance; p++ {
			if p%prefetch.BlockSize == 0 {
				want = append(want, p)
			}
		}
		var got []int64
		for b := first; b <= last; b += prefetch.BlockSize {
			got = append(got, b)
			asked[b]++
			index := b & mask &^ (prefetch.BlockSize - 1)
			require.Equal(t, b&mask, index, "block %d is not aligned", b)
			require.LessOrEqual(t, index+prefetch.BlockSize, int64(capacity), "block %d runs past the ring", b)
		}
		require.Equal(t, want, got, "tail %d -> %d", tail, next)
		if size < prefetch.BlockSize && (tail^next)&^(prefetch.BlockSize-1) != 0 {
			// The fast path's prefetchAhead(next) asks for the block of
			// next+prefetchDistance: the same, single, block.
			require.Equal(t, first, last)
			require.Equal(t, (next+prefetchDistance)&^(prefetch.BlockSize-1), first)
		}
		tail = next
	}
	for b := int64(prefetchDistance + prefetch.BlockSize); b <= tail+prefetchDistance-prefetch.BlockSize; b += prefetch.BlockSize {
		require.Equal(t, 1, asked[b], "block %d", b)
	}
}
