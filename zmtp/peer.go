package zmtp

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/internal/zmtpqueue"
	"github.com/dutyrt/duty/internal/zmtpwire"
)

// A peer is one connection after its handshake: a reader goroutine (the
// one that ran the handshake) and a writer goroutine.
type peer struct {
	s        *Socket
	c        net.Conn
	minor    byte // the peer's ZMTP minor version: 0 for 3.0
	peerType string
	identity []byte
	enc      *zmtpwire.Encoder
	dec      *zmtpwire.Decoder
	rd       zmtpwire.DeadlineReader

	out   *zmtpqueue.Out // Pub: this subscriber's queue; Push uses the socket's
	wake  chan struct{}  // commands are pending
	done  chan struct{}  // closed when the peer ends
	ended atomic.Bool    // set before done is closed
	once  sync.Once

	// The owner of the read side (handover.go): rown is ownReader,
	// ownFree or ownRecv; rgen counts the takes of blocking receivers;
	// rwant asks the reader goroutine to give the read side up; rpark
	// says the reader goroutine waits on rtoken for a receiver's release.
	rown   atomic.Int32
	rgen   atomic.Uint32
	rwant  atomic.Bool
	rpark  atomic.Bool
	rtoken chan struct{}

	// wmu is held by whoever writes to c: the writer goroutine, or a
	// SendContext writing inline (Socket.writeInline, writeByReference),
	// which alone uses inline, its message's frames, and ienc.
	wmu    sync.Mutex
	inline []byte
	ienc   *zmtpwire.Encoder
	vw     *zmtpwire.VecWriter

	// Router: the peer's routing id, the frame that carries it in front
	// of what it sends (MORE set), and scratch for a bridge's delivery.
	routeID    []byte
	routeFrame []byte
	routed     [][]byte

	bigs [][]byte // the reader's scratch: a batch's large messages (queueRaw)

	mu      sync.Mutex
	cmds    []pendingCmd // commands for the writer: SUBSCRIBE, CANCEL
	pong    bool         // a PONG is due; one at most, however many PINGs came
	pongCtx [maxPingContext]byte
	pongLen int
	subs    subscriptions // Pub: the set of prefixes this peer subscribed to
	err     error         // why the peer ended
}

// Bounds on what a peer can make this side keep.
const (
	maxPingContext = 16      // the specification's bound on a PING's context
	maxPeerSubs    = 4096    // distinct prefixes a subscriber may hold
	maxPeerSubLen  = 1 << 20 // their total length
)

type pendingCmd struct {
	name string
	data []byte
}

// command queues a SUBSCRIBE (on) or CANCEL of prefix for the writer: as
// commands for a ZMTP 3.1 peer, as the ZMTP 3.0 subscription messages
// (0x01 or 0x00, then the prefix) for a 3.0 peer.
func (p *peer) command(on bool, prefix []byte) {
	name := "CANCEL"
	if on {
		name = "SUBSCRIBE"
	}
	p.queueCmd(name, bytes.Clone(prefix))
}

func (p *peer) queueCmd(name string, data []byte) {
	p.mu.Lock()
	p.cmds = append(p.cmds, pendingCmd{name: name, data: data})
	p.mu.Unlock()
	zmtpqueue.Signal(p.wake)
}

func (p *peer) subscribed(first []byte) bool {
	p.mu.Lock()
	ok := p.subs.match(first)
	p.mu.Unlock()
	return ok
}

// run serves the peer until its connection ends: the writer on a new
// goroutine, the reader on this one.
func (p *peer) run() {
	s := p.s
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		p.end(p.write())
	}()
	p.end(p.read())
	<-p.done
	// A receiver may still read: wait for the read side (it fails at once
	// on the closed connection) before looking at the decoder.
	p.awaitRead()
	if p.dec.Partial() {
		s.st.torn.Add(1)
	}
	s.removePeer(p)
	if p.out != nil {
		s.lose(p.out.Drop())
	}
	s.untrack(p.c)
	s.st.disconnects.Add(1)
	p.mu.Lock()
	err := p.err
	p.mu.Unlock()
	if isPeerError(err) {
		s.st.peerErrors.Add(1)
		s.log.Warn("peer disconnected", "remote", p.c.RemoteAddr().String(), "err", err)
	} else {
		s.log.Debug("peer gone", "remote", p.c.RemoteAddr().String(), "err", err)
	}
}

