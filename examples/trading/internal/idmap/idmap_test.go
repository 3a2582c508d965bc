package idmap

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNewCapacity(t *testing.T) {
	for _, c := range []int{0, -1, maxCapacity + 1} {
		_, err := New(c)
		require.ErrorIs(t, err, ErrCapacity)
	}
	m, err := New(3)
	require.NoError(t, err)
	require.Equal(t, 3, m.Cap())
	require.Len(t, m.keys, 8)
}

func TestPutGetDelete(t *testing.T) {
	m, err := New(3)
	require.NoError(t, err)
	require.ErrorIs(t, m.Put(0, 1), ErrZeroKey)
	_, ok := m.Get(0)
	require.False(t, ok)
	require.NoError(t, m.Put(10, 1))
	require.NoError(t, m.Put(20, 2))
	require.NoError(t, m.Put(30, 3))
	require.ErrorIs(t, m.Put(40, 4), ErrFull)
	require.NoError(t, m.Put(20, 22), "overwriting a present key works when full")
	v, ok := m.Get(20)
	require.True(t, ok)
	require.Equal(t, int32(22), v)
	v, ok = m.Delete(10)
	require.True(t, ok)
	require.Equal(t, int32(1), v)
	_, ok = m.Delete(10)
	require.False(t, ok)
	require.NoError(t, m.Put(40, 4))
	require.Equal(t, 3, m.Len())
	m.Clear()
	require.Zero(t, m.Len())
	_, ok = m.Get(40)
	require.False(t, ok)
}

// TestAgainstMap drives the map and a Go map with the same random
// operations on a small key space (long probe runs, wrap-around) and
// compares every result.
func TestAgainstMap(t *testing.T) {
	for _, capacity := range []int{1, 2, 7, 64} {
		m, err := New(capacity)
		require.NoError(t, err)
		ref := map[uint64]int32{}
		rng := rand.New(rand.NewPCG(uint64(capacity), 1))
		for step := range 20_000 {
			key := rng.Uint64N(uint64(3*capacity)) + 1
			switch rng.IntN(3) {
			case 0:
				val := int32(step)
				err := m.Put(key, val)
				if _, present := ref[key]; !present && len(ref) == capacity {
					require.ErrorIs(t, err, ErrFull)
				} else {
					require.NoError(t, err)
					ref[key] = val
				}
			case 1:
				v, ok := m.Delete(key)
				rv, rok := ref[key]
				require.Equal(t, rok, ok)
				require.Equal(t, rv, v)
				delete(ref, key)
			default:
				v, ok := m.Get(key)
				rv, rok := ref[key]
				require.Equal(t, rok, ok)
				require.Equal(t, rv, v)
			}
			require.Equal(t, len(ref), m.Len())
		}
		for k, v := range ref {
			got, ok := m.Get(k)
			require.True(t, ok)
			require.Equal(t, v, got)
		}
	}
}

func TestNoAllocation(t *testing.T) {
	m, err := New(1024)
	require.NoError(t, err)
	key := uint64(1)
	allocs := testing.AllocsPerRun(10_000, func() {
		_ = m.Put(key, 1)
		_, _ = m.Get(key)
		if key > 500 {
			m.Delete(key - 500)
		}
		key++
	})
	require.Zero(t, allocs)
}
