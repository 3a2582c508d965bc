package zmtp

import (
	"bytes"
	"crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"

	"golang.org/x/crypto/curve25519"
	"golang.org/x/crypto/nacl/box"
	"golang.org/x/crypto/nacl/secretbox"
)

// CURVE (CurveZMQ, rfc.zeromq.org spec 26, the CURVE mechanism of ZMTP
// 3.1) encrypts and authenticates a connection with Curve25519 keys:
// each side has a long-term key pair, and each connection a short-term
// pair made for it. The handshake (HELLO, WELCOME, INITIATE, READY)
// proves that the server holds the secret of the public key the client
// knows, and that the client holds the secret of the public key it
// presents, which the server then admits or refuses (Curve.Allow,
// Curve.Authorize). After it, every frame travels in a MESSAGE command
// boxed with the short-term keys (docs/zmtp.md, "CURVE").

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

// Sizes and nonce prefixes of the CURVE commands (RFC 26).
const (
	helloLen    = 194 // HELLO's data: version 2, padding 72, C' 32, nonce 8, box 80
	welcomeLen  = 160 // WELCOME's data: nonce 16, box 144
	cookieLen   = 96  // nonce 16, secretbox 80
	initiateMin = cookieLen + 8 + box.Overhead + 128
	readyMin    = 8 + box.Overhead
	msgOverhead = 8 + 8 + box.Overhead + 1 // "\x07MESSAGE", nonce, tag, flags
	// maxHandshakeCmd bounds a handshake command (INITIATE carries the
	// client's metadata).
	maxHandshakeCmd = 64 << 10

	prefixHello    = "CurveZMQHELLO---"
	prefixWelcome  = "WELCOME-"
	prefixCookie   = "COOKIE--"
	prefixInitiate = "CurveZMQINITIATE"
	prefixVouch    = "VOUCH---"
	prefixReady    = "CurveZMQREADY---"
	prefixMsgC     = "CurveZMQMESSAGEC" // sent by the client
	prefixMsgS     = "CurveZMQMESSAGES" // sent by the server
	cmdMessage     = "\x07MESSAGE"
)

// Inner flags of a MESSAGE's plaintext (libzmq's message flags).
const (
	innerMore    = 0x01
	innerCommand = 0x02
)

func shortNonce(prefix string, n uint64) *[24]byte {
	var nonce [24]byte
	copy(nonce[:], prefix)
	binary.BigEndian.PutUint64(nonce[16:], n)
	return &nonce
}

func longNonce(prefix string, tail []byte) *[24]byte {
	var nonce [24]byte
	copy(nonce[:], prefix)
	copy(nonce[8:], tail)
	return &nonce
}

func randomBytes(b []byte) error {
	if _, err := io.ReadFull(rand.Reader, b); err != nil {
		return fmt.Errorf("%w: random: %w", ErrHandshake, err)
	}
	return nil
}

// curveHandshake runs CURVE's handshake on c after the greetings: HELLO,
// WELCOME, INITIATE, READY, with this socket's metadata, and returns the
// peer's metadata and the connection that boxes and unboxes frames from
// then on. A server refuses a client whose key it does not admit.
func (s *Socket) curveHandshake(c net.Conn) (meta []byte, cc *curveConn, err error) {
	cv := s.opt.Curve
	enc := NewEncoder(0)
	dec := NewDecoder(c, maxHandshakeCmd, 1)
	mine := readyProperties(s.typ, s.opt.Identity)
	if cv.Server {
		meta, cc, err = curveServe(c, enc, dec, cv, mine, s.typ)
	} else {
		meta, cc, err = curveClient(c, enc, dec, cv, mine)
	}
	if err != nil {
		return nil, nil, err
	}
	cc.maxFrame = s.opt.MaxMessageSize + msgOverhead
	// What the handshake's decoder read beyond its last command is the
	// peer's first MESSAGEs.
	cc.raw = append(cc.raw[:0], dec.buf[dec.pos:dec.w]...)
	return meta, cc, nil
}

