package record

import "fmt"

// Action is a controlled read's handler's decision about the message it
// was given (Agrona's ControlledMessageHandler.Action). Package ringbuf
// documents the values under its own names (ringbuf.Action is this type);
// the read loops (Reader.ControlledRead), the mailbox's drain and the
// publication's poll act on them.
type Action int

const (
	// Abort leaves the message unconsumed and ends the read.
	Abort Action = iota + 1
	// Break consumes the message and ends the read.
	Break
	// Commit consumes the message, releases everything read so far, and
	// continues.
	Commit
	// Continue consumes the message and continues.
	Continue
)

func (a Action) String() string {
	switch a {
	case Abort:
		return "ABORT"
	case Break:
		return "BREAK"
	case Commit:
		return "COMMIT"
	case Continue:
		return "CONTINUE"
	}
	return fmt.Sprintf("Action(%d)", int(a))
}
