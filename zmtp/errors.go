package zmtp

import (
	"errors"

	"github.com/dutyrt/duty/internal/sentinel"
	"github.com/dutyrt/duty/internal/zmtpcurve"
	"github.com/dutyrt/duty/internal/zmtpwire"
)

// Outcomes of a send, returned unwrapped and without allocating.
var (
	// ErrHWM reports a PUSH socket whose queue holds its high-water mark of
	// messages: nothing was sent. Retry later or drop.
	ErrHWM = errors.New("zmtp: high-water mark reached")
	// ErrClosed reports a socket that was closed.
	ErrClosed = sentinel.Closed("zmtp: socket closed")
)

// ErrUnsent reports, from Close, messages that were still queued when its
// linger ended: discarded, and counted in Stats.Unsent. It is wrapped with
// their number.
var ErrUnsent = errors.New("zmtp: queued messages unsent at close")

// Errors a peer causes. The connection to that peer is closed; the socket
// goes on serving its other peers. Each is wrapped with details.
var (
	// ErrProtocol reports bytes no correct ZMTP peer sends: reserved flag
	// bits, a command with MORE set, a command in the middle of a
	// multipart message, a malformed command. It matches duty.ErrCorrupt.
	ErrProtocol = zmtpwire.ErrProtocol
	// ErrTooLarge reports a frame or a multipart message larger than
	// Options.MaxMessageSize. The decoder refuses it from the size field
	// alone, before reading (or allocating for) its body.
	ErrTooLarge = zmtpwire.ErrTooLarge
	// ErrGreeting reports a greeting that is not ZMTP 3: a wrong
	// signature, a major version below 3, or a connection that ended or
	// timed out within the greeting.
	ErrGreeting = zmtpwire.ErrGreeting
	// ErrMechanism reports a peer asking for a security mechanism other
	// than this socket's: other than NULL, or, with Options.Curve, other
	// than CURVE (a NULL peer is refused).
	ErrMechanism = zmtpwire.ErrMechanism
	// ErrHandshake reports a handshake that failed after the greeting: no
	// READY, a malformed READY, or an ERROR command from the peer.
	ErrHandshake = zmtpwire.ErrHandshake
	// ErrAuth reports a CURVE client whose long-term key the server does
	// not admit (Curve.Allow, Curve.Authorize): counted in
	// Stats.AuthRefused as well as Stats.Rejected.
	ErrAuth = errors.New("zmtp: client not authorized")
	// ErrCrypto reports CURVE bytes that fail: a box that does not open
	// (a forged or damaged command, a wrong key, a cookie not made for
	// this connection) or a MESSAGE nonce that does not grow (a replay).
	// In the handshake it comes wrapped with ErrHandshake; after it, with
	// ErrProtocol.
	ErrCrypto = zmtpcurve.ErrCrypto
	// ErrSocketType reports a peer whose socket type cannot talk to this
	// socket's (a PUSH meeting a SUB, say).
	ErrSocketType = errors.New("zmtp: incompatible socket type")
	// ErrExclusive reports a second peer of a PAIR socket, which has one
	// at a time: refused in the handshake.
	ErrExclusive = errors.New("zmtp: PAIR socket has a peer already")
	// ErrPeerTimeout reports a peer silent for longer than
	// Options.HeartbeatTimeout while heartbeats are on.
	ErrPeerTimeout = zmtpwire.ErrPeerTimeout
)

// Usage errors.
var (
	// ErrState reports a REQ or REP call out of turn: a REQ's second
	// send before the reply, a Recv before the request; a REP's send
	// before a request, a second Recv before the reply (libzmq's EFSM).
	ErrState = errors.New("zmtp: REQ/REP call out of turn")
	// ErrNoPeer reports a REQ send with no peer connected (Send), or
	// none before its context ended (SendContext): nothing was sent.
	ErrNoPeer = errors.New("zmtp: no peer connected")
	// ErrEndpoint reports an endpoint that is neither tcp://host:port nor
	// ipc:///path.
	ErrEndpoint = errors.New("zmtp: bad endpoint")
	// ErrCurveConfig reports an Options.Curve that cannot work: no key
	// pair, a public key that is not the secret's, a client without the
	// server's key, a server that admits no one.
	ErrCurveConfig = errors.New("zmtp: bad CURVE configuration")
	// ErrSocketKind reports a call the socket's type does not offer
	// (Recv on a PUSH, Subscribe on a PULL, ...).
	ErrSocketKind = errors.New("zmtp: operation not supported by this socket type")
)

type protocolError struct{ msg string }

func (e *protocolError) Error() string { return ErrProtocol.Error() + ": " + e.msg }
func (e *protocolError) Unwrap() error { return ErrProtocol }
