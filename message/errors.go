package message

import "errors"

var (
	// ErrLayout reports a type Fixed cannot send as its own bytes: a field
	// of a kind without a fixed, platform-independent size, or implicit
	// padding. The message names the field.
	ErrLayout = errors.New("message: type has no fixed layout")
	// ErrPayload reports a payload that does not decode as its type: a
	// length other than the type's, more than one part, or a value the
	// type cannot represent (a bool byte other than 0 or 1). The message
	// says which.
	ErrPayload = errors.New("message: payload does not decode as its type")
	// ErrTypeID reports a type id outside 1..mailbox.MaxTypeID, a second
	// handler for one type id, or a message whose type id is not the
	// codec's.
	ErrTypeID = errors.New("message: wrong type id")
	// ErrNoRoute reports a message whose type id has no handler.
	ErrNoRoute = errors.New("message: no handler for type id")
)
