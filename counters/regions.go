package counters

import (
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// regions is the validated pair of buffers shared by Manager, Counter and
// Reader.
type regions struct {
	meta, vals atomicbuf.Buffer
	maxID      int
}

// wrap validates metadata and values without touching their contents: both
// 8-byte aligned, values holding 1..MaxCounters records, metadata at least
// metadataToValuesRatio times as long as values (Agrona's rule, which also
// guarantees a metadata record for every value record).
func wrap(metadata, values []byte) (regions, error) {
	m, err := atomicbuf.New(metadata)
	if err != nil {
		return regions{}, fmt.Errorf("%w: metadata: %w", ErrArgument, err)
	}
	v, err := atomicbuf.New(values)
	if err != nil {
		return regions{}, fmt.Errorf("%w: values: %w", ErrArgument, err)
	}
	n := len(values) / valueRecordLength
	if n < 1 || n > maxCounters {
		return regions{}, fmt.Errorf("%w: values region of %d bytes holds %d counters, want 1..%d", ErrArgument, len(values), n, maxCounters)
	}
	if len(metadata) < metadataToValuesRatio*len(values) {
		return regions{}, fmt.Errorf("%w: metadata buffer is too small: %d bytes, want >= %d (%d x values)", ErrArgument, len(metadata), metadataToValuesRatio*len(values), metadataToValuesRatio)
	}
	return regions{meta: m, vals: v, maxID: n - 1}, nil
}

// NewRegions allocates zeroed metadata and values regions for n counters
// (1..4 194 303). The values region starts on a 128-byte boundary, so each
// value record has two cache lines to itself.
func NewRegions(n int) (metadata, values []byte, err error) {
	r, err := Layout(n)
	if err != nil {
		return nil, nil, err
	}
	metadata = atomicbuf.Make(r.MetadataLength).Bytes()
	raw := atomicbuf.Make(r.ValuesLength + valueRecordLength).Bytes()
	skip := int(-uintptr(unsafe.Pointer(unsafe.SliceData(raw))) & (valueRecordLength - 1))
	values = raw[skip : skip+r.ValuesLength : skip+r.ValuesLength]
	return metadata, values, nil
}

func (r *regions) checkID(id int) error {
	if id < 0 || id > r.maxID {
		return outOfRange(id, r.maxID)
	}
	return nil
}

// The accessors below take ids already checked against maxID; wrap
// guarantees every record of such an id lies inside its region, 8-aligned.

func (r *regions) state(id int) int32 {
	return r.meta.Int32At(metadataOffset(id) + stateOffset).Load()
}

func (r *regions) typeID(id int) int32 {
	return r.meta.Int32At(metadataOffset(id) + typeIDOffset).Load()
}

func (r *regions) deadline(id int) int64 {
	return r.meta.Int64At(metadataOffset(id) + freeForReuseDeadlineOffset).Load()
}

func (r *regions) valueWord(id int) *atomic.Int64 {
	return r.vals.Int64At(valueOffset(id) + valueFieldOffset)
}

func (r *regions) registrationID(id int) int64 {
	return r.vals.Int64At(valueOffset(id) + registrationIDOffset).Load()
}

func (r *regions) ownerID(id int) int64 {
	return r.vals.Int64At(valueOffset(id) + ownerIDOffset).Load()
}

func (r *regions) referenceID(id int) int64 {
	return r.vals.Int64At(valueOffset(id) + referenceIDOffset).Load()
}

// labelLength loads id's label length and checks it.
func (r *regions) labelLength(id int) (int, error) {
	n := r.meta.Int32At(metadataOffset(id) + labelLengthOffset).Load()
	if n < 0 || n > maxLabelLength {
		return 0, corrupt("counter %d: label length %d, want 0..%d", id, n, maxLabelLength)
	}
	return int(n), nil
}

// checkState reports a state other than the three Agrona defines.
func checkState(id int, s int32) error {
	if s != stateUnused && s != StateAllocated && s != StateReclaimed {
		return corrupt("counter %d: state %d", id, s)
	}
	return nil
}
