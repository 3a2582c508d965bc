// Package zmtpcurve is CURVE (CurveZMQ, rfc.zeromq.org spec 26, the CURVE
// mechanism of ZMTP 3.1) for package zmtp's connections: the handshake
// and the connection that boxes and unboxes frames after it
// (docs/zmtp.md, "CURVE: encryption and authentication"). Package zmtp
// holds the keys and the configuration users give; this package takes
// them as 32-byte arrays.
package zmtpcurve

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

	"golang.org/x/crypto/nacl/box"
	"golang.org/x/crypto/nacl/secretbox"

	"github.com/dutyrt/duty/internal/zmtpwire"
)

// CURVE (CurveZMQ, rfc.zeromq.org spec 26, the CURVE mechanism of ZMTP
// 3.1) encrypts and authenticates a connection with Curve25519 keys:
// each side has a long-term key pair, and each connection a short-term
// pair made for it. The handshake (HELLO, WELCOME, INITIATE, READY)
// proves that the server holds the secret of the public key the client
// knows, and that the client holds the secret of the public key it
// presents, which the server then admits or refuses (Config.Admit). After it, every frame travels in a MESSAGE command
// boxed with the short-term keys (docs/zmtp.md, "CURVE").

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
		return fmt.Errorf("%w: random: %w", zmtpwire.ErrHandshake, err)
	}
	return nil
}

// ErrCrypto reports CURVE bytes that fail: a box that does not open or a
// MESSAGE nonce that does not grow. Package zmtp exports it too.
var ErrCrypto = errors.New("zmtp: CURVE authentication failed")

// Config is one side's part in CURVE's handshake.
type Config struct {
	// Public and Secret are this side's long-term key pair.
	Public, Secret [32]byte
	// Server makes this side the CURVE server.
	Server bool
	// ServerKey is the server's long-term public key, on a client.
	ServerKey [32]byte
	// Metadata is the data of this side's READY: its properties.
	Metadata []byte
	// MaxMessageSize bounds the messages the connection carries: a
	// MESSAGE beyond it, with its box's overhead, is refused from its size
	// field (zmtpwire.ErrTooLarge).
	MaxMessageSize int
	// Admit, on a server, decides for the client's long-term key: nil
	// admits; an error refuses the client (ERROR 400 sent) and is
	// returned as it is.
	Admit func(client [32]byte) error
	// Accept, on a server, checks the client's metadata before READY: an
	// error refuses the client and is returned as it is, after an ERROR
	// with reason when reason is not empty.
	Accept func(meta []byte) (reason string, err error)
}

// Handshake runs CURVE's handshake on c after the greetings: HELLO,
// WELCOME, INITIATE, READY, with cfg's metadata, and returns the peer's
// metadata and the connection that boxes and unboxes frames from then on.
// Its failures wrap zmtpwire.ErrHandshake (with ErrCrypto for a box that does not
// open), or are Admit's and Accept's errors.
func Handshake(c net.Conn, cfg *Config) (meta []byte, cc *Conn, err error) {
	enc := zmtpwire.NewEncoder(0)
	dec := zmtpwire.NewDecoder(c, maxHandshakeCmd, 1)
	if cfg.Server {
		meta, cc, err = serve(c, enc, dec, cfg)
	} else {
		meta, cc, err = client(c, enc, dec, cfg)
	}
	if err != nil {
		return nil, nil, err
	}
	cc.maxFrame = cfg.MaxMessageSize + msgOverhead
	// What the handshake's decoder read beyond its last command is the
	// peer's first MESSAGEs.
	cc.raw = append(cc.raw[:0], dec.Buffered()...)
	return meta, cc, nil
}

func writeCommand(c net.Conn, enc *zmtpwire.Encoder, name string, data ...[]byte) error {
	enc.Command(name, data...)
	if _, err := enc.WriteTo(c); err != nil {
		return fmt.Errorf("%w: %w", zmtpwire.ErrHandshake, err)
	}
	return nil
}