// readCommand reads the next handshake command and returns its name and
// data; an ERROR from the peer is returned as an error.
func readCommand(dec *Decoder, want string) ([]byte, error) {
	k, err := dec.Next()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	if k != KindCommand {
		return nil, fmt.Errorf("%w: a message before %s", ErrHandshake, want)
	}
	name, data, err := parseCommand(dec.Command())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	switch string(name) {
	case want:
		return data, nil
	case "ERROR":
		return nil, fmt.Errorf("%w: peer says %q", ErrHandshake, errorReason(data))
	}
	return nil, fmt.Errorf("%w: %q instead of %s", ErrHandshake, name, want)
}

func writeCommand(c net.Conn, enc *Encoder, name string, data ...[]byte) error {
	enc.Command(name, data...)
	if _, err := enc.WriteTo(c); err != nil {
		return fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	return nil
}

// curveClient runs the client's side of the handshake.
func curveClient(c net.Conn, enc *Encoder, dec *Decoder, cv *Curve, mine []byte) ([]byte, *curveConn, error) {
	cnPub, cnSec, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	server := [32]byte(cv.ServerKey)
	secret := [32]byte(cv.Secret)
	// HELLO: version 1.0, padding, C', nonce 1, box[64 zeros](C'->S).
	hello := make([]byte, 0, helloLen)
	hello = append(hello, 1, 0)
	hello = append(hello, make([]byte, 72)...)
	hello = append(hello, cnPub[:]...)
	hello = binary.BigEndian.AppendUint64(hello, 1)
	hello = box.Seal(hello, make([]byte, 64), shortNonce(prefixHello, 1), &server, cnSec)
	if err := writeCommand(c, enc, "HELLO", hello); err != nil {
		return nil, nil, err
	}
	data, err := readCommand(dec, "WELCOME")
	if err != nil {
		return nil, nil, err
	}
	snPub, cookie, err := openWelcome(data, &server, cnSec)
	if err != nil {
		return nil, nil, err
	}
	cc := newCurveConn(c, snPub, cnSec, prefixMsgC, prefixMsgS)
	// INITIATE: cookie, nonce 2, box[C + vouch + metadata](C'->S'), the
	// vouch box[C' + S](C->S') proving that we hold C's secret.
	var vn [16]byte
	if err := randomBytes(vn[:]); err != nil {
		return nil, nil, err
	}
	vouch := box.Seal(nil, append(cnPub[:32:32], server[:]...), longNonce(prefixVouch, vn[:]), snPub, &secret)
	plain := slices.Concat(cv.Public[:], vn[:], vouch, mine)
	initiate := slices.Concat(cookie, binary.BigEndian.AppendUint64(nil, 2))
	initiate = box.SealAfterPrecomputation(initiate, plain, shortNonce(prefixInitiate, 2), &cc.key)
	if err := writeCommand(c, enc, "INITIATE", initiate); err != nil {
		return nil, nil, err
	}
	data, err = readCommand(dec, "READY")
	if err != nil {
		return nil, nil, err
	}
	meta, n, err := openReady(data, &cc.key)
	if err != nil {
		return nil, nil, err
	}
	cc.sendNonce, cc.recvNonce = 3, n
	return meta, cc, nil
}

// openWelcome opens a WELCOME's box (S->C') and returns the server's
// short-term key S' and the cookie to echo in INITIATE.
func openWelcome(data []byte, server, cnSec *[32]byte) (*[32]byte, []byte, error) {
	if len(data) != welcomeLen {
		return nil, nil, fmt.Errorf("%w: WELCOME of %d bytes", ErrHandshake, len(data))
	}
	plain, ok := box.Open(nil, data[16:], longNonce(prefixWelcome, data[:16]), server, cnSec)
	if !ok {
		return nil, nil, fmt.Errorf("%w: WELCOME: %w", ErrHandshake, ErrCrypto)
	}
	var sn [32]byte
	copy(sn[:], plain)
	return &sn, plain[32:], nil
}

// openReady opens a READY's box (S'->C') and returns the server's
// metadata and the nonce it used.
func openReady(data []byte, key *[32]byte) ([]byte, uint64, error) {
	if len(data) < readyMin {
		return nil, 0, fmt.Errorf("%w: READY of %d bytes", ErrHandshake, len(data))
	}
	n := binary.BigEndian.Uint64(data)
	meta, ok := box.OpenAfterPrecomputation(nil, data[8:], shortNonce(prefixReady, n), key)
	if !ok {
		return nil, 0, fmt.Errorf("%w: READY: %w", ErrHandshake, ErrCrypto)
	}
	return meta, n, nil
}

// curveServe runs the server's side of the handshake.
func curveServe(c net.Conn, enc *Encoder, dec *Decoder, cv *Curve, mine []byte, typ Type) ([]byte, *curveConn, error) {
	secret := [32]byte(cv.Secret)
	data, err := readCommand(dec, "HELLO")
	if err != nil {
		return nil, nil, err
	}
	cnPub, err := openHello(data, &secret)
	if err != nil {
		return nil, nil, err
	}
	// WELCOME: box[S' + cookie](S->C'); the cookie, box[C' + s'](K) under
	// a key K of this connection alone, comes back in INITIATE, so that
	// a replayed INITIATE, made for another connection, fails.
	snPub, snSec, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	var cookieKey [32]byte
	var cn, wn [16]byte
	for _, b := range [][]byte{cookieKey[:], cn[:], wn[:]} {
		if err := randomBytes(b); err != nil {
			return nil, nil, err
		}
	}
	cookie := secretbox.Seal(cn[:16:16], append(cnPub[:32:32], snSec[:]...), longNonce(prefixCookie, cn[:]), &cookieKey)
	welcome := box.Seal(wn[:16:16], append(snPub[:32:32], cookie...), longNonce(prefixWelcome, wn[:]), cnPub, &secret)
	if err := writeCommand(c, enc, "WELCOME", welcome); err != nil {
		return nil, nil, err
	}
	data, err = readCommand(dec, "INITIATE")
	if err != nil {
		return nil, nil, err
	}
	cc := newCurveConn(c, cnPub, snSec, prefixMsgS, prefixMsgC)
	client, meta, n, err := openInitiate(data, &cookieKey, cnPub, snSec, &cc.key, cv.Public)
	if err != nil {
		return nil, nil, err
	}
	if err := cv.admit(client, c.RemoteAddr()); err != nil {
		// ZAP's status code for a refused client.
		_ = writeCommand(c, enc, "ERROR", []byte{3}, []byte("400"))
		return nil, nil, err
	}
	peerType, _, err := parseProperties(meta)
	if err != nil {
		return nil, nil, err
	}
	if !typ.compatible(peerType) {
		const reason = "incompatible socket type"
		_ = writeCommand(c, enc, "ERROR", []byte{byte(len(reason))}, []byte(reason))
		return nil, nil, fmt.Errorf("%w: %v meets %s", ErrSocketType, typ, peerType)
	}
	ready := box.SealAfterPrecomputation(binary.BigEndian.AppendUint64(nil, 1), mine, shortNonce(prefixReady, 1), &cc.key)
	if err := writeCommand(c, enc, "READY", ready); err != nil {
		return nil, nil, err
	}
	cc.sendNonce, cc.recvNonce = 2, n
	cc.client = client
	return meta, cc, nil
}

// openHello checks a HELLO and returns the client's short-term key C'.
func openHello(data []byte, secret *[32]byte) (*[32]byte, error) {
	if len(data) != helloLen {
		return nil, fmt.Errorf("%w: HELLO of %d bytes", ErrHandshake, len(data))
	}
	if data[0] != 1 || data[1] != 0 {
		return nil, fmt.Errorf("%w: HELLO of CurveZMQ version %d.%d", ErrHandshake, data[0], data[1])
	}
	var cn [32]byte
	copy(cn[:], data[74:106])
	sig, ok := box.Open(nil, data[114:], shortNonce(prefixHello, binary.BigEndian.Uint64(data[106:])), &cn, secret)
	if !ok || !allZero(sig) {
		return nil, fmt.Errorf("%w: HELLO: %w", ErrHandshake, ErrCrypto)
	}
	return &cn, nil
}

func allZero(b []byte) bool {
	var x byte
	for _, v := range b {
		x |= v
	}
	return x == 0
}

// openInitiate checks an INITIATE: its cookie (ours, for this
// connection's C' and s'), its box (C'->S'), and the vouch inside
// (C->S', naming C' and our long-term key S). It returns the client's
// long-term key C, its metadata and the nonce it used.
func openInitiate(data []byte, cookieKey, cnPub, snSec, key *[32]byte, server CurveKey) (CurveKey, []byte, uint64, error) {
	var client CurveKey
	if len(data) < initiateMin {
		return client, nil, 0, fmt.Errorf("%w: INITIATE of %d bytes", ErrHandshake, len(data))
	}
	cookie, ok := secretbox.Open(nil, data[16:cookieLen], longNonce(prefixCookie, data[:16]), cookieKey)
	if !ok || subtle.ConstantTimeCompare(cookie[:32], cnPub[:]) != 1 || subtle.ConstantTimeCompare(cookie[32:], snSec[:]) != 1 {
		return client, nil, 0, fmt.Errorf("%w: INITIATE's cookie: %w", ErrHandshake, ErrCrypto)
	}
	n := binary.BigEndian.Uint64(data[cookieLen:])
	plain, ok := box.OpenAfterPrecomputation(nil, data[cookieLen+8:], shortNonce(prefixInitiate, n), key)
	if !ok {
		return client, nil, 0, fmt.Errorf("%w: INITIATE: %w", ErrHandshake, ErrCrypto)
	}
	copy(client[:], plain[:32])
	c := [32]byte(client)
	vouch, ok := box.Open(nil, plain[48:128], longNonce(prefixVouch, plain[32:48]), &c, snSec)
	if !ok || !bytes.Equal(vouch[:32], cnPub[:]) || !bytes.Equal(vouch[32:], server[:]) {
		return client, nil, 0, fmt.Errorf("%w: INITIATE's vouch: %w", ErrHandshake, ErrCrypto)
	}
	return client, plain[128:], n, nil
}

// A curveConn is a connection after CURVE's handshake: what the socket
// writes to it, ZMTP frames, leaves as MESSAGE commands, one per frame,
// boxed with the short-term keys; what it reads from it are the frames
// the peer's MESSAGEs carried, unboxed. A MESSAGE that fails its box's
// authentication, or whose nonce does not grow, fails the read with
// ErrCrypto (wrapped with ErrProtocol): nothing of it is delivered.
//
// Writes are serialized by its own lock (the peer's writers already
// hold the peer's); one goroutine at a time reads (the read side's
// owner, handover.go).
type curveConn struct {
	net.Conn
	key    [32]byte // precomputed from the peer's short-term public key and our short-term secret
	client CurveKey // on a server: the client's long-term key
	sendPx string   // nonce prefix of our MESSAGEs
	recvPx string   // and of the peer's

	wmu       sync.Mutex
	sendNonce uint64
	pend      []byte // a frame written in part, waiting for the rest
	out       []byte // the MESSAGEs of one Write
	pt        []byte // one frame's plaintext
	werr      error
	wnonce    [24]byte // scratch of the write side

	recvNonce uint64
	maxFrame  int
	raw       []byte // bytes read, not yet unboxed: raw[rpos:]
	rpos      int
	plain     []byte // frames unboxed, not yet read: plain[ppos:]
	ppos      int
	rerr      error    // a failure of the stream, returned by every later Read
	rnonce    [24]byte // scratch of the read side
}

func newCurveConn(c net.Conn, peerPub, ourSec *[32]byte, sendPx, recvPx string) *curveConn {
	cc := &curveConn{Conn: c, sendPx: sendPx, recvPx: recvPx}
	box.Precompute(&cc.key, peerPub, ourSec)
	return cc
}

// Write boxes each whole ZMTP frame of b into a MESSAGE and writes them
// with one write; a frame b ends within waits for the next Write.
func (c *curveConn) Write(b []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.werr != nil {
		return 0, c.werr
	}
	src := b
	if len(c.pend) > 0 {
		c.pend = append(c.pend, b...)
		src = c.pend
	}
	c.out = c.out[:0]
	used := c.seal(src)
	rest := src[used:]
	if len(c.pend) > 0 {
		c.pend = c.pend[:copy(c.pend, rest)]
	} else {
		c.pend = append(c.pend[:0], rest...)
	}
	if len(c.out) > 0 {
		if _, err := c.Conn.Write(c.out); err != nil {
			c.werr = err
			return 0, err
		}
	}
	return len(b), nil
}

// seal boxes the whole frames at the start of src into c.out and returns
// the bytes they took. The frames are this package's own encoding.
func (c *curveConn) seal(src []byte) int {
	used := 0
	for {
		f := src[used:]
		if len(f) < shortHeader {
			return used
		}
		hdr, size := shortHeader, uint64(f[1])
		if f[0]&FlagLong != 0 {
			if len(f) < longHeader {
				return used
			}
			hdr, size = longHeader, binary.BigEndian.Uint64(f[1:])
		}
		if uint64(len(f)-hdr) < size {
			return used
		}
		body := f[hdr : hdr+int(size)]
		var inner byte
		if f[0]&FlagMore != 0 {
			inner |= innerMore
		}
		if f[0]&FlagCommand != 0 {
			inner |= innerCommand
		}
		c.pt = append(append(c.pt[:0], inner), body...)
		n := msgOverhead + len(body)
		if n > maxShort {
			c.out = append(c.out, FlagLong)
			c.out = binary.BigEndian.AppendUint64(c.out, uint64(n))
		} else {
			c.out = append(c.out, 0, byte(n))
		}
		c.out = append(c.out, cmdMessage...)
		c.out = binary.BigEndian.AppendUint64(c.out, c.sendNonce)
		copy(c.wnonce[:], c.sendPx)
		binary.BigEndian.PutUint64(c.wnonce[16:], c.sendNonce)
		c.sendNonce++
		c.out = box.SealAfterPrecomputation(c.out, c.pt, &c.wnonce, &c.key)
		used += hdr + int(size)
	}
}

// Read returns the frames of the peer's MESSAGEs, unboxed, as ZMTP
// frames. A read that fails with a timeout (a heartbeat's, or the
// read side's hand-over's interrupt) leaves the state as it was, so the
// next Read goes on from there.
func (c *curveConn) Read(p []byte) (int, error) {
	for {
		if c.ppos < len(c.plain) {
			n := copy(p, c.plain[c.ppos:])
			c.ppos += n
			return n, nil
		}
		ok, err := c.unbox()
		if err != nil {
			c.rerr = err
			return 0, err
		}
		if ok {
			continue
		}
		if c.rerr != nil {
			return 0, c.rerr
		}
		if c.rpos > 0 && (len(c.raw) == cap(c.raw) || c.rpos >= len(c.raw)/2) {
			c.raw = c.raw[:copy(c.raw, c.raw[c.rpos:])]
			c.rpos = 0
		}
		if cap(c.raw)-len(c.raw) < readChunk/4 {
			c.raw = slices.Grow(c.raw, readChunk)
		}
		n, err := c.Conn.Read(c.raw[len(c.raw):cap(c.raw)])
		c.raw = c.raw[:len(c.raw)+n]
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if n > 0 {
					continue
				}
				return 0, err
			}
			if errors.Is(err, io.EOF) && c.rpos < len(c.raw) {
				err = fmt.Errorf("zmtp: stream ended within a CURVE MESSAGE: %w", io.ErrUnexpectedEOF)
			}
			c.rerr = err
			if n > 0 {
				continue
			}
			return 0, err
		}
	}
}