// isPeerError tells a peer's fault from an ordinary end of a connection.
func isPeerError(err error) bool {
	return errors.Is(err, ErrProtocol) || errors.Is(err, ErrTooLarge) ||
		errors.Is(err, ErrPeerTimeout) || errors.Is(err, io.ErrUnexpectedEOF)
}

// end records the first reason the peer ends, closes the connection (which
// stops the other goroutine's I/O) and the done channel.
func (p *peer) end(err error) {
	p.once.Do(func() {
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		p.ended.Store(true)
		_ = p.c.Close()
		close(p.done)
	})
}

// read decodes until the connection fails. Messages go to the receive
// queue or the bridge's mailbox (a receiving socket) or are subscriptions
// (a PUB); commands are answered.
func (p *peer) read() error {
	s := p.s
	var runs [][]byte
	for {
		if p.rwant.Load() && p.yieldRead() {
			// A receiver reads the connection itself now.
			p.awaitRead()
		}
		k, err := p.dec.Next()
		if err == zmtpwire.ErrInterrupted {
			// Meant for a receiver that has given the read side up.
			p.rd.Clear()
			continue
		}
		if err != nil {
			return err
		}
		if k == zmtpwire.KindCommand {
			if err := p.onCommand(p.dec.Command()); err != nil {
				return err
			}
			continue
		}
		parts := p.dec.Parts()
		switch s.typ {
		case Pull, Sub, Dealer, Router, Req, Rep, Pair:
			if s.typ == Sub && !s.wants(parts[0]) {
				s.st.unsubscribed.Add(1)
				continue
			}
			if s.sink == nil {
				if runs, err = p.readBatch(runs); err != nil {
					return err
				}
				continue
			}
			if s.typ.routed() {
				p.routed = append(append(p.routed[:0], p.routeID), parts...)
				parts = p.routed
			}
			ok, err := s.sink.deliver(s.ctx, parts)
			clear(p.routed)
			if err != nil {
				return err
			}
			if ok {
				s.st.received.Add(1)
			}
		case Pub:
			// The ZMTP 3.0 form of a subscription, which 3.1 peers may use
			// too: one frame, 0x01 or 0x00, then the prefix.
			if len(parts) == 1 && len(parts[0]) > 0 && parts[0][0] <= 1 {
				if err := p.subscription(parts[0][0] == 1, parts[0][1:]); err != nil {
					return err
				}
			}
		}
	}
}

// readBatch queues the message Next decoded, and with it every message
// already in the decoder's buffer, up to readBatch of them or the room
// left: their frames are copied into the receive queue as the runs of
// the buffer they occupy, with two locks of the queue and at most one
// wake-up of Recv for the batch. runs is scratch space, returned for
// reuse.
func (p *peer) readBatch(runs [][]byte) ([][]byte, error) {
	s := p.s
	room, err := s.in.Reserve(s.ctx, readBatch)
	if err != nil {
		return runs, err
	}
	// Decoding more never reads, so the buffer's earlier bytes stay put
	// and the runs stay valid until the commit.
	runs = runs[:0]
	bigs := p.bigs[:0]
	runs, bigs = p.queueRaw(runs, bigs, p.dec.Raw())
	n := 1
	var err2 error
	for n < room {
		if s.typ == Pull || s.typ == Dealer || s.typ == Pair {
			// Small messages in bulk; a SUB checks each against its
			// subscriptions below, a ROUTER puts the routing id in front.
			if raw, k := p.dec.NextShorts(room - n); k > 0 {
				runs = extend(runs, raw)
				n += k
				continue
			}
		}
		k, ok, err := p.dec.NextBuffered()
		if err != nil || !ok {
			err2 = err
			break
		}
		if k == zmtpwire.KindCommand {
			if err2 = p.onCommand(p.dec.Command()); err2 != nil {
				break
			}
			continue
		}
		if s.typ == Sub && !s.wants(p.dec.Parts()[0]) {
			s.st.unsubscribed.Add(1)
			continue
		}
		runs, bigs = p.queueRaw(runs, bigs, p.dec.Raw())
		n++
	}
	s.in.Commit(runs, n, room, bigs...)
	clear(runs)
	clear(bigs)
	p.bigs = bigs[:0]
	s.st.received.Add(uint64(n))
	if d := s.ho.direct.Load(); d != nil && n > 0 {
		// A receiver reading another peer itself would not see these:
		// send it back to the queue (takeDirect looks at avail after its
		// store of direct, this after the commit's store of avail).
		d.rd.Interrupt()
	}
	return runs[:0], err2
}

