package histogram

import (
	"testing"

	"github.com/dutyrt/duty/internal/layoutdoc"
)

// TestLayoutsPage checks this package's rows of docs/layouts.md against
// its layout constants: they are unexported, so the central test in
// internal/layoutdoc cannot.
func TestLayoutsPage(t *testing.T) {
	layoutdoc.Check(t, "histogram", map[string]int64{
		"magicVersionOffset":       int64(magicVersionOffset),
		"lowestOffset":             int64(lowestOffset),
		"highestOffset":            int64(highestOffset),
		"significantFiguresOffset": int64(significantFiguresOffset),
		"labelLengthOffset":        int64(labelLengthOffset),
		"countsLengthOffset":       int64(countsLengthOffset),
		"startMillisOffset":        int64(startMillisOffset),
		"labelOffset":              int64(labelOffset),
		"MaxLabelLength":           int64(MaxLabelLength),
		"totalCountOffset":         int64(totalCountOffset),
		"minOffset":                int64(minOffset),
		"maxOffset":                int64(maxOffset),
		"clampedOffset":            int64(clampedOffset),
		"countsOffset":             int64(countsOffset),
		"headerLength":             int64(headerLength),
		"layoutVersion":            int64(layoutVersion),
	})
}
