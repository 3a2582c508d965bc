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
		"tailPositionOffset":       int64(tailPositionOffset),
		"headCachePositionOffset":  int64(headCachePositionOffset),
		"headPositionOffset":       int64(headPositionOffset),
		"correlationCounterOffset": int64(correlationCounterOffset),
		"consumerHeartbeatOffset":  int64(consumerHeartbeatOffset),
		"HeaderLength":             int64(HeaderLength),
		"lengthOffset":             int64(lengthOffset),
		"typeOffset":               int64(typeOffset),
		"recordAlignment":          int64(recordAlignment),
		"paddingTypeID":            int64(paddingTypeID),
		"minCapacityOneToOne":      int64(minCapacityOneToOne),
		"minCapacityManyToOne":     int64(minCapacityManyToOne),
	})
}
