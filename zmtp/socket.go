package zmtp

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/dutyrt/duty/internal/zmtpqueue"
	"github.com/dutyrt/duty/internal/zmtpwire"
)

// Type is a ZeroMQ socket type.
type Type uint8

// The socket types this package offers.
const (
	Push   Type = iota + 1 // sends, load-balanced over its peers
	Pull                   // receives from all its peers, in arrival order
	Pub                    // sends to every subscribed peer
	Sub                    // receives what it subscribed to
	Dealer                 // sends load-balanced over its peers, receives from all
	Router                 // receives with the peer's routing id in front, sends to the peer it names
	Req                    // sends a request to one peer, then receives its reply, in turn
	Rep                    // receives a request, then sends the reply to its sender, in turn
	Pair                   // one peer: sends to it, receives from it
)

func (t Type) String() string {
	switch t {
	case Push:
		return "PUSH"
	case Pull:
		return "PULL"
	case Pub:
		return "PUB"
	case Sub:
		return "SUB"
	case Dealer:
		return "DEALER"
	case Router:
		return "ROUTER"
	case Req:
		return "REQ"
	case Rep:
		return "REP"
	case Pair:
		return "PAIR"
	}
	return fmt.Sprintf("Type(%d)", uint8(t))
}

// compatible reports whether a socket of type t talks to a peer that
// announced socket type peer (the specification's table, for the types
// offered here; XPUB and XSUB peers are the raw forms of PUB and SUB).
func (t Type) compatible(peer string) bool {
	switch t {
	case Push:
		return peer == "PULL"
	case Pull:
		return peer == "PUSH"
	case Pub:
		return peer == "SUB" || peer == "XSUB"
	case Sub:
		return peer == "PUB" || peer == "XPUB"
	case Dealer:
		return peer == "DEALER" || peer == "ROUTER" || peer == "REP"
	case Router:
		return peer == "DEALER" || peer == "ROUTER" || peer == "REQ"
	case Req:
		return peer == "REP" || peer == "ROUTER"
	case Rep:
		return peer == "REQ" || peer == "DEALER"
	case Pair:
		return peer == "PAIR"
	}
	return false
}

func (t Type) sends() bool    { return t != Pull && t != Sub }
func (t Type) receives() bool { return t != Push && t != Pub }

// shared reports whether the socket's peers take their messages from one
// send queue (load balancing) rather than each from its own.
func (t Type) shared() bool { return t == Push || t == Dealer || t == Pair }

// routed reports whether the socket tells its peers apart by a routing
// id: received messages carry it in front, sent ones go to the peer it
// names (REQ and REP do so inside, to answer the right peer).
func (t Type) routed() bool { return t == Router || t == Req || t == Rep }

// strict reports a socket whose sends and receives alternate (REQ, REP).
func (t Type) strict() bool { return t == Req || t == Rep }

// Defaults of Options.
const (
	DefaultHWM              = 1000
	DefaultHandshakeTimeout = 5 * time.Second
	DefaultReconnectMin     = 100 * time.Millisecond
	DefaultReconnectMax     = 5 * time.Second
	// DefaultLinger is how long Close waits for queued messages to be
	// written when Options.Linger is zero.
	DefaultLinger = 2 * time.Second
	// NoLinger, as Options.Linger, makes Close discard queued messages at
	// once (libzmq's ZMQ_LINGER 0).
	NoLinger time.Duration = -1
	// writeBatch bounds the messages a feeder's DoWork sends.
	writeBatch = 256
	// readBatch bounds the messages a reader queues for Recv at once.
	readBatch = 256
)

// Bounds of Options: DefaultMaxMessageSize bounds a received message's
// body bytes (all parts) unless Options.MaxMessageSize says otherwise,
// DefaultMaxParts its frames unless Options.MaxParts does; MaxHWM is the
// largest Options.HWM (a larger one is MaxHWM): a send queue's ring takes
// 64 bytes, and its commit slots 16 bytes, per message of the high-water
// mark.
const (
	DefaultMaxMessageSize = zmtpwire.DefaultMaxMessageSize
	DefaultMaxParts       = zmtpwire.DefaultMaxParts
	MaxHWM                = zmtpqueue.MaxHWM
)

