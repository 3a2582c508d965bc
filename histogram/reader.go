package histogram

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// Reader reads a histogram region that a Recorder writes, in this process
// or another, while it is written. It never writes to the region, so it
// works over a read-only mapping. Snapshot may be called from several
// goroutines at once, each with its own Snapshot.
type Reader struct {
	g     geometry
	label string
	start int64

	magic   *atomic.Int64
	counts  []atomic.Int64
	total   *atomic.Int64
	min     *atomic.Int64
	max     *atomic.Int64
	clamped *atomic.Int64
}

// NewReader validates the header at the start of region and returns a
// Reader over the histogram it describes, which occupies the first Size()
// bytes of region. region must be 8-byte aligned (ErrArgument). A header not
// yet published (magic word 0) gives ErrNotReady; a wrong magic or version,
// an invalid config, a counts length other than the config's, a label
// length beyond MaxLabelLength or a region shorter than the histogram give
// an error wrapping ErrCorrupt (and duty.ErrCorrupt). NewReader never
// panics, whatever the bytes.
//
// The header is read once, after an acquire load of the magic word that
// the Recorder stored last; the Reader keeps its own copy of the config and
// label, so a header rewritten later cannot steer it out of the region.
func NewReader(region []byte) (*Reader, error) {
	buf, err := atomicbuf.New(region)
	if err != nil {
		return nil, fmt.Errorf("%w: region: %w", ErrArgument, err)
	}
	if len(region) < headerLength {
		if len(region) >= 8 && buf.Int64At(magicVersionOffset).Load() == 0 {
			return nil, fmt.Errorf("%w: region of %d bytes", ErrNotReady, len(region))
		}
		return nil, corrupt("region of %d bytes, shorter than the %d-byte header", len(region), headerLength)
	}
	switch mv := buf.Int64At(magicVersionOffset).Load(); { // acquire
	case mv == 0:
		return nil, ErrNotReady
	case int32(mv) != layoutMagic:
		return nil, corrupt("magic %#x, want %#x", uint32(mv), uint32(layoutMagic))
	case mv>>32 != layoutVersion:
		return nil, corrupt("layout version %d, this build reads %d", mv>>32, layoutVersion)
	}
	le := binary.LittleEndian
	cfg := Config{
		Lowest:             int64(le.Uint64(region[lowestOffset:])),
		Highest:            int64(le.Uint64(region[highestOffset:])),
		SignificantFigures: int(int32(le.Uint32(region[significantFiguresOffset:]))),
	}
	g, err := newGeometry(cfg)
	if err != nil {
		return nil, corrupt("%w", err)
	}
	if n := int64(le.Uint64(region[countsLengthOffset:])); n != int64(g.countsLen) {
		return nil, corrupt("counts length %d, config %+v has %d", n, cfg, g.countsLen)
	}
	if len(region) < g.size() {
		return nil, corrupt("region of %d bytes, histogram of %+v needs %d", len(region), cfg, g.size())
	}
	n := int32(le.Uint32(region[labelLengthOffset:]))
	if n < 0 || n > MaxLabelLength {
		return nil, corrupt("label length %d, want 0..%d", n, MaxLabelLength)
	}
	buf, _ = atomicbuf.New(region[:g.size():g.size()])
	return &Reader{
		g:       g,
		label:   string(region[labelOffset : labelOffset+n]),
		start:   int64(le.Uint64(region[startMillisOffset:])),
		magic:   buf.Int64At(magicVersionOffset),
		counts:  countsView(buf, g.countsLen),
		total:   buf.Int64At(totalCountOffset),
		min:     buf.Int64At(minOffset),
		max:     buf.Int64At(maxOffset),
		clamped: buf.Int64At(clampedOffset),
	}, nil
}

// readLabel returns the label of a published header, for error messages.
func readLabel(b []byte) string {
	n := min(max(int(int32(binary.LittleEndian.Uint32(b[labelLengthOffset:]))), 0), MaxLabelLength)
	return string(b[labelOffset : labelOffset+n])
}

// Label returns the histogram's label.
func (r *Reader) Label() string { return r.label }

// Config returns the histogram's Config.
func (r *Reader) Config() Config { return r.g.config() }

// Size returns the length of the histogram's region: Size(r.Config()).
func (r *Reader) Size() int { return r.g.size() }

// Snapshot copies the histogram into dst: its label, config and start
// time, and its counts as they are now, reusing dst.Counts (it allocates
// only when dst.Counts is shorter than the histogram's counts).
// dst.TotalCount is the sum of the copied counts, so dst is consistent
// with itself however fast the writer records; dst.Min and dst.Max bound
// every value counted (exact recorded values, not bucket bounds; 0 when
// empty), dst.Clamped counts clamped values among them.
//
// Memory ordering: Snapshot loads the total count word first, then the
// clamped count, the counts, the minimum and maximum, each with an atomic
// (acquire) load: the reverse of the Recorder's stores (RecordN). Counts
// only grow, so successive snapshots never see a count or a total
// decrease. A region whose words a correct Recorder cannot have written
// (a negative count, counts summing below the total word read first or
// past math.MaxInt64, a minimum or maximum outside the config's bounds, a
// magic word that changed) gives an error wrapping ErrCorrupt; dst is then
// unspecified.
func (r *Reader) Snapshot(dst *Snapshot) error {
	if r.magic.Load() != magicVersion {
		return corrupt("%q: magic and version word changed to %#x", r.label, r.magic.Load())
	}
	floor := r.total.Load()
	clamped := r.clamped.Load()
	if cap(dst.Counts) < len(r.counts) {
		dst.Counts = make([]int64, len(r.counts))
	}
	dst.Counts = dst.Counts[:len(r.counts)]
	var sum int64
	for i := range r.counts {
		c := r.counts[i].Load()
		if c < 0 || c > math.MaxInt64-sum {
			return corrupt("%q: count %d at index %d (sum so far %d)", r.label, c, i, sum)
		}
		dst.Counts[i] = c
		sum += c
	}
	lo, hi := r.min.Load(), r.max.Load()
	switch {
	case sum < floor:
		return corrupt("%q: counts sum to %d, below the total count %d", r.label, sum, floor)
	case clamped < 0 || clamped > sum:
		return corrupt("%q: clamped count %d of %d", r.label, clamped, sum)
	case sum > 0 && (lo < r.g.lowest || hi > r.g.highest || lo > hi):
		return corrupt("%q: min %d, max %d outside [%d, %d]", r.label, lo, hi, r.g.lowest, r.g.highest)
	}
	if sum == 0 {
		lo, hi = 0, 0
	}
	dst.Label, dst.Config, dst.StartMillis = r.label, r.g.config(), r.start
	dst.TotalCount, dst.Min, dst.Max, dst.Clamped = sum, lo, hi, clamped
	return nil
}
