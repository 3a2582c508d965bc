package pad

const (
	// LineSize is the cache line size duty assumes: 64 bytes.
	LineSize = 64
	// PairSize is two cache lines, 128 bytes: the unit the adjacent-line
	// prefetcher fetches.
	PairSize = 2 * LineSize
)

// Line is one cache line of padding, for a blank field: _ pad.Line.
type Line [LineSize]byte

// Pair is two cache lines of padding, for a blank field: _ pad.Pair.
type Pair [PairSize]byte
