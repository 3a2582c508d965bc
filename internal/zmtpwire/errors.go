package zmtpwire

import (
	"errors"

	"github.com/dutyrt/duty/internal/sentinel"
)

// The failures of the wire. Package zmtp exports the same values (its
// errors.go says what each means to a socket's user), so errors.Is
// matches either name.
var (
	// ErrProtocol reports bytes no correct ZMTP peer sends. It matches
	// duty.ErrCorrupt.
	ErrProtocol = sentinel.Corrupt("zmtp: protocol violation")
	// ErrTooLarge reports a frame or a multipart message beyond a
	// Decoder's bounds, refused from its size field.
	ErrTooLarge = errors.New("zmtp: message larger than the maximum")
	// ErrGreeting reports a greeting that is not ZMTP 3.
	ErrGreeting = errors.New("zmtp: bad greeting")
	// ErrMechanism reports a peer asking for another security mechanism.
	ErrMechanism = errors.New("zmtp: unsupported security mechanism")
	// ErrHandshake reports a handshake that failed after the greeting.
	ErrHandshake = errors.New("zmtp: handshake failed")
	// ErrPeerTimeout reports a peer silent for longer than a
	// DeadlineReader's Timeout.
	ErrPeerTimeout = errors.New("zmtp: peer timed out")
)

// ErrInterrupted, returned by a Decoder's reader, ends a read that is to
// be resumed, not the stream: Next rewinds to the start of the message,
// whose bytes stay buffered, and the next Next decodes it again.
var ErrInterrupted = errors.New("zmtp: read interrupted")
