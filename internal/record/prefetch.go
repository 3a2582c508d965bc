package record

import "github.com/dutyrt/duty/internal/prefetch"

// The rings' prefetching (docs/ringbuf.md, "Prefetching"): a one-to-one
// producer asks for the ring's lines PrefetchDistance bytes ahead of its
// tail (package ringbuf), a consumer readPrefetchDistance bytes ahead of
// its position (Reader), both only in rings of at least
// MinPrefetchCapacity bytes, where the window is a small part of the ring.
const (
	PrefetchDistance     = 2048
	readPrefetchDistance = 1024
	MinPrefetchCapacity  = 4 * PrefetchDistance
)

// PrefetchBlocks returns the mask that takes a position to the start of
// its prefetch.BlockSize block in a log of capacity bytes, or 0 in a log
// too small to prefetch in: a position whose block changes under the mask
// is where the ends ask for the next block, and a mask of 0 never
// changes.
func PrefetchBlocks(capacity int) int64 {
	if capacity < MinPrefetchCapacity {
		return 0
	}
	return ^int64(prefetch.BlockSize - 1)
}
