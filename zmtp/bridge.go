package zmtp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// A Mapping says how ZMTP messages and mailbox messages correspond
// (docs/zmtp.md, "Bridges to mailboxes"). The frames of a ZMTP message are
// the parts of one mailbox message, in order.
type Mapping struct {
	// TypeIDFrame: the first ZMTP frame carries the mailbox type id, 4
	// bytes big-endian. A receiving bridge takes it off (a message whose
	// first frame is not 4 bytes, or has no frame after it, is dropped and
	// counted in Stats.Dropped); a Feeder puts it on.
	TypeIDFrame bool
	// TypeID is the type id of every message a receiving bridge delivers
	// when TypeIDFrame is off. A Feeder without TypeIDFrame forwards the
	// messages of every type id, their parts as the frames.
	TypeID int32
}

func (m Mapping) check(receiving bool) error {
	if m.TypeIDFrame || !receiving {
		return nil
	}
	if m.TypeID < 1 || m.TypeID > mailbox.MaxTypeID {
		return fmt.Errorf("%w: type id %d", mailbox.ErrTypeID, m.TypeID)
	}
	return nil
}

// ErrBridge reports a bridge set up on a socket that cannot carry it.
var ErrBridge = errors.New("zmtp: bridge not possible")

// DeliverTo makes a PULL or SUB socket deliver every message it receives
// into mb, mapped by m, instead of queueing it for Recv. Call it before
// Bind and Connect. Delivery waits while mb is full (mailbox's
// SendPartsContext): the reader of that connection stops reading, so the
// back-pressure reaches the sending peer through TCP. A message the
// mailbox refuses for good (too long, too many parts, a bad type id, a
// closed mailbox) is dropped and counted in Stats.Dropped.
func (s *Socket) DeliverTo(mb *mailbox.Mailbox, m Mapping) error {
	if !s.typ.receives() || s.typ.strict() {
		return fmt.Errorf("%w: DeliverTo on %v", ErrBridge, s.typ)
	}
	if err := m.check(true); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.started || s.bridged {
		return fmt.Errorf("%w: DeliverTo after Bind, Connect or DeliverTo", ErrBridge)
	}
	s.bridged = true
	s.sink = &mailboxSink{s: s, mb: mb, m: m}
	return nil
}

type mailboxSink struct {
	s  *Socket
	mb *mailbox.Mailbox
	m  Mapping
}

