package broadcast

import (
	"testing"

	"github.com/dutyrt/duty/internal/layoutdoc"
)

// TestLayoutsPage checks this package's rows of docs/layouts.md against
// its layout constants: they are unexported, so the central test in
// internal/layoutdoc cannot.
func TestLayoutsPage(t *testing.T) {
	layoutdoc.Check(t, "broadcast", map[string]int64{
		"trailerLength":           int64(trailerLength),
		"tailIntentCounterOffset": int64(tailIntentCounterOffset),
		"tailCounterOffset":       int64(tailCounterOffset),
		"latestCounterOffset":     int64(latestCounterOffset),
		"headerLength":            int64(headerLength),
		"recordAlignment":         int64(recordAlignment),
		"paddingTypeID":           int64(paddingTypeID),
	})
}
