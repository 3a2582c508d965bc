package message

import (
	"fmt"

	"github.com/dutyrt/duty/mailbox"
)

// Codec is the encoding of a message type T with its type id, for types
// that are not a fixed layout (or that want their own). Messages of a
// Codec are one part.
type Codec[T any] interface {
	// TypeID returns the type id of T's messages (1..mailbox.MaxTypeID).
	TypeID() int32
	// Size returns the length of *v's encoding.
	Size(v *T) int
	// Encode writes *v's encoding into dst, which is Size(v) bytes long
	// and may alias a mailbox's ring: it must not panic (the claim would
	// stay open until the mailbox's liveness check released it) and must
	// not retain dst.
	Encode(dst []byte, v *T)
	// Decode reads a payload into *v. It must check what it reads (the
	// bytes may come from another process) and return an error for a
	// payload it cannot decode, never panic, and must not retain src.
	Decode(src []byte, v *T) error
}

// Send sends *v to mb as one message of c's type. A *Fixed sends through
// the mailbox's Send (one copy); another codec encodes straight into a
// claim of the ring. Outcomes as for mailbox.Mailbox.Send, or an error
// wrapping ErrTypeID for a codec whose type id is out of range.
//
// Through the Codec interface the compiler cannot prove that v does not
// escape: a v on the caller's stack may then be moved to the heap. Call
// (*Fixed).Send directly where that matters.
func Send[T any](mb *mailbox.Mailbox, c Codec[T], v *T) error {
	if f, ok := c.(*Fixed[T]); ok {
		return f.Send(mb, v)
	}
	id := c.TypeID()
	if id < 1 || id > mailbox.MaxTypeID {
		return fmt.Errorf("%w: %d is outside 1..%d", ErrTypeID, id, mailbox.MaxTypeID)
	}
	cl, err := mb.Claim(id, c.Size(v))
	if err != nil {
		return err
	}
	c.Encode(cl.Payload(), v)
	return cl.Commit()
}
