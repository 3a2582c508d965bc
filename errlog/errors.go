package errlog

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/internal/sentinel"
)

var (
	// ErrCorrupt reports a record that a correct writer cannot have
	// written: a length between 1 and headerLength-1, or one that runs
	// past the end of the buffer. The buffer is shared memory, possibly
	// written by another (crashed, buggy or hostile) process: it is never
	// trusted.
	ErrCorrupt = sentinel.Corrupt("errlog: corrupt record")
	// errMisaligned reports a buffer whose first byte is not 8-byte
	// aligned. Errors wrapping it also wrap atomicbuf.ErrMisaligned.
	errMisaligned = errors.New("errlog: misaligned buffer")
)

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrCorrupt}, args...)...)
}
