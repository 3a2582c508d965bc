package corrupt

import "errors"

// Err is the error every corruption sentinel matches. Package duty
// exports it as ErrCorrupt.
var Err = errors.New("duty: corrupt data")

// sentinel is a package's corruption sentinel: its own text, and a match
// for Err.
type sentinel struct{ msg string }

func (s *sentinel) Error() string { return s.msg }

// Is makes errors.Is(s, Err) true.
func (s *sentinel) Is(target error) bool { return target == Err }

// New returns a new corruption sentinel with text msg ("ringbuf: corrupt
// ring buffer"). Each call returns a distinct error, as errors.New does.
func New(msg string) error { return &sentinel{msg: msg} }
