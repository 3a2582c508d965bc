package counters

import (
	"testing"

	"github.com/dutyrt/duty/internal/layoutdoc"
)

// TestLayoutsPage checks this package's rows of docs/layouts.md against
// its layout constants: they are unexported, so the central test in
// internal/layoutdoc cannot.
func TestLayoutsPage(t *testing.T) {
	layoutdoc.Check(t, "counters", map[string]int64{
		"valueRecordLength":          int64(valueRecordLength),
		"valueFieldOffset":           int64(valueFieldOffset),
		"registrationIDOffset":       int64(registrationIDOffset),
		"ownerIDOffset":              int64(ownerIDOffset),
		"referenceIDOffset":          int64(referenceIDOffset),
		"metadataRecordLength":       int64(metadataRecordLength),
		"stateOffset":                int64(stateOffset),
		"typeIDOffset":               int64(typeIDOffset),
		"freeForReuseDeadlineOffset": int64(freeForReuseDeadlineOffset),
		"keyOffset":                  int64(keyOffset),
		"maxKeyLength":               int64(maxKeyLength),
		"labelLengthOffset":          int64(labelLengthOffset),
		"labelOffset":                int64(labelOffset),
		"maxLabelLength":             int64(maxLabelLength),
	})
}
