package main

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/pad"
)

// TestCheckersDoNotShareLines allocates checkers back to back, as the W3
// variants do (one per side), and requires every word a checker writes per
// message to be at least pad.PairSize bytes from every word the other one
// writes: two checkers on one cache line make each round trip move it
// between the cores.
func TestCheckersDoNotShareLines(t *testing.T) {
	for _, producers := range []int{1, 2, 4} {
		a, b := newChecker(producers), newChecker(producers)
		words := func(c *checker) []uintptr {
			w := []uintptr{uintptr(unsafe.Pointer(&c.received)), uintptr(unsafe.Pointer(&c.err))}
			for i := range c.expected {
				w = append(w, uintptr(unsafe.Pointer(&c.expected[i])))
			}
			return w
		}
		for _, x := range words(a) {
			for _, y := range words(b) {
				d := x - y
				if y > x {
					d = y - x
				}
				require.GreaterOrEqual(t, d, uintptr(pad.PairSize), "producers=%d: words %#x and %#x", producers, x, y)
			}
		}
		// The padding is inside the objects: whatever the allocator puts
		// next to them is as far away.
		require.Equal(t, producers, len(a.expected))
		require.Equal(t, producers, cap(a.expected))
	}
}