// Options configure a Socket. The zero value is usable.
type Options struct {
	// HWM bounds the messages queued: on a PUSH or DEALER socket in all
	// (Send returns ErrHWM beyond it), on a PUB or ROUTER socket per peer
	// (a peer that falls behind loses messages, counted in
	// Stats.Dropped), on PULL, SUB, DEALER and ROUTER sockets the
	// messages received and not yet taken by Recv (the readers stop
	// reading beyond it). Default DefaultHWM; at most MaxHWM (a larger
	// value is MaxHWM). A send queue allocates its ring and commit slots
	// when it is made: 80 bytes per message of HWM, each rounded up to a
	// power of two, 64 KiB at least. The receive queue's buffers keep the
	// largest batch they carried.
	HWM int
	// MaxMessageSize bounds a received message's body bytes (all parts);
	// a peer sending more is disconnected. Default DefaultMaxMessageSize.
	MaxMessageSize int
	// MaxParts bounds a received message's parts. Default DefaultMaxParts.
	MaxParts int
	// Identity is sent in READY's Identity property.
	Identity []byte
	// Heartbeat, when positive, makes the socket send a PING to each
	// peer every Heartbeat, and disconnect a peer from which nothing
	// arrived for HeartbeatTimeout (default 3 * Heartbeat). Heartbeats
	// apply to ZMTP 3.1 peers: 3.0 has no PING, so a 3.0 peer gets none
	// and is not timed out.
	Heartbeat        time.Duration
	HeartbeatTimeout time.Duration
	// HandshakeTimeout bounds the greeting and READY exchange of a new
	// connection. Default DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// ReconnectMin and ReconnectMax bound the back-off between attempts of
	// a connecting socket: it starts at ReconnectMin and doubles up to
	// ReconnectMax, and starts over after a successful handshake.
	ReconnectMin, ReconnectMax time.Duration
	// Logger receives connection events (Debug) and peer failures (Warn).
	// Default slog.Default().
	Logger *slog.Logger
	// Linger bounds how long Close waits for the messages still queued
	// (a PUSH or DEALER socket's queue, a PUB or ROUTER socket's queues of
	// its peers) to be written, while the socket keeps connecting, as
	// libzmq's ZMQ_LINGER does; what is still queued after it is
	// discarded and counted (Stats.Unsent, and Close's error). Default
	// DefaultLinger; negative (NoLinger): no wait. CloseContext waits
	// until its context ends instead.
	Linger time.Duration
	// Curve, when set, makes every connection of the socket use CURVE
	// (encryption, and the server's decision on client keys); peers
	// speaking NULL are refused. Nil: NULL, no security.
	Curve *Curve
}