// unbox decodes the next MESSAGE in raw into plain, when it is there
// whole (true).
func (c *curveConn) unbox() (bool, error) {
	f := c.raw[c.rpos:]
	if len(f) < shortHeader {
		return false, nil
	}
	if f[0]&(flagReserved|FlagMore) != 0 {
		return false, fmt.Errorf("%w: flags %#02x on a CURVE MESSAGE", ErrProtocol, f[0])
	}
	hdr, size := shortHeader, uint64(f[1])
	if f[0]&FlagLong != 0 {
		if len(f) < longHeader {
			return false, nil
		}
		hdr, size = longHeader, binary.BigEndian.Uint64(f[1:])
	}
	if size > uint64(c.maxFrame) {
		return false, fmt.Errorf("%w: CURVE MESSAGE of %d bytes announced", ErrTooLarge, size)
	}
	if uint64(len(f)-hdr) < size {
		// Room for the whole frame, from its size field alone: bounded
		// by maxFrame.
		need := c.rpos + hdr + int(size)
		if need > cap(c.raw) {
			c.raw = slices.Grow(c.raw[:len(c.raw):len(c.raw)], need-len(c.raw))
		}
		return false, nil
	}
	body := f[hdr : hdr+int(size)]
	c.rpos += hdr + int(size)
	plain, start, err := c.open(body, c.plain[:0])
	if err != nil {
		return false, err
	}
	c.plain, c.ppos = plain, start
	return true, nil
}

