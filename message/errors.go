package message

import "errors"

var (
	// ErrLayout reports a type Fixed cannot send as its own bytes: a field
	// of a kind without a fixed, platform-independent size, or implicit
	// padding. The message names the field.
	ErrLayout = errors.New("message: type has no fixed layout")
	// ErrByteOrder reports a big-endian machine, where a Fixed type's
	// bytes would not be the little-endian layout other processes read.
	ErrByteOrder = errors.New("message: fixed layouts need a little-endian machine")
	// ErrLength reports a payload whose length is not the type's.
	ErrLength = errors.New("message: wrong payload length")
	// ErrInvalid reports a payload that holds a value its type cannot
	// represent (a bool byte other than 0 or 1).
	ErrInvalid = errors.New("message: invalid value in payload")
	// ErrTypeID reports a type id outside 1..mailbox.MaxTypeID, or a
	// message whose type id is not the codec's.
	ErrTypeID = errors.New("message: wrong type id")
	// ErrNoRoute reports a message whose type id has no handler.
	ErrNoRoute = errors.New("message: no handler for type id")
	// ErrDuplicateRoute reports a second handler for one type id.
	ErrDuplicateRoute = errors.New("message: type id already has a handler")
)