func (o *Options) fill() {
	if o.HWM <= 0 {
		o.HWM = DefaultHWM
	}
	o.HWM = min(o.HWM, MaxHWM)
	if o.MaxMessageSize <= 0 {
		o.MaxMessageSize = DefaultMaxMessageSize
	}
	if o.MaxParts <= 0 {
		o.MaxParts = DefaultMaxParts
	}
	if o.Heartbeat > 0 && o.HeartbeatTimeout <= 0 {
		o.HeartbeatTimeout = 3 * o.Heartbeat
	}
	if o.HandshakeTimeout <= 0 {
		o.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if o.ReconnectMin <= 0 {
		o.ReconnectMin = DefaultReconnectMin
	}
	if o.ReconnectMax < o.ReconnectMin {
		o.ReconnectMax = max(DefaultReconnectMax, o.ReconnectMin)
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Linger == 0 {
		o.Linger = DefaultLinger
	}
}

// Stats counts a socket's traffic and its peers' fates.
type Stats struct {
	Peers        int    // peers connected now (handshake done)
	Handshakes   uint64 // handshakes completed
	Rejected     uint64 // connections refused in the greeting or handshake
	PeerErrors   uint64 // peers disconnected for a protocol violation, an oversized message or a heartbeat timeout
	Disconnects  uint64 // peers gone, for any reason (PeerErrors included)
	Sent         uint64 // messages written to a connection
	Received     uint64 // messages received and handed over (to Recv's queue or a mailbox), counted just after
	Dropped      uint64 // messages a PUB did not queue for a full subscriber; a bridge could not deliver
	Lost         uint64 // messages taken by a writer whose connection failed, or queued for a peer that left
	Unsent       uint64 // messages still queued when Close's linger ended, discarded
	Unsubscribed uint64 // messages a SUB received outside its subscriptions
	Torn         uint64 // connections that ended within a message (its part discarded)
	Authorized   uint64 // CURVE server: clients admitted by their key
	AuthRefused  uint64 // CURVE server: clients refused for their key (also in Rejected)
}

type stats struct {
	sent     atomic.Uint64 // writers
	_        [56]byte
	received atomic.Uint64 // readers
	_        [56]byte

	handshakes, rejected, peerErrors, disconnects atomic.Uint64
	dropped, lost, unsubscribed, peers, torn      atomic.Uint64
	unsent                                        atomic.Uint64
	authorized, authRefused                       atomic.Uint64
	inline                                        atomic.Uint64 // messages SendContext wrote itself (tests)
	byRef                                         atomic.Uint64 // of them, large messages written by reference (tests)
}

// A sink takes the messages a receiving socket's readers decode. deliver
// may wait (that is back-pressure: the reader stops reading) until ctx
// ends; it copies what it keeps.
type sink interface {
	deliver(ctx context.Context, parts [][]byte) (delivered bool, err error)
}

// A Socket is a ZeroMQ socket of one Type: it binds and connects to any
// number of endpoints, and runs the network I/O of each connection on two
// goroutines of its own (a reader and a writer). See the package
// documentation for the contract.
type Socket struct {
	typ    Type
	opt    Options
	log    *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu        sync.Mutex
	closed    bool          // the linger is over: no new connection
	closing   atomic.Bool   // Close began: no new message; set before the context ends
	stopping  chan struct{} // closed when Close begins: waiting calls return
	listeners []net.Listener
	conns     map[net.Conn]struct{}
	peers     []*peer // copy-on-write: Send reads it without the lock
	peersV    atomic.Pointer[[]*peer]
	subs      subscriptions // Sub: this socket's subscriptions
	nextRoute uint32        // Router, Req, Rep: the last routing id generated
	rr        reqRep        // Req, Rep: the state of the alternation

	nextInline atomic.Uint32 // the peer of the next inline write (SendContext)

	out     *zmtpqueue.Out // Push: the messages to send, taken by any peer's writer
	in      *zmtpqueue.In  // Pull, Sub: received messages for Recv
	sink    sink           // DeliverTo: a mailbox instead of in
	bridged bool           // DeliverTo replaced the queue for Recv
	started bool           // Bind or Connect was called

	// The receiver's cache and the counters that readers and writers
	// update sit on cache lines of their own, so that the goroutines of
	// one message's path do not take each other's lines.
	_  [64]byte
	rc recvCache
	ho handover
	_  [64]byte
	st stats
}

// NewSocket returns a socket of type t.
func NewSocket(t Type, opt Options) (*Socket, error) {
	if t < Push || t > Pair {
		return nil, fmt.Errorf("%w: %v", ErrSocketKind, t)
	}
	opt.fill()
	if opt.Curve != nil {
		if err := opt.Curve.check(); err != nil {
			return nil, err
		}
		cv := *opt.Curve
		cv.Allow = slices.Clone(cv.Allow)
		opt.Curve = &cv
	}
	s := &Socket{typ: t, opt: opt, log: opt.Logger.With("zmtp", t.String()), conns: map[net.Conn]struct{}{},
		stopping: make(chan struct{})}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	empty := []*peer{}
	s.peersV.Store(&empty)
	if t.shared() {
		s.out = zmtpqueue.NewOut(opt.HWM)
	}
	if t.receives() {
		s.in = zmtpqueue.NewIn(opt.HWM)
	}
	return s, nil
}

// Type returns the socket's type.
func (s *Socket) Type() Type { return s.typ }

// parseEndpoint maps tcp://host:port and ipc:///path to a network and an
// address.
func parseEndpoint(ep string) (network, addr string, err error) {
	switch {
	case strings.HasPrefix(ep, "tcp://") && len(ep) > len("tcp://"):
		return "tcp", ep[len("tcp://"):], nil
	case strings.HasPrefix(ep, "ipc://") && len(ep) > len("ipc://"):
		return "unix", ep[len("ipc://"):], nil
	}
	return "", "", fmt.Errorf("%w: %q", ErrEndpoint, ep)
}

// Bind listens on endpoint (tcp://host:port, port 0 for any; ipc:///path,
// replacing a socket file nobody listens on, refusing one in use) and
// returns the endpoint it listens on, with the port chosen. Peers that
// connect are served until Close.
func (s *Socket) Bind(endpoint string) (string, error) {
	network, addr, err := parseEndpoint(endpoint)
	if err != nil {
		return "", err
	}
	if network == "unix" {
		if fi, err := os.Lstat(addr); err == nil && fi.Mode()&os.ModeSocket != 0 {
			// A socket file nobody listens on is left by a process that
			// died: replace it. One that answers is in use.
			if c, err := net.Dial("unix", addr); err == nil {
				_ = c.Close()
				return "", fmt.Errorf("zmtp: bind %s: %w", endpoint, syscall.EADDRINUSE)
			}
			_ = os.Remove(addr)
		}
	}
	l, err := net.Listen(network, addr)
	if err != nil {
		return "", fmt.Errorf("zmtp: bind %s: %w", endpoint, err)
	}
	s.mu.Lock()
	if s.closed || s.closing.Load() {
		s.mu.Unlock()
		_ = l.Close()
		return "", ErrClosed
	}
	s.listeners = append(s.listeners, l)
	s.started = true
	s.wg.Add(1)
	s.mu.Unlock()
	go s.accept(l)
	if network == "unix" {
		return "ipc://" + l.Addr().String(), nil
	}
	return "tcp://" + l.Addr().String(), nil
}

func (s *Socket) accept(l net.Listener) {
	defer s.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			if s.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("accept", "err", err)
			select {
			case <-time.After(10 * time.Millisecond):
			case <-s.ctx.Done():
				return
			}
			continue
		}
		if !s.track(c) {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if p := s.handshake(c); p != nil {
				p.run()
			}
		}()
	}
}

// track registers a connection so that Close closes it; it returns false
// (closing c) once the socket is closed.
func (s *Socket) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		_ = c.Close()
		return false
	}
	s.conns[c] = struct{}{}
	return true
}

func (s *Socket) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
	_ = c.Close()
}

// Connect connects to endpoint in the background and keeps connected:
// after a failed attempt or a lost connection it tries again, after a
// back-off from Options.ReconnectMin doubling up to ReconnectMax, until
// Close. It returns at once; an error only for a bad endpoint or a closed
// socket.
func (s *Socket) Connect(endpoint string) error {
	network, addr, err := parseEndpoint(endpoint)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.closing.Load() {
		return ErrClosed
	}
	s.started = true
	s.wg.Add(1)
	go s.dial(network, addr)
	return nil
}

func (s *Socket) dial(network, addr string) {
	defer s.wg.Done()
	var d net.Dialer
	wait := s.opt.ReconnectMin
	for s.ctx.Err() == nil {
		c, err := d.DialContext(s.ctx, network, addr)
		if err == nil && s.track(c) {
			if p := s.handshake(c); p != nil {
				wait = s.opt.ReconnectMin
				p.run()
			}
		}
		select {
		case <-time.After(wait):
		case <-s.ctx.Done():
			return
		}
		wait = min(2*wait, s.opt.ReconnectMax)
	}
}