// client runs the client's side of the handshake.
func client(c net.Conn, enc *zmtpwire.Encoder, dec *zmtpwire.Decoder, cv *Config) ([]byte, *Conn, error) {
	cnPub, cnSec, err := box.GenerateKey(rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", zmtpwire.ErrHandshake, err)
	}
	server, secret := cv.ServerKey, cv.Secret
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
	data, err := zmtpwire.ReadCommand(dec, "WELCOME")
	if err != nil {
		return nil, nil, err
	}
	snPub, cookie, err := openWelcome(data, &server, cnSec)
	if err != nil {
		return nil, nil, err
	}
	cc := newConn(c, snPub, cnSec, prefixMsgC, prefixMsgS)
	// INITIATE: cookie, nonce 2, box[C + vouch + metadata](C'->S'), the
	// vouch box[C' + S](C->S') proving that we hold C's secret.
	var vn [16]byte
	if err := randomBytes(vn[:]); err != nil {
		return nil, nil, err
	}
	vouch := box.Seal(nil, append(cnPub[:32:32], server[:]...), longNonce(prefixVouch, vn[:]), snPub, &secret)
	plain := slices.Concat(cv.Public[:], vn[:], vouch, cv.Metadata)
	initiate := slices.Concat(cookie, binary.BigEndian.AppendUint64(nil, 2))
	initiate = box.SealAfterPrecomputation(initiate, plain, shortNonce(prefixInitiate, 2), &cc.key)
	if err := writeCommand(c, enc, "INITIATE", initiate); err != nil {
		return nil, nil, err
	}
	data, err = zmtpwire.ReadCommand(dec, "READY")
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
		return nil, nil, fmt.Errorf("%w: WELCOME of %d bytes", zmtpwire.ErrHandshake, len(data))
	}
	plain, ok := box.Open(nil, data[16:], longNonce(prefixWelcome, data[:16]), server, cnSec)
	if !ok {
		return nil, nil, fmt.Errorf("%w: WELCOME: %w", zmtpwire.ErrHandshake, ErrCrypto)
	}
	var sn [32]byte
	copy(sn[:], plain)
	return &sn, plain[32:], nil
}

// openReady opens a READY's box (S'->C') and returns the server's
// metadata and the nonce it used.
func openReady(data []byte, key *[32]byte) ([]byte, uint64, error) {
	if len(data) < readyMin {
		return nil, 0, fmt.Errorf("%w: READY of %d bytes", zmtpwire.ErrHandshake, len(data))
	}
	n := binary.BigEndian.Uint64(data)
	meta, ok := box.OpenAfterPrecomputation(nil, data[8:], shortNonce(prefixReady, n), key)
	if !ok {
		return nil, 0, fmt.Errorf("%w: READY: %w", zmtpwire.ErrHandshake, ErrCrypto)
	}
	return meta, n, nil
}

