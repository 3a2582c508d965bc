package zmtp

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"slices"

	"golang.org/x/crypto/curve25519"
	"golang.org/x/crypto/nacl/box"

	"github.com/dutyrt/duty/internal/zmtpcurve"
	"github.com/dutyrt/duty/internal/zmtpwire"
)

// CURVE (CurveZMQ, rfc.zeromq.org spec 26, the CURVE mechanism of ZMTP
// 3.1) encrypts and authenticates a connection with Curve25519 keys:
// each side has a long-term key pair, and each connection a short-term
// pair made for it. The handshake (HELLO, WELCOME, INITIATE, READY)
// proves that the server holds the secret of the public key the client
// knows, and that the client holds the secret of the public key it
// presents, which the server then admits or refuses (Curve.Allow,
// Curve.Authorize). After it, every frame travels in a MESSAGE command
// boxed with the short-term keys (docs/zmtp.md, "CURVE"). The keys and
// the configuration are here; the handshake and the boxes are
// internal/zmtpcurve's.

// A CurveKey is a Curve25519 key, public or secret: 32 bytes, 40
// characters of Z85 as libzmq's zmq_curve_keypair prints them.
type CurveKey [32]byte

// ParseCurveKey decodes a key from its 40 characters of Z85.
func ParseCurveKey(z85 string) (CurveKey, error) {
	var k CurveKey
	if len(z85) != 40 {
		return k, fmt.Errorf("%w: a CURVE key is 40 characters, not %d", ErrZ85, len(z85))
	}
	b, err := Z85Decode(z85)
	if err != nil {
		return k, err
	}
	copy(k[:], b)
	return k, nil
}

// Z85 returns the key's 40 characters of Z85.
func (k CurveKey) Z85() string {
	s, _ := Z85Encode(k[:]) // 32 bytes: a multiple of 4
	return s
}

func (k CurveKey) isZero() bool { return k == CurveKey{} }

// NewCurveKeyPair makes a long-term key pair from crypto/rand, as
// zmq_curve_keypair does.
func NewCurveKeyPair() (public, secret CurveKey, err error) {
	pub, sec, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return public, secret, fmt.Errorf("zmtp: curve key pair: %w", err)
	}
	return *pub, *sec, nil
}

// CurvePublicKey returns the public key of a secret key, as
// zmq_curve_public does.
func CurvePublicKey(secret CurveKey) (CurveKey, error) {
	var pub CurveKey
	b, err := curve25519.X25519(secret[:], curve25519.Basepoint)
	if err != nil {
		return pub, fmt.Errorf("%w: %w", ErrCurveConfig, err)
	}
	copy(pub[:], b)
	return pub, nil
}

// Curve configures the CURVE mechanism of a socket (Options.Curve). A
// socket with CURVE speaks nothing else: a peer offering NULL, or CURVE
// in the same role, is refused. Either role fits any socket type: the
// server is the side that holds the key the other knows beforehand,
// whichever side binds.
type Curve struct {
	// Public and Secret are this socket's long-term key pair (required;
	// Public must be Secret's).
	Public, Secret CurveKey
	// Server makes this socket the CURVE server: clients must know its
	// Public key, and it decides which client keys it admits.
	Server bool
	// ServerKey is the server's public key, required on a client.
	ServerKey CurveKey
	// Allow, on a server, lists the client public keys admitted.
	Allow []CurveKey
	// Authorize, on a server, decides for a client whose key is not in
	// Allow, in the spirit of ZAP: nil admits it, an error refuses it
	// (ERROR sent, the connection closed, counted in Stats.AuthRefused,
	// logged with the error). It runs on the connection's handshake
	// goroutine, so it may be called for several connections at once,
	// and may block up to the handshake's timeout.
	Authorize func(client CurveKey, remote net.Addr) error
	// AllowAny, on a server, admits every client that completes the
	// handshake (encryption without authentication), when neither Allow
	// nor Authorize admits it first.
	AllowAny bool
}

// check validates a configuration (NewSocket).
func (c *Curve) check() error {
	if c.Secret.isZero() || c.Public.isZero() {
		return fmt.Errorf("%w: no key pair", ErrCurveConfig)
	}
	pub, err := CurvePublicKey(c.Secret)
	if err != nil {
		return err
	}
	if pub != c.Public {
		return fmt.Errorf("%w: Public is not Secret's public key", ErrCurveConfig)
	}
	if c.Server {
		if len(c.Allow) == 0 && c.Authorize == nil && !c.AllowAny {
			return fmt.Errorf("%w: a server needs Allow, Authorize or AllowAny", ErrCurveConfig)
		}
		return nil
	}
	if c.ServerKey.isZero() {
		return fmt.Errorf("%w: a client needs ServerKey", ErrCurveConfig)
	}
	return nil
}

// admit decides for a client's long-term key: nil admits.
func (c *Curve) admit(client CurveKey, remote net.Addr) error {
	if slices.Contains(c.Allow, client) {
		return nil
	}
	if c.Authorize != nil {
		if err := c.Authorize(client, remote); err != nil {
			return fmt.Errorf("%w: client %s: %w", ErrAuth, client.Z85(), err)
		}
		return nil
	}
	if c.AllowAny {
		return nil
	}
	return fmt.Errorf("%w: client %s not allowed", ErrAuth, client.Z85())
}

// shakeCurve is shake for a socket with CURVE: the greetings, CURVE's
// handshake, then the peer reads and writes through a zmtpcurve.Conn, which
// takes c's place among the socket's connections.
func (s *Socket) shakeCurve(c net.Conn) (*peer, error) {
	cv := s.opt.Curve
	minor, err := greet(c, zmtpwire.CurveGreeting(cv.Server), zmtpwire.MechanismCURVE)
	if err != nil {
		return nil, err
	}
	meta, cc, err := zmtpcurve.Handshake(c, curveConfig(cv, s.typ, &s.opt, c.RemoteAddr()))
	if err != nil {
		return nil, err
	}
	typ, id, err := s.typ.accept(meta)
	if err != nil {
		return nil, err
	}
	if !s.retrack(c, cc) {
		return nil, ErrClosed
	}
	p := s.newPeer(cc, minor, zmtpwire.NewEncoder(0))
	if cv.Server {
		s.st.authorized.Add(1)
		s.log.Info("curve client admitted", "remote", c.RemoteAddr().String(), "key", CurveKey(cc.Client()).Z85())
	}
	return s.ready(p, typ, id)
}

// retrack puts cc in c's place among the connections Close closes.
func (s *Socket) retrack(c net.Conn, cc *zmtpcurve.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	delete(s.conns, c)
	s.conns[cc] = struct{}{}
	return true
}

// curveConfig is the handshake's configuration of a socket of type typ
// with options opt, for a connection with remote: on a server, Allow and
// Authorize admit the client's key, and its socket type must fit typ.
func curveConfig(cv *Curve, typ Type, opt *Options, remote net.Addr) *zmtpcurve.Config {
	return &zmtpcurve.Config{
		Public: cv.Public, Secret: cv.Secret, Server: cv.Server, ServerKey: cv.ServerKey,
		Metadata:       zmtpwire.ReadyProperties(typ.String(), opt.Identity),
		MaxMessageSize: opt.MaxMessageSize,
		Admit:          func(client [32]byte) error { return cv.admit(client, remote) },
		Accept: func(meta []byte) (string, error) {
			if _, _, err := typ.accept(meta); err != nil {
				if errors.Is(err, ErrSocketType) {
					return incompatible, err
				}
				return "", err
			}
			return "", nil
		},
	}
}