// handshake exchanges greetings and READY commands on c and returns the
// peer, registered with the socket, or nil (c closed, counted in
// Stats.Rejected) when the peer is refused.
func (s *Socket) handshake(c net.Conn) *peer {
	p, err := s.shake(c)
	if err != nil {
		if s.ctx.Err() == nil { // not a refusal: the socket is closing
			s.st.rejected.Add(1)
			if errors.Is(err, ErrAuth) {
				s.st.authRefused.Add(1)
			}
			s.log.Warn("handshake refused", "remote", c.RemoteAddr().String(), "err", err)
		}
		s.untrack(c)
		return nil
	}
	return p
}

func (s *Socket) shake(c net.Conn) (*peer, error) {
	_ = c.SetDeadline(time.Now().Add(s.opt.HandshakeTimeout))
	if s.opt.Curve != nil {
		return s.shakeCurve(c)
	}
	minor, err := greet(c, zmtpwire.Greeting(), zmtpwire.MechanismNULL)
	if err != nil {
		return nil, err
	}
	enc := zmtpwire.NewEncoder(0)
	enc.Command("READY", zmtpwire.ReadyProperties(s.typ.String(), s.opt.Identity))
	if _, err := enc.WriteTo(c); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	p := s.newPeer(c, minor, enc)
	data, err := zmtpwire.ReadCommand(p.dec, "READY")
	if err != nil {
		return nil, err
	}
	typ, id, err := s.typ.accept(data)
	if errors.Is(err, ErrSocketType) {
		enc.Command("ERROR", []byte{byte(len(incompatible))}, []byte(incompatible))
		_, _ = enc.WriteTo(c)
	}
	if err != nil {
		return nil, err
	}
	return s.ready(p, typ, id)
}

// greet sends greeting g on c and reads the peer's, which must name
// mechanism mech; it returns the peer's minor version.
func greet(c net.Conn, g [zmtpwire.GreetingLen]byte, mech string) (byte, error) {
	if _, err := c.Write(g[:]); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrGreeting, err)
	}
	return zmtpwire.ReadGreeting(c, mech)
}

// incompatible is the reason of the ERROR a peer of an incompatible
// socket type gets.
const incompatible = "incompatible socket type"

// accept reads a peer's READY metadata and returns its socket type, which
// must fit t (ErrSocketType), and its identity.
func (t Type) accept(meta []byte) (typ string, id []byte, err error) {
	typ, id, err = zmtpwire.ParseProperties(meta)
	if err != nil {
		return "", nil, err
	}
	if !t.compatible(typ) {
		return "", nil, fmt.Errorf("%w: %v meets %s", ErrSocketType, t, typ)
	}
	return typ, id, nil
}

// newPeer returns the peer of connection c after its greeting: ZMTP 3's
// minor version minor, the encoder of its writer.
func (s *Socket) newPeer(c net.Conn, minor byte, enc *zmtpwire.Encoder) *peer {
	p := &peer{s: s, c: c, minor: minor, enc: enc, wake: make(chan struct{}, 1), done: make(chan struct{}),
		rtoken: make(chan struct{}, 1)}
	p.dec = zmtpwire.NewDecoder(&p.rd, s.opt.MaxMessageSize, s.opt.MaxParts)
	p.rd.C = c
	return p
}

// ready finishes a handshake: the peer takes its place among the
// socket's peers.
func (s *Socket) ready(p *peer, typ string, id []byte) (*peer, error) {
	c, minor := p.c, p.minor
	p.peerType, p.identity = typ, id
	_ = c.SetDeadline(time.Time{})
	if minor >= 1 {
		// Heartbeats are ZMTP 3.1's: a 3.0 peer gets no PING, so it is not
		// held to answer one.
		p.rd.Timeout = s.opt.HeartbeatTimeout
	}
	if !s.typ.shared() && s.typ.sends() {
		p.out = zmtpqueue.NewOut(s.opt.HWM)
	}
	if err := s.addPeer(p); err != nil {
		return nil, err
	}
	s.st.handshakes.Add(1)
	s.log.Debug("peer ready", "remote", c.RemoteAddr().String(), "type", typ, "minor", minor)
	return p, nil
}

// addPeer registers p; a SUB socket queues its subscriptions to p in the
// same critical section, so that none is missed or sent twice.
func (s *Socket) addPeer(p *peer) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.typ == Pair && len(s.peers) > 0 {
		return ErrExclusive
	}
	if s.typ.routed() {
		p.setRoutingID(s.routingID(p.identity))
	}
	if s.typ == Sub {
		// Each prefix once, whatever its count: the publisher keeps a
		// set.
		for _, e := range s.subs.list {
			p.command(true, e.prefix)
		}
	}
	s.peers = append(s.peers[:len(s.peers):len(s.peers)], p)
	list := s.peers
	s.peersV.Store(&list)
	s.st.peers.Add(1)
	return nil
}

