package histogram

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// Recorder records values into one histogram region. It has exactly one
// writer: Record and RecordN must not be called concurrently (one agent's
// duty cycle, one goroutine). Readers, in this process or another, use a
// Reader over the same region.
type Recorder struct {
	_ noCopy
	g geometry

	counts  []atomic.Int64 // the region's counts, a view of shared memory
	total   *atomic.Int64
	min     *atomic.Int64
	max     *atomic.Int64
	clamped *atomic.Int64

	// The writer's own copies of the words it alone stores: no load of
	// shared memory to update them.
	nTotal, nMin, nMax, nClamped int64
}

// NewRecorder lays out a histogram of cfg labelled label in the first
// Size(cfg) bytes of region and returns its Recorder. region must be 8-byte
// aligned and at least Size(cfg) long, label at most MaxLabelLength bytes
// and cfg valid (ErrArgument otherwise). A region that
// already holds a published histogram gives ErrInUse: there is one writer
// per region, for the region's whole life.
//
// NewRecorder writes the header and zeroes the counts, then publishes the
// header with a release store of the magic and version word: a Reader that
// loads that word sees a complete header and zero counts. The start time
// is the wall clock's, in ms since the Unix epoch.
func NewRecorder(region []byte, cfg Config, label string) (*Recorder, error) {
	g, err := newGeometry(cfg)
	if err != nil {
		return nil, err
	}
	if len(label) > MaxLabelLength {
		return nil, fmt.Errorf("%w: label of %d bytes, want at most %d", ErrArgument, len(label), MaxLabelLength)
	}
	buf, err := regionBuffer(region, g.size())
	if err != nil {
		return nil, err
	}
	if buf.Int64At(magicVersionOffset).Load() != 0 {
		return nil, fmt.Errorf("%w (label %q)", ErrInUse, readLabel(buf.Bytes()))
	}
	b := buf.Bytes()
	// Nothing below is visible to readers before the magic word: plain
	// stores suffice.
	clear(b[magicVersionOffset+8:])
	le := binary.LittleEndian
	le.PutUint64(b[lowestOffset:], uint64(cfg.Lowest))
	le.PutUint64(b[highestOffset:], uint64(cfg.Highest))
	le.PutUint32(b[significantFiguresOffset:], uint32(cfg.SignificantFigures))
	le.PutUint32(b[labelLengthOffset:], uint32(len(label)))
	le.PutUint64(b[countsLengthOffset:], uint64(g.countsLen))
	le.PutUint64(b[startMillisOffset:], uint64(time.Now().UnixMilli()))
	copy(b[labelOffset:labelOffset+MaxLabelLength], label)
	r := &Recorder{
		g:       g,
		counts:  countsView(buf, g.countsLen),
		total:   buf.Int64At(totalCountOffset),
		min:     buf.Int64At(minOffset),
		max:     buf.Int64At(maxOffset),
		clamped: buf.Int64At(clampedOffset),
	}
	// Release: publishes every byte written above.
	atomicbuf.StoreRelease64(buf.Int64At(magicVersionOffset), magicVersion)
	return r, nil
}

// NewRegion allocates a zeroed, 8-byte aligned region of Size(cfg) bytes
// on the heap, for a histogram that lives in this process only.
func NewRegion(cfg Config) ([]byte, error) {
	n, err := Size(cfg)
	if err != nil {
		return nil, err
	}
	return atomicbuf.Make(n).Bytes(), nil
}

// regionBuffer checks that region is aligned and holds size bytes, and
// returns an atomic view of its first size bytes.
func regionBuffer(region []byte, size int) (atomicbuf.Buffer, error) {
	if len(region) < size {
		return atomicbuf.Buffer{}, fmt.Errorf("%w: region of %d bytes, need %d", ErrArgument, len(region), size)
	}
	buf, err := atomicbuf.New(region[:size:size])
	if err != nil {
		return atomicbuf.Buffer{}, fmt.Errorf("%w: region: %w", ErrArgument, err)
	}
	return buf, nil
}

// countsView returns the n counts of a region as atomic words. The caller
// has checked that buf holds them and is 8-byte aligned.
func countsView(buf atomicbuf.Buffer, n int) []atomic.Int64 {
	return unsafe.Slice(buf.Int64At(countsOffset), n)
}

// Record records one occurrence of v. See RecordN.
func (r *Recorder) Record(v int64) { r.RecordN(v, 1) }

// RecordN records n occurrences of v. It never allocates, blocks or takes a
// lock. A v below Config.Lowest or above Config.Highest is recorded as that
// bound and counted as clamped. n <= 0 records nothing; an n that would take
// the total count past math.MaxInt64 is cut to what fits.
//
// Memory ordering: each word is updated with an atomic load and a release
// store (no LOCKed read-modify-write: this is the only writer), in this
// order: minimum and maximum, the value's count, the clamped count, the
// total count. A Reader loads them in the reverse order (Reader.Snapshot),
// so that what it copies is consistent: see docs/histogram.md, "Memory
// ordering".
func (r *Recorder) RecordN(v, n int64) {
	if n <= 0 {
		return
	}
	if n > math.MaxInt64-r.nTotal {
		if n = math.MaxInt64 - r.nTotal; n == 0 {
			return
		}
	}
	clamped := false
	if v < r.g.lowest {
		v, clamped = r.g.lowest, true
	} else if v > r.g.highest {
		v, clamped = r.g.highest, true
	}
	if v < r.nMin || r.nTotal == 0 {
		r.nMin = v
		atomicbuf.StoreRelease64(r.min, v)
	}
	if v > r.nMax {
		r.nMax = v
		atomicbuf.StoreRelease64(r.max, v)
	}
	c := &r.counts[r.g.index(v)]
	atomicbuf.StoreRelease64(c, c.Load()+n)
	if clamped {
		r.nClamped += n
		atomicbuf.StoreRelease64(r.clamped, r.nClamped)
	}
	r.nTotal += n
	atomicbuf.StoreRelease64(r.total, r.nTotal)
}

// noCopy makes go vet report copies of a Recorder: two copies would be two
// writers.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}
