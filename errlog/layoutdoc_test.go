package errlog

import (
	"testing"

	"github.com/dutyrt/duty/internal/layoutdoc"
)

// TestLayoutsPage checks this package's rows of docs/layouts.md against
// its layout constants: they are unexported, so the central test in
// internal/layoutdoc cannot.
func TestLayoutsPage(t *testing.T) {
	layoutdoc.Check(t, "errlog", map[string]int64{
		"recordAlignment":                 int64(recordAlignment),
		"lengthOffset":                    int64(lengthOffset),
		"observationCountOffset":          int64(observationCountOffset),
		"lastObservationTimestampOffset":  int64(lastObservationTimestampOffset),
		"firstObservationTimestampOffset": int64(firstObservationTimestampOffset),
		"encodedErrorOffset":              int64(encodedErrorOffset),
		"headerLength":                    int64(headerLength),
	})
}
