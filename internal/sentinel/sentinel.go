package sentinel

import "errors"

// ErrCorrupt is the error every corruption sentinel matches. Package duty
// exports it as ErrCorrupt.
var ErrCorrupt = errors.New("duty: corrupt data")

// ErrClosed is the error every closed sentinel matches. Package duty
// exports it as ErrClosed.
var ErrClosed = errors.New("duty: closed")

// sentinel is a package's sentinel: its own text, and a match for its root.
type sentinel struct {
	msg  string
	root error
}

func (s *sentinel) Error() string { return s.msg }

// Is makes errors.Is(s, root) true.
func (s *sentinel) Is(target error) bool { return target == s.root }

// Corrupt returns a new corruption sentinel with text msg ("ringbuf:
// corrupt ring buffer"). Each call returns a distinct error, as errors.New
// does.
func Corrupt(msg string) error { return &sentinel{msg: msg, root: ErrCorrupt} }

// Closed returns a new closed sentinel with text msg ("mailbox: closed").
// Each call returns a distinct error, as errors.New does.
func Closed(msg string) error { return &sentinel{msg: msg, root: ErrClosed} }