// serve runs the server's side of the handshake.
func serve(c net.Conn, enc *zmtpwire.Encoder, dec *zmtpwire.Decoder, cv *Config) ([]byte, *Conn, error) {
	secret := cv.Secret
	data, err := zmtpwire.ReadCommand(dec, "HELLO")
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
		return nil, nil, fmt.Errorf("%w: %w", zmtpwire.ErrHandshake, err)
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
	data, err = zmtpwire.ReadCommand(dec, "INITIATE")
	if err != nil {
		return nil, nil, err
	}
	cc := newConn(c, cnPub, snSec, prefixMsgS, prefixMsgC)
	client, meta, n, err := openInitiate(data, &cookieKey, cnPub, snSec, &cc.key, cv.Public)
	if err != nil {
		return nil, nil, err
	}
	if err := cv.Admit(client); err != nil {
		// ZAP's status code for a refused client.
		_ = writeCommand(c, enc, "ERROR", []byte{3}, []byte("400"))
		return nil, nil, err
	}
	if reason, err := cv.Accept(meta); err != nil {
		if reason != "" {
			_ = writeCommand(c, enc, "ERROR", []byte{byte(len(reason))}, []byte(reason))
		}
		return nil, nil, err
	}
	ready := box.SealAfterPrecomputation(binary.BigEndian.AppendUint64(nil, 1), cv.Metadata, shortNonce(prefixReady, 1), &cc.key)
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
		return nil, fmt.Errorf("%w: HELLO of %d bytes", zmtpwire.ErrHandshake, len(data))
	}
	if data[0] != 1 || data[1] != 0 {
		return nil, fmt.Errorf("%w: HELLO of CurveZMQ version %d.%d", zmtpwire.ErrHandshake, data[0], data[1])
	}
	var cn [32]byte
	copy(cn[:], data[74:106])
	sig, ok := box.Open(nil, data[114:], shortNonce(prefixHello, binary.BigEndian.Uint64(data[106:])), &cn, secret)
	if !ok || !allZero(sig) {
		return nil, fmt.Errorf("%w: HELLO: %w", zmtpwire.ErrHandshake, ErrCrypto)
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
func openInitiate(data []byte, cookieKey, cnPub, snSec, key *[32]byte, server [32]byte) ([32]byte, []byte, uint64, error) {
	var client [32]byte
	if len(data) < initiateMin {
		return client, nil, 0, fmt.Errorf("%w: INITIATE of %d bytes", zmtpwire.ErrHandshake, len(data))
	}
	cookie, ok := secretbox.Open(nil, data[16:cookieLen], longNonce(prefixCookie, data[:16]), cookieKey)
	if !ok || subtle.ConstantTimeCompare(cookie[:32], cnPub[:]) != 1 || subtle.ConstantTimeCompare(cookie[32:], snSec[:]) != 1 {
		return client, nil, 0, fmt.Errorf("%w: INITIATE's cookie: %w", zmtpwire.ErrHandshake, ErrCrypto)
	}
	n := binary.BigEndian.Uint64(data[cookieLen:])
	plain, ok := box.OpenAfterPrecomputation(nil, data[cookieLen+8:], shortNonce(prefixInitiate, n), key)
	if !ok {
		return client, nil, 0, fmt.Errorf("%w: INITIATE: %w", zmtpwire.ErrHandshake, ErrCrypto)
	}
	copy(client[:], plain[:32])
	vouch, ok := box.Open(nil, plain[48:128], longNonce(prefixVouch, plain[32:48]), &client, snSec)
	if !ok || !bytes.Equal(vouch[:32], cnPub[:]) || !bytes.Equal(vouch[32:], server[:]) {
		return client, nil, 0, fmt.Errorf("%w: INITIATE's vouch: %w", zmtpwire.ErrHandshake, ErrCrypto)
	}
	return client, plain[128:], n, nil
}

// A Conn is a connection after CURVE's handshake: what the socket
// writes to it, ZMTP frames, leaves as MESSAGE commands, one per frame,
// boxed with the short-term keys; what it reads from it are the frames
// the peer's MESSAGEs carried, unboxed. A MESSAGE that fails its box's
// authentication, or whose nonce does not grow, fails the read with
// ErrCrypto (wrapped with zmtpwire.ErrProtocol): nothing of it is delivered.
//
// Writes are serialized by its own lock (the peer's writers already
// hold the peer's); one goroutine at a time reads (the read side's
// owner, zmtp/handover.go).
type Conn struct {
	net.Conn
	key    [32]byte // precomputed from the peer's short-term public key and our short-term secret
	client [32]byte // on a server: the client's long-term key
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

func newConn(c net.Conn, peerPub, ourSec *[32]byte, sendPx, recvPx string) *Conn {
	cc := &Conn{Conn: c, sendPx: sendPx, recvPx: recvPx}
	box.Precompute(&cc.key, peerPub, ourSec)
	return cc
}

// Write boxes each whole ZMTP frame of b into a MESSAGE and writes them
// with one write; a frame b ends within waits for the next Write.
func (c *Conn) Write(b []byte) (int, error) {
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
func (c *Conn) seal(src []byte) int {
	used := 0
	for {
		f := src[used:]
		if len(f) < zmtpwire.ShortHeader {
			return used
		}
		hdr, size := zmtpwire.ShortHeader, uint64(f[1])
		if f[0]&zmtpwire.FlagLong != 0 {
			if len(f) < zmtpwire.LongHeader {
				return used
			}
			hdr, size = zmtpwire.LongHeader, binary.BigEndian.Uint64(f[1:])
		}
		if uint64(len(f)-hdr) < size {
			return used
		}
		body := f[hdr : hdr+int(size)]
		var inner byte
		if f[0]&zmtpwire.FlagMore != 0 {
			inner |= innerMore
		}
		if f[0]&zmtpwire.FlagCommand != 0 {
			inner |= innerCommand
		}
		c.pt = append(append(c.pt[:0], inner), body...)
		n := msgOverhead + len(body)
		if n > zmtpwire.MaxShort {
			c.out = append(c.out, zmtpwire.FlagLong)
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
func (c *Conn) Read(p []byte) (int, error) {
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
		if cap(c.raw)-len(c.raw) < zmtpwire.ReadChunk/4 {
			c.raw = slices.Grow(c.raw, zmtpwire.ReadChunk)
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
func (c *Conn) unbox() (bool, error) {
	f := c.raw[c.rpos:]
	if len(f) < zmtpwire.ShortHeader {
		return false, nil
	}
	if f[0]&(zmtpwire.FlagReserved|zmtpwire.FlagMore) != 0 {
		return false, fmt.Errorf("%w: flags %#02x on a CURVE MESSAGE", zmtpwire.ErrProtocol, f[0])
	}
	hdr, size := zmtpwire.ShortHeader, uint64(f[1])
	if f[0]&zmtpwire.FlagLong != 0 {
		if len(f) < zmtpwire.LongHeader {
			return false, nil
		}
		hdr, size = zmtpwire.LongHeader, binary.BigEndian.Uint64(f[1:])
	}
	if size > uint64(c.maxFrame) {
		return false, fmt.Errorf("%w: CURVE MESSAGE of %d bytes announced", zmtpwire.ErrTooLarge, size)
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
// zmtpwire.LongHeader bytes of room and the plaintext (the inner flags, then the
// frame's body), writes the frame's header over the room's end and the
// inner flags, right in front of the body, and returns the buffer and
// where the frame starts in it.
func (c *Conn) open(body, dst []byte) ([]byte, int, error) {
	if len(body) < msgOverhead || string(body[:len(cmdMessage)]) != cmdMessage {
		return nil, 0, fmt.Errorf("%w: %w: not a MESSAGE of %d bytes", zmtpwire.ErrProtocol, ErrCrypto, len(body))
	}
	n := binary.BigEndian.Uint64(body[len(cmdMessage):])
	if n <= c.recvNonce {
		return nil, 0, fmt.Errorf("%w: %w: MESSAGE nonce %d after %d", zmtpwire.ErrProtocol, ErrCrypto, n, c.recvNonce)
	}
	copy(c.rnonce[:], c.recvPx)
	binary.BigEndian.PutUint64(c.rnonce[16:], n)
	dst = append(dst[:0], make([]byte, zmtpwire.LongHeader)...)
	out, ok := box.OpenAfterPrecomputation(dst, body[len(cmdMessage)+8:], &c.rnonce, &c.key)
	if !ok {
		return nil, 0, fmt.Errorf("%w: %w: MESSAGE fails authentication", zmtpwire.ErrProtocol, ErrCrypto)
	}
	c.recvNonce = n
	inner := out[zmtpwire.LongHeader]
	var flags byte
	if inner&innerMore != 0 {
		flags |= zmtpwire.FlagMore
	}
	if inner&innerCommand != 0 {
		flags |= zmtpwire.FlagCommand
	}
	size := len(out) - zmtpwire.LongHeader - 1
	if size > zmtpwire.MaxShort {
		out[1] = flags | zmtpwire.FlagLong
		binary.BigEndian.PutUint64(out[2:], uint64(size))
		return out, 1, nil
	}
	out[zmtpwire.LongHeader-1], out[zmtpwire.LongHeader] = flags, byte(size)
	return out, zmtpwire.LongHeader - 1, nil
}

// Client returns, on a server, the client's long-term public key.
func (c *Conn) Client() [32]byte { return c.client }