// queueRaw adds a message's frames as they came on the wire, raw, to the
// runs of a batch, after the routing id's frame on a ROUTER. A large
// message (zmtpqueue.BigMin bytes or more) is copied into a buffer of its
// own instead, added to bigs, and a zmtpqueue.BigMark run stands for it:
// the Message that Recv fills takes that buffer over, so that a large
// message is copied once on its way through the queue.
func (p *peer) queueRaw(runs, bigs [][]byte, raw []byte) ([][]byte, [][]byte) {
	if len(raw) >= zmtpqueue.BigMin {
		b := p.s.in.GetBig(len(p.routeFrame) + len(raw))
		copy(b[copy(b, p.routeFrame):], raw)
		return append(runs, bigMarkRun), append(bigs, b)
	}
	if p.routeFrame != nil {
		runs = append(runs, p.routeFrame)
	}
	if len(runs) == 0 {
		return append(runs, raw), bigs
	}
	return extend(runs, raw), bigs
}

// bigMarkRun is the run that stands for a large message in a batch.
var bigMarkRun = []byte{zmtpqueue.BigMark}

// setRoutingID sets a ROUTER's peer's routing id and its frame.
func (p *peer) setRoutingID(id []byte) {
	p.routeID = id
	p.routeFrame = zmtpwire.AppendMessage(nil, [][]byte{id, nil})
	p.routeFrame = p.routeFrame[:len(p.routeFrame)-zmtpwire.ShortHeader] // the id frame alone, with MORE
}

// extend appends raw to runs, or lengthens the last run when raw follows
// it in the same buffer (the usual case: only a command or a message
// filtered out comes between two runs).
func extend(runs [][]byte, raw []byte) [][]byte {
	last := runs[len(runs)-1]
	if len(last) < cap(last) && &last[:len(last)+1][len(last)] == &raw[0] {
		runs[len(runs)-1] = last[:len(last)+len(raw)]
		return runs
	}
	return append(runs, raw)
}

// subscription applies a subscriber's SUBSCRIBE (on) or CANCEL to its set
// of prefixes: a SUBSCRIBE of a prefix it holds changes nothing, one
// CANCEL removes it (libzmq's publisher keeps a set per subscriber, and
// its subscribers send one CANCEL when their own count reaches 0).
func (p *peer) subscription(on bool, prefix []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on && !p.subs.has(prefix) {
		if len(p.subs.list) >= maxPeerSubs {
			return errProtocol("more than %d subscriptions", maxPeerSubs)
		}
		if p.subs.bytes+len(prefix) > maxPeerSubLen {
			return errProtocol("subscriptions longer than %d bytes in all", maxPeerSubLen)
		}
	}
	p.subs.set(on, prefix)
	return nil
}

func (s *Socket) wants(first []byte) bool {
	s.mu.Lock()
	ok := s.subs.match(first)
	s.mu.Unlock()
	return ok
}

func (p *peer) onCommand(body []byte) error {
	name, data, err := zmtpwire.ParseCommand(body)
	if err != nil {
		return err
	}
	switch string(name) {
	case "PING":
		// ping-ttl (2 bytes), then a context of up to 16 bytes to echo.
		if len(data) < 2 || len(data) > 2+maxPingContext {
			return errProtocol("PING of %d bytes", len(data))
		}
		p.mu.Lock()
		p.pong = true
		p.pongLen = copy(p.pongCtx[:], data[2:])
		p.mu.Unlock()
		zmtpqueue.Signal(p.wake)
	case "PONG":
		// Its arrival is traffic: the read deadline moved.
	case "SUBSCRIBE", "CANCEL":
		if p.s.typ == Pub {
			return p.subscription(string(name) == "SUBSCRIBE", data)
		}
	case "ERROR":
		return errProtocol("peer sent ERROR %q", zmtpwire.ErrorReason(data))
	case "READY":
		return errProtocol("second READY")
	default:
		// Unknown commands are ignored, for later protocol versions.
	}
	return nil
}