// routingID returns the routing id of a ROUTER's new peer (s.mu held):
// the Identity it announced, or, when it announced none, one starting
// with a zero byte (reserved for these) or one a connected peer has, five
// bytes as libzmq makes them: a zero byte, then a 4-byte counter.
func (s *Socket) routingID(identity []byte) []byte {
	if len(identity) > 0 && identity[0] != 0 && !slices.ContainsFunc(s.peers, func(q *peer) bool { return bytes.Equal(q.routeID, identity) }) {
		return identity
	}
	s.nextRoute++
	return binary.BigEndian.AppendUint32([]byte{0}, s.nextRoute)
}

func (s *Socket) removePeer(p *peer) {
	s.mu.Lock()
	next := make([]*peer, 0, len(s.peers))
	for _, q := range s.peers {
		if q != p {
			next = append(next, q)
		}
	}
	s.peers = next
	s.peersV.Store(&next)
	s.mu.Unlock()
	s.st.peers.Add(^uint64(0))
}

// Send sends a message of one or more parts. It copies the parts and
// never blocks. On a PUSH or DEALER socket it returns ErrHWM when
// Options.HWM messages wait (whether peers are connected or not); a
// writer of any peer takes the message. On a PUB socket the message is
// queued for every peer whose subscriptions match its first part, and
// dropped (and counted) for a subscriber whose queue is full; it returns
// nil. On a ROUTER socket the first part is the routing id of the peer
// to send the rest to (a message for no peer, or a full one, is dropped
// and counted; it returns nil). On a PAIR socket it is PUSH's Send to
// its one peer. On a REQ socket it sends a request to a connected peer
// (ErrNoPeer when none is, ErrState before the last one's reply came);
// on a REP the reply to the last request (ErrState before one). After
// Close it returns ErrClosed. Send allocates nothing.
func (s *Socket) Send(parts ...[]byte) error {
	if s.closing.Load() {
		return ErrClosed
	}
	switch s.typ {
	case Push, Dealer, Pair:
		if !s.out.TryPut(parts) {
			return ErrHWM
		}
		return nil
	case Req, Rep:
		return s.sendStrict(context.Background(), false, parts)
	case Router:
		// The first part names the peer; the rest is the message. A
		// message for no peer, or for a peer whose queue is full, is
		// dropped and counted, as ZeroMQ's ROUTER does.
		if len(parts) < 2 {
			return fmt.Errorf("%w: a ROUTER message needs a routing id and a body", ErrSocketKind)
		}
		for _, p := range *s.peersV.Load() {
			if bytes.Equal(p.routeID, parts[0]) {
				if !p.out.TryPut(parts[1:]) {
					s.st.dropped.Add(1)
				}
				return nil
			}
		}
		s.st.dropped.Add(1)
		return nil
	case Pub:
		var first []byte
		if len(parts) > 0 {
			first = parts[0]
		}
		for _, p := range *s.peersV.Load() {
			if !p.subscribed(first) {
				continue
			}
			if !p.out.TryPut(parts) {
				s.st.dropped.Add(1)
			}
		}
		return nil
	}
	return fmt.Errorf("%w: Send on %v", ErrSocketKind, s.typ)
}

// SendContext is Send for a goroutine that may wait: on a PUSH or DEALER
// socket at its high-water mark it waits for room until ctx ends
// (ctx.Err()) or the socket closes (ErrClosed), instead of returning
// ErrHWM. When nothing is queued or being written and a peer is
// connected, it writes the message itself: a small one when the sends are
// not a stream, a large one (a part of 8 KiB or more) always,
// its large parts by reference with one vectored write, returning once
// they are written. The parts are the caller's again when it returns.
// An end of ctx during such a write ends the connection (a frame written
// in part leaves it unusable) and returns ctx.Err(). On a PUB or ROUTER
// socket it is Send; on a REQ socket it is Send that waits for a peer to
// connect until ctx ends. It is not for an agent's duty cycle, which must not
// block: there, use Send.
func (s *Socket) SendContext(ctx context.Context, parts ...[]byte) error {
	if s.typ == Req {
		return s.sendStrict(ctx, true, parts)
	}
	if !s.typ.shared() {
		return s.Send(parts...)
	}
	waited := false
	for {
		if s.closing.Load() {
			return ErrClosed
		}
		peers := *s.peersV.Load()
		large := isLarge(parts)
		queued, claimed := s.out.PutOrClaim(parts, len(peers) > 0 && !waited, large)
		if claimed {
			// Round robin over the peers, as the writers take turns
			// with the queued messages.
			p := peers[int(s.nextInline.Add(1)%uint32(len(peers)))]
			if large {
				return s.writeByReference(ctx, p, parts)
			}
			s.writeInline(p, parts)
			return nil
		}
		if queued {
			if waited {
				// Pass the wake-up on to another waiting sender while
				// room is left.
				s.out.PassNotFull()
			}
			return nil
		}
		waited = true
		if err := s.waitRoom(ctx); err != nil {
			return err
		}
	}
}

// waitRoom waits until the send queue may have room, ctx ends (ctx.Err())
// or the socket closes (ErrClosed). It announces itself in waiters and
// looks at the queue once more first: the sender's half of the queue's
// handshake (zmtpqueue.Out).
func (s *Socket) waitRoom(ctx context.Context) error {
	q := s.out
	q.Waiters.Add(1)
	defer q.Waiters.Add(-1)
	if q.HasRoom() {
		return nil
	}
	select {
	case <-q.NotFull:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.stopping:
		return ErrClosed
	}
}

