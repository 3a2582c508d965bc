package histogram

import (
	"fmt"
	"math"
	"math/bits"
)

// Byte layout of one histogram region. This file is the single source of
// these numbers; layout_test.go asserts them against raw bytes written by a
// Recorder and against docs/layouts.md.
//
// A region is a headerLength-byte header followed by the counts array, one
// int64 per HdrHistogram counts index, in hdrhistogram-go's order:
//
//	  0  int64   magic and version: layoutMagic | layoutVersion<<32; 0 until the
//	             header is complete, then stored once, last, with release
//	             semantics
//	  8  int64   Config.Lowest
//	 16  int64   Config.Highest
//	 24  int32   Config.SignificantFigures
//	 28  int32   label length (0..MaxLabelLength)
//	 32  int64   counts length: number of int64 counts after the header
//	 40  int64   start time (ms since the Unix epoch)
//	 48  [64]byte label (UTF-8)
//	112  ..128   reserved (0)
//	128  int64   total count (stored last by each Record)
//	136  int64   minimum recorded value (0 while empty)
//	144  int64   maximum recorded value (0 while empty)
//	152  int64   clamped count: values recorded at a bound
//	160  ..192   reserved (0)
//	192  int64   counts[0], counts[1], ... counts[counts length - 1]
//
// The immutable words (0..128) and the words the writer updates (128..)
// sit on different cache lines of a 64-byte aligned region. All words are
// little-endian (the native order of every platform duty supports).
const (
	// magicVersionOffset is the offset of the int64 magic and version word.
	magicVersionOffset = 0
	// lowestOffset is the offset of the int64 Config.Lowest.
	lowestOffset = 8
	// highestOffset is the offset of the int64 Config.Highest.
	highestOffset = 16
	// significantFiguresOffset is the offset of the int32
	// Config.SignificantFigures.
	significantFiguresOffset = 24
	// labelLengthOffset is the offset of the int32 label length.
	labelLengthOffset = 28
	// countsLengthOffset is the offset of the int64 number of counts.
	countsLengthOffset = 32
	// startMillisOffset is the offset of the int64 start time, epoch ms.
	startMillisOffset = 40
	// labelOffset is the offset of the label bytes.
	labelOffset = 48
	// MaxLabelLength is the longest label, in bytes.
	MaxLabelLength = 64
	// totalCountOffset is the offset of the int64 total count.
	totalCountOffset = 128
	// minOffset is the offset of the int64 minimum recorded value.
	minOffset = 136
	// maxOffset is the offset of the int64 maximum recorded value.
	maxOffset = 144
	// clampedOffset is the offset of the int64 count of clamped values.
	clampedOffset = 152
	// countsOffset is the offset of counts[0]; counts[i] is at
	// countsOffset + 8*i.
	countsOffset = 192
	// headerLength is the length of the header.
	headerLength = countsOffset

	// layoutMagic is the low 32 bits of the magic and version word: the bytes
	// "HIST" in memory order.
	layoutMagic = 0x54534948
	// layoutVersion is the layout version this package writes and reads, the high
	// 32 bits of the magic and version word.
	layoutVersion = 1
	// magicVersion is the value of the magic and version word of a
	// published header.
	magicVersion int64 = layoutVersion<<32 | layoutMagic
)

// Config is HdrHistogram's parameters: values from Lowest to Highest are
// tracked to SignificantFigures decimal digits of precision.
type Config struct {
	// Lowest is the lowest value told apart from 0 (>= 1): 1 for
	// nanoseconds recorded at nanosecond resolution, 1000 for nanoseconds
	// recorded to the microsecond.
	Lowest int64
	// Highest is the highest trackable value (>= 2*Lowest).
	Highest int64
	// SignificantFigures is the decimal precision kept at every magnitude,
	// 1..5 (3: a value is known to within 0.1%).
	SignificantFigures int
}

// geometry is HdrHistogram's bucket geometry for a Config.
//
// The counts are buckets of sub-buckets. Bucket 0 has subBucketCount
// sub-buckets of width 2^unit, covering [0, subBucketCount<<unit). Each
// further bucket k covers twice the range of the one before with the same
// number of sub-buckets, so its sub-buckets are 2^(unit+k) wide; its lower
// half overlaps bucket k-1 and is never used, so only its upper half
// (subBucketHalfCount sub-buckets) has counts. Flat index of (bucket k,
// sub-bucket s): (k+1)*subBucketHalfCount + s - subBucketHalfCount.
type geometry struct {
	unit       uint  // log2 of the width of bucket 0's sub-buckets
	halfMag    uint  // log2(subBucketHalfCount)
	halfCount  int64 // subBucketHalfCount
	subMask    int64 // (subBucketCount-1) << unit
	countsLen  int   // (bucketCount+1) * subBucketHalfCount
	lowest     int64
	highest    int64
	sigFigures int
}