func (k *mailboxSink) deliver(ctx context.Context, parts [][]byte) (bool, error) {
	typeID := k.m.TypeID
	if k.m.TypeIDFrame {
		if len(parts) < 2 || len(parts[0]) != 4 {
			k.s.st.dropped.Add(1)
			return false, nil
		}
		typeID = int32(binary.BigEndian.Uint32(parts[0]))
		parts = parts[1:]
	}
	err := k.mb.SendPartsContext(ctx, typeID, parts...)
	if err == nil {
		return true, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	k.s.st.dropped.Add(1)
	k.s.log.Warn("mailbox refused a message", "mailbox", k.mb.Name(), "err", err)
	return false, nil
}

// A Feeder is an agent that drains a mailbox into a PUSH or PUB socket:
// each mailbox message becomes one ZMTP message, mapped by a Mapping. Its
// DoWork never blocks (Socket.Send does not), so it runs in a duty cycle;
// the network I/O stays on the socket's goroutines. When a PUSH socket
// refuses with ErrHWM, the message stays in the mailbox (the handler
// aborts) and the drain ends: the back-pressure passes on to the
// mailbox's senders.
type Feeder struct {
	feed
	mb *mailbox.Mailbox
	h  mailbox.Handler
}

// A ControlledPoller is a source of messages whose handler may leave a
// message for the next poll: *publication.Subscription, a subscription to
// an IPC publication, is one.
type ControlledPoller interface {
	ControlledPoll(h ringbuf.ControlledHandler, limit int) (int, error)
}

// A PollFeeder is the Feeder of a ControlledPoller: each message (type id
// and payload) becomes one ZMTP message, mapped by a Mapping: with
// TypeIDFrame two frames, the type id and the payload; without, the
// payload alone. ErrHWM leaves the message for the next poll (the handler
// aborts), so an IPC publication's window closes on its publisher.
type PollFeeder struct {
	feed
	src ControlledPoller
	h   ringbuf.ControlledHandler
}

var (
	_ agent.Agent = (*Feeder)(nil)
	_ agent.Agent = (*PollFeeder)(nil)
)

// feed is what both feeders share: the socket, the mapping, the counts and
// the send of one message.
type feed struct {
	role  string
	s     *Socket
	m     Mapping
	hwm   uint64
	sent  uint64
	tid   [4]byte
	parts [][]byte
	err   error
}

func newFeed(role string, s *Socket, m Mapping) (feed, error) {
	if !s.typ.sends() || s.typ.strict() {
		return feed{}, fmt.Errorf("%w: a feeder into %v", ErrBridge, s.typ)
	}
	return feed{role: role, s: s, m: m}, nil
}

// NewFeeder returns a Feeder, named role, from mb (whose consumer this
// goroutine becomes) to s, a PUSH or PUB socket.
func NewFeeder(role string, mb *mailbox.Mailbox, s *Socket, m Mapping) (*Feeder, error) {
	fd, err := newFeed(role, s, m)
	if err != nil {
		return nil, err
	}
	f := &Feeder{feed: fd, mb: mb}
	f.h = func(msg *mailbox.Message) mailbox.Action { return f.send(msg.TypeID(), msg.Parts()) }
	return f, nil
}

// NewPollFeeder returns a PollFeeder, named role, from src to s, a PUSH
// or PUB socket.
func NewPollFeeder(role string, src ControlledPoller, s *Socket, m Mapping) (*PollFeeder, error) {
	fd, err := newFeed(role, s, m)
	if err != nil {
		return nil, err
	}
	f := &PollFeeder{feed: fd, src: src}
	var one [1][]byte
	f.h = func(typeID int32, payload []byte) ringbuf.Action {
		one[0] = payload
		a := f.send(typeID, one[:])
		one[0] = nil
		return a
	}
	return f, nil
}

// RoleName names the agent.
func (f *feed) RoleName() string { return f.role }

// OnStart does nothing.
func (f *feed) OnStart() error { return nil }

// OnClose does nothing: the socket and the source belong to the caller.
func (f *feed) OnClose() error { return nil }

// Refused returns how many times the socket refused a message with ErrHWM
// (each time the message stayed in its source).
func (f *feed) Refused() uint64 { return f.hwm }

// Sent returns how many messages the socket accepted from the feeder.
func (f *feed) Sent() uint64 { return f.sent }

// DoWork sends up to 256 mailbox messages and returns how many it sent. A
// closed socket terminates the agent (agent.Terminate wrapping ErrClosed).
func (f *Feeder) DoWork() (int, error) {
	n, err := f.mb.Drain(f.h, writeBatch)
	return f.done(n, err)
}

// DoWork sends up to 256 messages of the source and returns how many it
// sent; the source's errors (a publication's end of stream, say) are
// returned as they are. A closed socket terminates the agent
// (agent.Terminate wrapping ErrClosed).
func (f *PollFeeder) DoWork() (int, error) {
	n, err := f.src.ControlledPoll(f.h, writeBatch)
	return f.done(n, err)
}

func (f *feed) done(n int, err error) (int, error) {
	if f.err != nil {
		return n, agent.Terminate(f.err)
	}
	return n, err
}

// send sends one message and returns the source's action: Continue when
// the socket took it, Abort (the message stays) when it did not.
func (f *feed) send(typeID int32, parts [][]byte) ringbuf.Action {
	if f.m.TypeIDFrame {
		binary.BigEndian.PutUint32(f.tid[:], uint32(typeID))
		f.parts = append(append(f.parts[:0], f.tid[:]), parts...)
		parts = f.parts
	}
	err := f.s.Send(parts...)
	clear(f.parts)
	switch err {
	case nil:
		f.sent++
		return ringbuf.Continue
	case ErrHWM:
		f.hwm++
		return ringbuf.Abort
	default:
		f.err = err
		return ringbuf.Abort
	}
}