// write sends commands and queued messages until the peer ends, and a
// PING every Options.Heartbeat when heartbeats are on.
func (p *peer) write() error {
	s := p.s
	q := p.out
	if s.typ.shared() {
		q = s.out
	}
	var ready chan struct{}
	if q != nil {
		ready = q.NotEmpty
	}
	var tick <-chan time.Time
	if s.opt.Heartbeat > 0 && p.minor >= 1 {
		t := time.NewTicker(s.opt.Heartbeat)
		defer t.Stop()
		tick = t.C
	}
	var ping [2]byte
	binary.BigEndian.PutUint16(ping[:], uint16(min(s.opt.HeartbeatTimeout/(100*time.Millisecond), 0xffff)))
	var cmds []pendingCmd
	var pong [maxPingContext]byte
	var b zmtpqueue.Batch // what this writer took from the queue
	streaming := false    // the last take found messages: the next may hold off
	spins := 0            // looks at a message claimed and not yet committed
	for {
		if q != nil && !q.Ready(0) {
			// Look again a few times before a look at the tail, which
			// the senders store to.
			for i := 0; i < readySpins && !q.Ready(0); i++ {
				runtime.Gosched()
			}
		}
		if q != nil && (q.Ready(0) || q.Pending()) {
			// Messages are claimed: take them without waiting, but see
			// to the peer's end and the heartbeat.
			select {
			case <-p.done:
				return nil
			case <-tick:
				p.enc.Command("PING", ping[:])
			default:
			}
		} else if !p.wait(q, ready, tick, ping[:]) {
			return nil
		}
		p.mu.Lock()
		cmds, p.cmds = p.cmds, cmds[:0]
		ponging, n := p.pong, copy(pong[:], p.pongCtx[:p.pongLen])
		p.pong = false
		p.mu.Unlock()
		if ponging {
			p.enc.Command("PONG", pong[:n])
		}
		for _, c := range cmds {
			if p.minor == 0 && (c.name == "SUBSCRIBE" || c.name == "CANCEL") {
				flag := byte(0)
				if c.name == "SUBSCRIBE" {
					flag = 1
				}
				p.enc.Message(append([]byte{flag}, c.data...))
				continue
			}
			p.enc.Command(c.name, c.data)
		}
		if p.enc.Len() > 0 {
			p.wmu.Lock()
			_, err := p.enc.WriteTo(p.c)
			p.wmu.Unlock()
			if err != nil {
				return err
			}
		}
		// Write what is committed, then what came meanwhile, until
		// nothing is: one write per batch.
		for q != nil {
			if streaming {
				q.HoldOff()
			}
			n := q.Take(&b)
			if n == 0 {
				break
			}
			spins = 0
			streaming = true
			err := p.writeBatch(q.Vector(&b))
			q.Done(&b)
			if err != nil {
				s.lose(n)
				return err
			}
			s.st.sent.Add(uint64(n))
		}
		streaming = false
		if q != nil && q.Pending() {
			// A sender is between its claim and its commit: yield to
			// it, then sleep, should it have been descheduled there.
			if spins++; spins < claimSpins {
				runtime.Gosched()
			} else {
				time.Sleep(claimSleep)
			}
		}
	}
}

// Waiting for a sender's commit (peer.write).
const (
	readySpins = 4
	claimSpins = 64
	claimSleep = 50 * time.Microsecond
)

// wait waits for queued messages, commands, a heartbeat tick (its PING
// encoded) or the peer's end (false). A writer waiting for messages
// announces itself in q.sleepers first and looks at the queue once more,
// the writer's half of the queue's handshake (zmtpqueue.Out).
func (p *peer) wait(q *zmtpqueue.Out, ready chan struct{}, tick <-chan time.Time, ping []byte) bool {
	if q != nil {
		q.Sleepers.Add(1)
		defer q.Sleepers.Add(-1)
		if q.Pending() {
			return true
		}
	}
	select {
	case <-p.done:
		return false
	case <-ready:
	case <-p.wake:
	case <-tick:
		p.enc.Command("PING", ping)
	}
	return true
}

// writeBatch writes what the writer took: one write, or one writev when
// the batch is in pieces (across the ring's end, or with messages by
// reference).
func (p *peer) writeBatch(vec [][]byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if len(vec) == 1 {
		_, err := p.c.Write(vec[0])
		return err
	}
	if p.vw == nil {
		p.vw = zmtpwire.NewVecWriter(p.c)
	}
	if p.vw != nil {
		_, err := p.vw.WriteBuffers(vec)
		return err
	}
	for _, v := range vec {
		if _, err := p.c.Write(v); err != nil {
			return err
		}
	}
	return nil
}

func errProtocol(format string, args ...any) error {
	return &protocolError{msg: fmt.Sprintf(format, args...)}
}