// open unboxes one MESSAGE's body into a ZMTP frame. It appends to dst
// longHeader bytes of room and the plaintext (the inner flags, then the
// frame's body), writes the frame's header over the room's end and the
// inner flags, right in front of the body, and returns the buffer and
// where the frame starts in it.
func (c *curveConn) open(body, dst []byte) ([]byte, int, error) {
	if len(body) < msgOverhead || string(body[:len(cmdMessage)]) != cmdMessage {
		return nil, 0, fmt.Errorf("%w: %w: not a MESSAGE of %d bytes", ErrProtocol, ErrCrypto, len(body))
	}
	n := binary.BigEndian.Uint64(body[len(cmdMessage):])
	if n <= c.recvNonce {
		return nil, 0, fmt.Errorf("%w: %w: MESSAGE nonce %d after %d", ErrProtocol, ErrCrypto, n, c.recvNonce)
	}
	copy(c.rnonce[:], c.recvPx)
	binary.BigEndian.PutUint64(c.rnonce[16:], n)
	dst = append(dst[:0], make([]byte, longHeader)...)
	out, ok := box.OpenAfterPrecomputation(dst, body[len(cmdMessage)+8:], &c.rnonce, &c.key)
	if !ok {
		return nil, 0, fmt.Errorf("%w: %w: MESSAGE fails authentication", ErrProtocol, ErrCrypto)
	}
	c.recvNonce = n
	inner := out[longHeader]
	var flags byte
	if inner&innerMore != 0 {
		flags |= FlagMore
	}
	if inner&innerCommand != 0 {
		flags |= FlagCommand
	}
	size := len(out) - longHeader - 1
	if size > maxShort {
		out[1] = flags | FlagLong
		binary.BigEndian.PutUint64(out[2:], uint64(size))
		return out, 1, nil
	}
	out[longHeader-1], out[longHeader] = flags, byte(size)
	return out, longHeader - 1, nil
}