// newGeometry checks cfg and computes its geometry exactly as
// hdrhistogram-go does, so that the counts index the same values.
func newGeometry(cfg Config) (geometry, error) {
	if cfg.SignificantFigures < 1 || cfg.SignificantFigures > 5 {
		return geometry{}, fmt.Errorf("%w: significant figures %d, want 1..5", ErrArgument, cfg.SignificantFigures)
	}
	if cfg.Lowest < 1 || cfg.Highest/2 < cfg.Lowest {
		return geometry{}, fmt.Errorf("%w: lowest %d, highest %d: want lowest >= 1 and highest >= 2*lowest", ErrArgument, cfg.Lowest, cfg.Highest)
	}
	// Unit resolution is kept up to 2*10^figures: the sub-bucket count is
	// the power of two at or above it. 2*10^f is never a power of two, so
	// the bit length of 2*10^f - 1 is its rounded-up log2.
	subMag := uint(bits.Len64(uint64(2*pow10(cfg.SignificantFigures) - 1)))
	halfMag := subMag - 1
	// hdrhistogram-go computes floor(log2(Lowest)) in float64; so must we,
	// or a Lowest just below a large power of two (where float64 rounds it
	// up) would get another geometry than hdrhistogram.Import builds.
	unit := uint(math.Floor(math.Log2(float64(cfg.Lowest))))
	if unit+halfMag > 61 {
		return geometry{}, fmt.Errorf("%w: lowest %d too large for %d significant figures", ErrArgument, cfg.Lowest, cfg.SignificantFigures)
	}
	subCount := int64(1) << subMag
	g := geometry{
		unit:       unit,
		halfMag:    halfMag,
		halfCount:  subCount / 2,
		subMask:    (subCount - 1) << unit,
		lowest:     cfg.Lowest,
		highest:    cfg.Highest,
		sigFigures: cfg.SignificantFigures,
	}
	// Buckets: enough doublings of the first untrackable value to pass
	// Highest; when the next doubling would overflow, one last bucket
	// reaches math.MaxInt64.
	buckets := int64(1)
	for untrackable := subCount << unit; untrackable <= cfg.Highest; untrackable <<= 1 {
		if untrackable > math.MaxInt64/2 {
			buckets++
			break
		}
		buckets++
	}
	n := (buckets + 1) * g.halfCount
	if n > (math.MaxInt-headerLength)/8 {
		return geometry{}, fmt.Errorf("%w: %d counts do not fit in memory", ErrArgument, n)
	}
	g.countsLen = int(n)
	if i := g.index(cfg.Highest); i < 0 || i >= g.countsLen {
		return geometry{}, fmt.Errorf("%w: highest %d has no counts index", ErrArgument, cfg.Highest)
	}
	if g.index(cfg.Lowest) < 0 {
		return geometry{}, fmt.Errorf("%w: lowest %d has no counts index", ErrArgument, cfg.Lowest)
	}
	return g, nil
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// config returns the Config g was built from.
func (g *geometry) config() Config {
	return Config{Lowest: g.lowest, Highest: g.highest, SignificantFigures: g.sigFigures}
}

// size is the length of a region with g's counts.
func (g *geometry) size() int { return headerLength + 8*g.countsLen }

// bucket returns the lowest bucket that holds v: the number of doublings
// of bucket 0's range needed to reach v. OR-ing the mask in makes every v
// in bucket 0 count as bucket 0's top.
func (g *geometry) bucket(v int64) int {
	return bits.Len64(uint64(v|g.subMask)) - int(g.unit) - int(g.halfMag+1)
}

// index returns the flat counts index of v (0 <= v). Values from Lowest to
// Highest map into 0..countsLen-1, monotonically.
func (g *geometry) index(v int64) int {
	k := g.bucket(v)
	s := v >> (uint(k) + g.unit) // in the upper half of the sub-buckets for k > 0
	return int((int64(k+1) << g.halfMag) + s - g.halfCount)
}

// valueAt returns the lowest value counted at flat index i.
func (g *geometry) valueAt(i int) int64 {
	k := (i >> g.halfMag) - 1
	s := int64(i)&(g.halfCount-1) + g.halfCount
	if k < 0 { // bucket 0's lower half
		s -= g.halfCount
		k = 0
	}
	return s << (uint(k) + g.unit)
}

// width returns the width of the sub-bucket that holds v.
func (g *geometry) width(v int64) int64 {
	k := g.bucket(v)
	if v>>(uint(k)+g.unit) >= 2*g.halfCount {
		k++
	}
	return int64(1) << (uint(k) + g.unit)
}

// lowestEquivalent returns the lowest value counted with v.
func (g *geometry) lowestEquivalent(v int64) int64 {
	k := g.bucket(v)
	return (v >> (uint(k) + g.unit)) << (uint(k) + g.unit)
}

// highestEquivalent returns the highest value counted with v.
func (g *geometry) highestEquivalent(v int64) int64 {
	return g.lowestEquivalent(v) + g.width(v) - 1
}

// medianEquivalent returns the middle of the values counted with v.
func (g *geometry) medianEquivalent(v int64) int64 {
	return g.lowestEquivalent(v) + g.width(v)>>1
}

// Size returns the length in bytes of a region holding one histogram of
// cfg: headerLength plus 8 bytes per count. It is a multiple of 8. An
// invalid cfg gives an error wrapping ErrArgument.
func Size(cfg Config) (int, error) {
	g, err := newGeometry(cfg)
	if err != nil {
		return 0, err
	}
	return g.size(), nil
}