// writeInline writes a message of SendContext that the send queue let
// the caller write itself (putOrClaim): the round trip then has no
// hand-off to the writer goroutine. The caller's own earlier messages
// are written (putOrClaim claims only when nothing is held) and its later
// ones are sent after it returns, so its order holds. p's write lock is
// taken by the writer goroutine per batch.
func (s *Socket) writeInline(p *peer, parts [][]byte) {
	p.wmu.Lock()
	p.inline = zmtpwire.AppendMessage(p.inline[:0], parts)
	_, err := p.c.Write(p.inline)
	p.wmu.Unlock()
	s.out.ClaimDone()
	if err != nil {
		s.lose(1)
		p.end(err)
		return
	}
	s.st.sent.Add(1)
	s.st.inline.Add(1)
}

// isLarge reports whether a message has a part of zmtpwire.DefaultRefMin
// bytes or more: SendContext writes it by reference when it may.
func isLarge(parts [][]byte) bool {
	for _, p := range parts {
		if len(p) >= zmtpwire.DefaultRefMin {
			return true
		}
	}
	return false
}

// writeByReference writes a large message of SendContext that the send
// queue let the caller write itself, as writeInline does, but with the
// peer's inline Encoder: frame headers and small parts in its buffer, the
// large parts by reference, in one vectored write (writev), no copy. It
// returns once the message is written (nil), lost with the connection
// (nil, counted in Stats.Lost: delivery is at most once), or interrupted
// by the end of ctx (ctx.Err(); the connection ends, as a frame written in
// part leaves it unusable).
func (s *Socket) writeByReference(ctx context.Context, p *peer, parts [][]byte) error {
	p.wmu.Lock()
	if p.ienc == nil {
		p.ienc = zmtpwire.NewEncoder(zmtpwire.DefaultRefMin)
		p.vw = zmtpwire.NewVecWriter(p.c)
	}
	p.ienc.Message(parts...)
	var w *zmtpwire.WriteWatch
	if ctx.Done() != nil {
		w = zmtpwire.WatchWrite(ctx, p.c)
	}
	var err error
	if p.vw != nil {
		_, err = p.vw.WriteBuffers(p.ienc.Vector())
		p.ienc.Reset()
	} else {
		_, err = p.ienc.WriteTo(p.c)
	}
	if w != nil {
		w.Finish(err == nil)
	}
	p.wmu.Unlock()
	s.out.ClaimDone()
	if err != nil {
		s.lose(1)
		p.end(err)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return nil
	}
	s.st.sent.Add(1)
	s.st.byRef.Add(1)
	return nil
}

// A Message is a received message. Recv fills it; its parts stay valid
// until the next Recv into the same Message. A Message keeps its buffers
// from one Recv to the next, so a loop over Recv allocates nothing.
type Message struct{ s slot }

// Parts returns the message's parts.
func (m *Message) Parts() [][]byte { return m.s.parts }

// Recv waits for the next message of a PULL, SUB, DEALER, ROUTER, REQ,
// REP or PAIR socket (on a ROUTER, the sender's routing id is its first
// part; on a REQ the reply, on a REP the request, without their
// envelopes, ErrState out of turn: reqrep.go) until
// ctx ends or the socket closes (ErrClosed: what was still queued is
// discarded), and puts it into m. Any goroutine may call it; messages of
// one peer come out in the order they were sent. When the socket has one
// peer and nothing is queued, Recv reads and decodes that peer's
// connection itself (docs/zmtp.md, "Receiving without a hand-off").
func (s *Socket) Recv(ctx context.Context, m *Message) error {
	if s.typ.strict() {
		return s.recvStrict(ctx, m)
	}
	return s.recv(ctx, m)
}

func (s *Socket) recv(ctx context.Context, m *Message) error {
	if s.in == nil || s.bridged {
		return fmt.Errorf("%w: Recv on %v", ErrSocketKind, s.typ)
	}
	rc := &s.rc
	for {
		if s.closing.Load() {
			return ErrClosed
		}
		rc.mu.Lock()
		if rc.off == len(rc.buf) {
			// Give back the buffer handed out, take the queued one: the
			// receive queue's lock once per batch, not per message.
			var n int
			if rc.buf, n = s.in.Take(rc.buf, &rc.bigs); n == 0 {
				rc.buf = rc.buf[:0]
			}
			rc.off = 0
		}
		if rc.off < len(rc.buf) {
			rc.next(&m.s, s.in)
			rc.mu.Unlock()
			return nil
		}
		// Nothing queued: read the connection here when the socket has
		// one peer and its read side is free. Counted as a waiter first,
		// so that a receiver releasing the read side meanwhile wakes it.
		s.ho.waiters.Add(1)
		p := s.takeDirect(true)
		rc.mu.Unlock()
		if p != nil {
			s.ho.waiters.Add(-1)
			if done, err := s.recvDirect(ctx, p, m); done {
				return err
			}
			continue
		}
		select {
		case <-s.in.NotEmpty:
		case <-ctx.Done():
			s.ho.waiters.Add(-1)
			return ctx.Err()
		case <-s.stopping:
			s.ho.waiters.Add(-1)
			return ErrClosed
		}
		s.ho.waiters.Add(-1)
	}
}

