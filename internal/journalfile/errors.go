package journalfile

import (
	"errors"

	"github.com/dutyrt/duty/internal/sentinel"
)

// The sentinel errors of the journal's files. Package journal exports
// them under the same names (with their contracts); they are defined here
// so that the errors of this package and of journal are the same values.
var (
	ErrCorrupt         = sentinel.Corrupt("journal: corrupt journal")
	ErrVersion         = errors.New("journal: unsupported layout version")
	ErrReleased        = errors.New("journal: segment released")
	ErrBehindRetention = errors.New("journal: position behind retention")
	ErrArgument        = errors.New("journal: invalid argument")
	ErrReadersFull     = errors.New("journal: reader registry full")
)
