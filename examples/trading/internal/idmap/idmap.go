package idmap

import (
	"errors"
	"fmt"
)

// maxCapacity bounds New so the table size fits comfortably in an int32.
const maxCapacity = 1 << 28

// Errors. Put returns them unwrapped, without allocating.
var (
	// ErrFull reports a Put into a map holding Cap keys.
	ErrFull = errors.New("idmap: full")
	// ErrZeroKey reports a Put of key 0, which marks an empty slot.
	ErrZeroKey = errors.New("idmap: key 0 is reserved")
	// ErrCapacity reports a capacity New cannot provide.
	ErrCapacity = errors.New("idmap: invalid capacity")
)

// Map maps non-zero uint64 keys to int32 values, with a fixed capacity.
type Map struct {
	keys  []uint64 // 0 = empty
	vals  []int32
	mask  uint64
	shift uint
	n     int
	cap   int
}

// New returns a map that holds up to capacity keys. The table is a power
// of two at least twice the capacity, so probes stay short when full.
func New(capacity int) (*Map, error) {
	if capacity < 1 || capacity > maxCapacity {
		return nil, fmt.Errorf("%w: %d (want 1..%d)", ErrCapacity, capacity, maxCapacity)
	}
	size, bits := 2, uint(1)
	for size < 2*capacity {
		size <<= 1
		bits++
	}
	return &Map{
		keys:  make([]uint64, size),
		vals:  make([]int32, size),
		mask:  uint64(size - 1),
		shift: 64 - bits,
		cap:   capacity,
	}, nil
}

// home is the key's preferred slot: Fibonacci hashing, so sequential ids
// spread over the table.
func (m *Map) home(key uint64) uint64 { return (key * 0x9E3779B97F4A7C15) >> m.shift }

// Len returns the number of keys.
func (m *Map) Len() int { return m.n }

// Cap returns the most keys the map holds.
func (m *Map) Cap() int { return m.cap }

// Get returns the value of key and whether it is present.
func (m *Map) Get(key uint64) (int32, bool) {
	if key == 0 {
		return 0, false
	}
	for i := m.home(key); ; i = (i + 1) & m.mask {
		switch m.keys[i] {
		case key:
			return m.vals[i], true
		case 0:
			return 0, false
		}
	}
}

// Put sets key's value, inserting it if absent. It returns ErrZeroKey for
// key 0 and ErrFull when key is absent and the map holds Cap keys.
func (m *Map) Put(key uint64, val int32) error {
	if key == 0 {
		return ErrZeroKey
	}
	for i := m.home(key); ; i = (i + 1) & m.mask {
		switch m.keys[i] {
		case key:
			m.vals[i] = val
			return nil
		case 0:
			if m.n == m.cap {
				return ErrFull
			}
			m.keys[i] = key
			m.vals[i] = val
			m.n++
			return nil
		}
	}
}

// Delete removes key and returns its value and whether it was present.
func (m *Map) Delete(key uint64) (int32, bool) {
	if key == 0 {
		return 0, false
	}
	i := m.home(key)
	for ; ; i = (i + 1) & m.mask {
		if m.keys[i] == key {
			break
		}
		if m.keys[i] == 0 {
			return 0, false
		}
	}
	val := m.vals[i]
	// Backward-shift deletion: move later entries of the probe run into
	// the hole when their home slot does not lie cyclically in (hole, j].
	hole := i
	for j := (i + 1) & m.mask; m.keys[j] != 0; j = (j + 1) & m.mask {
		h := m.home(m.keys[j])
		if (j-h)&m.mask >= (j-hole)&m.mask {
			m.keys[hole] = m.keys[j]
			m.vals[hole] = m.vals[j]
			hole = j
		}
	}
	m.keys[hole] = 0
	m.vals[hole] = 0
	m.n--
	return val, true
}

// Clear removes every key.
func (m *Map) Clear() {
	clear(m.keys)
	clear(m.vals)
	m.n = 0
}