// shakeCurve is shake for a socket with CURVE: the greetings, CURVE's
// handshake, then the peer reads and writes through a curveConn, which
// takes c's place among the socket's connections.
func (s *Socket) shakeCurve(c net.Conn) (*peer, error) {
	cv := s.opt.Curve
	g := curveGreeting(cv.Server)
	if _, err := c.Write(g[:]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGreeting, err)
	}
	minor, err := readGreetingOf(c, mechanismCURVE)
	if err != nil {
		return nil, err
	}
	meta, cc, err := s.curveHandshake(c)
	if err != nil {
		return nil, err
	}
	typ, id, err := parseProperties(meta)
	if err != nil {
		return nil, err
	}
	if !s.typ.compatible(typ) {
		return nil, fmt.Errorf("%w: %v meets %s", ErrSocketType, s.typ, typ)
	}
	if !s.retrack(c, cc) {
		return nil, ErrClosed
	}
	p := &peer{s: s, c: cc, minor: minor, enc: NewEncoder(0), wake: make(chan struct{}, 1), done: make(chan struct{}),
		rtoken: make(chan struct{}, 1)}
	p.dec = NewDecoder(&p.rd, s.opt.MaxMessageSize, s.opt.MaxParts)
	p.rd.c = cc
	if cv.Server {
		s.st.authorized.Add(1)
		s.log.Info("curve client admitted", "remote", c.RemoteAddr().String(), "key", cc.client.Z85())
	}
	return s.ready(p, typ, id)
}

// retrack puts cc in c's place among the connections Close closes.
func (s *Socket) retrack(c net.Conn, cc *curveConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	delete(s.conns, c)
	s.conns[cc] = struct{}{}
	return true
}
