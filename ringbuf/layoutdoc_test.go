package ringbuf

import (
	"testing"

	"github.com/dutyrt/duty/internal/layoutdoc"
)

// TestLayoutsPage checks this package's rows of docs/layouts.md against
// its layout constants: they are unexported, so the central test in
// internal/layoutdoc cannot.
func TestLayoutsPage(t *testing.T) {
	layoutdoc.Check(t, "ringbuf", map[string]int64{
		"TrailerLength":            int64(TrailerLength),
		"TailPositionOffset":       int64(TailPositionOffset),
		"HeadCachePositionOffset":  int64(HeadCachePositionOffset),
		"HeadPositionOffset":       int64(HeadPositionOffset),
		"correlationCounterOffset": int64(correlationCounterOffset),
		"consumerHeartbeatOffset":  int64(consumerHeartbeatOffset),
		"HeaderLength":             int64(HeaderLength),
		"LengthOffset":             int64(LengthOffset),
		"TypeOffset":               int64(TypeOffset),
		"RecordAlignment":          int64(RecordAlignment),
		"PaddingTypeID":            int64(PaddingTypeID),
		"minCapacityOneToOne":      int64(minCapacityOneToOne),
		"minCapacityManyToOne":     int64(minCapacityManyToOne),
	})
}