// recvCache holds the buffer of received messages Recv took from the
// receive queue, and how far it handed them out; m is Drain's message,
// one and routed its parts when it drains a decoder (drainDirect).
type recvCache struct {
	mu     sync.Mutex
	buf    []byte
	off    int
	bigs   [][]byte // the large messages' buffers of buf, from bi on
	bi     int
	m      slot
	one    [1][]byte
	routed [][]byte
}

// Drain hands up to limit received messages of a PULL, SUB, DEALER or
// ROUTER socket to h, in the order Recv would return them, and returns
// how many; it does not wait (0 when none has arrived). The parts are
// valid during the call only. Drain takes the receive lock once for all
// of them where Recv takes it per message: the way to consume a stream.
// When nothing is queued and the socket has one peer whose read side is
// free, it hands out the messages that peer's decoder holds already,
// parts in the decoder's buffer (no copy). It never reads the network,
// so an agent may call it in its duty cycle. h must not call Recv or
// Drain of the same socket.
func (s *Socket) Drain(h func(parts [][]byte), limit int) (int, error) {
	if s.in == nil || s.bridged || s.typ.strict() {
		return 0, fmt.Errorf("%w: Drain on %v", ErrSocketKind, s.typ)
	}
	if s.closing.Load() {
		return 0, ErrClosed
	}
	rc := &s.rc
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for n < limit {
		if rc.off == len(rc.buf) {
			var k int
			if rc.buf, k = s.in.Take(rc.buf, &rc.bigs); k == 0 {
				rc.buf = rc.buf[:0]
				rc.off = 0
				// Nothing queued: what the decoder of the socket's one
				// peer holds, when its read side is free.
				if p := s.takeDirect(false); p != nil {
					n += s.drainDirect(p, h, limit-n)
				}
				break
			}
			rc.off = 0
		}
		rc.next(&rc.m, s.in)
		h(rc.m.parts)
		n++
	}
	return n, nil
}

// Subscribe asks every PUB peer, present and future, for the messages
// whose first part starts with prefix (all messages for an empty prefix).
// Subscriptions count, as libzmq's do: each Subscribe is undone by one
// Unsubscribe. A peer is sent SUBSCRIBE when a prefix's count goes from 0
// to 1 (and once per prefix when it connects), CANCEL when it goes back
// to 0: a publisher keeps a set of prefixes per subscriber, so a second
// SUBSCRIBE of a prefix would change nothing there, and a CANCEL ends it
// however many SUBSCRIBEs came before.
func (s *Socket) Subscribe(prefix []byte) error { return s.subscribe(true, prefix) }

// Unsubscribe undoes one Subscribe of prefix. Unsubscribing a prefix not
// subscribed does nothing and returns nil, as libzmq's ZMQ_UNSUBSCRIBE
// does.
func (s *Socket) Unsubscribe(prefix []byte) error { return s.subscribe(false, prefix) }

