package histogram

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/internal/sentinel"
)

var (
	// ErrConfig reports a Config outside what HdrHistogram can represent
	// (Lowest < 1, Highest < 2*Lowest, SignificantFigures outside 1..5, or
	// a geometry whose values overflow 64 bits), or a label longer than
	// MaxLabelLength bytes.
	ErrConfig = errors.New("histogram: invalid config or label")
	// ErrRegion reports a region a caller passed that cannot hold the
	// histogram: shorter than Size(cfg), or not 8-byte aligned. Errors for
	// misalignment also wrap atomicbuf.ErrMisaligned.
	ErrRegion = errors.New("histogram: invalid region")
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
	// ErrMismatch reports that Snapshot.Sub was given a snapshot of another
	// histogram (label or config differ) or a later one than the receiver
	// (a count would become negative).
	ErrMismatch = errors.New("histogram: snapshots do not match")
)

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
