package histogram

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/internal/sentinel"
)

var (
	// ErrArgument reports an argument the package refuses, the wrapping
	// error says which: a Config outside what HdrHistogram can represent
	// (Lowest < 1, Highest < 2*Lowest, SignificantFigures outside 1..5, or
	// a geometry whose values overflow 64 bits), a label longer than
	// MaxLabelLength bytes, a region that cannot hold the histogram
	// (shorter than Size(cfg), or not 8-byte aligned), or a snapshot that
	// Snapshot.Sub cannot subtract (of another histogram, its label or
	// config different, or later than the receiver: a count would become
	// negative).
	ErrArgument = errors.New("histogram: invalid argument")
	// ErrInUse reports that NewRecorder was given a region that already
	// holds a published histogram: a second writer would corrupt the first's
	// counts under its readers.
	ErrInUse = errors.New("histogram: region already holds a histogram")
	// ErrNotReady reports a region whose header is not published yet (its
	// magic word is still zero): the writer has not finished NewRecorder, or
	// never started. Not corruption: a reader may retry.
	ErrNotReady = errors.New("histogram: header not published")
	// ErrCorrupt reports a region that a correct Recorder cannot have
	// written: a wrong magic or version, an invalid config, a counts length
	// that does not match the config, a region too short for its counts, a
	// label length beyond MaxLabelLength, a negative count, counts that sum
	// below the total count word. It matches duty.ErrCorrupt. Shared memory
	// written by another process is never trusted.
	ErrCorrupt = sentinel.Corrupt("histogram: corrupt histogram")
)

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