func (s *Socket) subscribe(on bool, prefix []byte) error {
	if s.typ != Sub {
		return fmt.Errorf("%w: Subscribe on %v", ErrSocketKind, s.typ)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.closing.Load() {
		return ErrClosed
	}
	if !s.subs.change(on, prefix) {
		return nil
	}
	for _, p := range s.peers {
		p.command(on, prefix)
	}
	return nil
}

// Subscribers returns how many peers of a PUB socket would receive a
// message whose first part is topic: those connected whose subscriptions
// match it. A publisher can wait for its subscriber with it. On other
// socket types it returns 0.
func (s *Socket) Subscribers(topic []byte) int {
	if s.typ != Pub {
		return 0
	}
	n := 0
	for _, p := range *s.peersV.Load() {
		if p.subscribed(topic) {
			n++
		}
	}
	return n
}

// Stats returns the socket's statistics.
func (s *Socket) Stats() Stats {
	return Stats{
		Peers:        int(s.st.peers.Load()),
		Handshakes:   s.st.handshakes.Load(),
		Authorized:   s.st.authorized.Load(),
		AuthRefused:  s.st.authRefused.Load(),
		Rejected:     s.st.rejected.Load(),
		PeerErrors:   s.st.peerErrors.Load(),
		Disconnects:  s.st.disconnects.Load(),
		Sent:         s.st.sent.Load(),
		Received:     s.st.received.Load(),
		Dropped:      s.st.dropped.Load(),
		Lost:         s.st.lost.Load(),
		Unsent:       s.st.unsent.Load(),
		Unsubscribed: s.st.unsubscribed.Load(),
		Torn:         s.st.torn.Load(),
	}
}

// Close closes the socket: Send and SendContext return ErrClosed from
// now on, and so do Recv and Drain (what was received and not taken is
// discarded). It waits up to Options.Linger (DefaultLinger; no wait
// with NoLinger) for the messages still queued to be written, the socket
// connecting and accepting meanwhile, so that a peer that connects late
// or reads slowly gets them; then it stops listening and connecting,
// closes every connection and waits for the socket's goroutines to end.
// The messages still queued then are discarded, counted in Stats.Unsent,
// and Close returns an error wrapping ErrUnsent that says how many; nil
// when every message was written. It is safe to call more than once: a
// later call returns nil at once.
func (s *Socket) Close() error {
	if s.opt.Linger < 0 {
		return s.close(context.Background(), false)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opt.Linger)
	defer cancel()
	return s.close(ctx, true)
}

// CloseContext is Close with a wait for the queued messages until ctx
// ends, in place of Options.Linger.
func (s *Socket) CloseContext(ctx context.Context) error { return s.close(ctx, true) }

// close closes the socket, after waiting for its queued messages until
// ctx ends when wait is set.
func (s *Socket) close(ctx context.Context, wait bool) error {
	s.mu.Lock()
	if s.closed || s.closing.Load() {
		s.mu.Unlock()
		return nil
	}
	s.closing.Store(true)
	close(s.stopping)
	s.mu.Unlock()
	// A Recv reading a connection itself looks at closing again.
	s.interruptDirect()
	if wait {
		s.linger(ctx)
	}
	unsent := s.st.unsent.Load()
	s.mu.Lock()
	s.closed = true
	// From here on, what a writer loses or a peer leaves queued counts as
	// unsent (lose).
	s.cancel()
	for _, l := range s.listeners {
		_ = l.Close()
	}
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.unwatch()
	if s.out != nil {
		// No writer is left: what none took is discarded here.
		s.st.unsent.Add(uint64(s.out.Drop()))
	}
	if n := s.st.unsent.Load() - unsent; n > 0 {
		return fmt.Errorf("%w: %d messages", ErrUnsent, n)
	}
	return nil
}

// linger waits until no message is queued or being written, or ctx ends.
// Close is no hot path: it looks at the queues with a sleep between looks
// that doubles up to lingerPoll.
func (s *Socket) linger(ctx context.Context) {
	if !s.typ.sends() {
		return
	}
	wait := time.Duration(0)
	for s.queued() > 0 {
		wait = min(max(2*wait, 50*time.Microsecond), lingerPoll)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// lingerPoll bounds the sleep between two looks at the queues (linger).
const lingerPoll = 5 * time.Millisecond

// queued returns the messages queued or being written: in the socket's
// send queue (PUSH, DEALER) or its peers' (PUB, ROUTER).
func (s *Socket) queued() int {
	n := 0
	if s.out != nil {
		n += s.out.Count()
	}
	for _, p := range *s.peersV.Load() {
		if p.out != nil {
			n += p.out.Count()
		}
	}
	return n
}

// lose counts n messages that will not be written: lost (Stats.Lost)
// while the socket is open, unsent (Stats.Unsent) once Close's linger is
// over and it closes the connections. Close cancels the socket's context
// before it closes a connection, and the context's cancellation is
// atomic (sequentially consistent, on arm64 too): a writer or reader that
// fails because Close closed its connection sees ctx.Err() set. Close
// reads the count after s.wg.Wait, which orders every goroutine's adds
// before it.
func (s *Socket) lose(n int) {
	if s.ctx.Err() != nil {
		s.st.unsent.Add(uint64(n))
		return
	}
	s.st.lost.Add(uint64(n))
}

// subscriptions is a set of prefixes with a count for each, in a slice
// for matching without allocation. A SUB counts its own subscriptions
// (change); a PUB keeps each subscriber's as a set (set), as libzmq's
// publisher does.
type subscriptions struct {
	list  []subEntry
	bytes int // the prefixes' total length
}

type subEntry struct {
	prefix []byte
	count  int
}

// change adds (on) or removes one count of prefix; it reports whether
// prefix entered the set (its count went from 0 to 1) or left it (from 1
// to 0): only those changes are told to the publishers. A removal of a
// prefix not in the set changes nothing.
func (ss *subscriptions) change(on bool, prefix []byte) bool {
	i := ss.index(prefix)
	switch {
	case i >= 0 && on:
		ss.list[i].count++
		return false
	case i >= 0:
		if ss.list[i].count--; ss.list[i].count > 0 {
			return false
		}
		ss.remove(i)
		return true
	case on:
		ss.list = append(ss.list, subEntry{prefix: bytes.Clone(prefix), count: 1})
		ss.bytes += len(prefix)
		return true
	}
	return false
}

// set adds (on) or removes prefix as a member of a set: a second add of a
// member changes nothing, and one removal takes it out.
func (ss *subscriptions) set(on bool, prefix []byte) {
	i := ss.index(prefix)
	switch {
	case i >= 0 && !on:
		ss.remove(i)
	case i < 0 && on:
		ss.list = append(ss.list, subEntry{prefix: bytes.Clone(prefix), count: 1})
		ss.bytes += len(prefix)
	}
}

func (ss *subscriptions) index(prefix []byte) int {
	for i := range ss.list {
		if bytes.Equal(ss.list[i].prefix, prefix) {
			return i
		}
	}
	return -1
}

func (ss *subscriptions) remove(i int) {
	ss.bytes -= len(ss.list[i].prefix)
	ss.list = append(ss.list[:i], ss.list[i+1:]...)
}

func (ss *subscriptions) has(prefix []byte) bool { return ss.index(prefix) >= 0 }

func (ss *subscriptions) match(first []byte) bool {
	for i := range ss.list {
		if bytes.HasPrefix(first, ss.list[i].prefix) {
			return true
		}
	}
	return false
}
