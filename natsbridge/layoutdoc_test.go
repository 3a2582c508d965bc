package natsbridge

import (
	"testing"

	"github.com/dutyrt/duty/internal/layoutdoc"
)

// TestLayoutsPage checks this package's rows of docs/layouts.md against
// its batch frame constants: they are unexported, so the central test in
// internal/layoutdoc cannot.
func TestLayoutsPage(t *testing.T) {
	layoutdoc.Check(t, "natsbridge", map[string]int64{
		"offMagic":          offMagic,
		"offVersion":        offVersion,
		"frameVersion":      frameVersion,
		"offCount":          offCount,
		"offSource":         offSource,
		"offSequence":       offSequence,
		"offFirst":          offFirst,
		"offBodyLen":        offBodyLen,
		"offCRC":            offCRC,
		"headerLength":      headerLength,
		"entryHeaderLength": entryHeaderLength,
		"partPrefixLength":  partPrefixLength,
	})
}
