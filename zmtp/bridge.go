package zmtp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
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
	if !s.typ.receives() {
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
	role  string
	mb    *mailbox.Mailbox
	s     *Socket
	m     Mapping
	limit int
	hwm   uint64
	sent  uint64
	tid   [4]byte
	parts [][]byte
	err   error
	h     mailbox.Handler
}

var _ agent.Agent = (*Feeder)(nil)

// NewFeeder returns a Feeder, named role, from mb (whose consumer this
// goroutine becomes) to s, a PUSH or PUB socket.
func NewFeeder(role string, mb *mailbox.Mailbox, s *Socket, m Mapping) (*Feeder, error) {
	if !s.typ.sends() {
		return nil, fmt.Errorf("%w: a Feeder into %v", ErrBridge, s.typ)
	}
	f := &Feeder{role: role, mb: mb, s: s, m: m, limit: writeBatch}
	f.h = f.handle
	return f, nil
}

// RoleName names the agent.
func (f *Feeder) RoleName() string { return f.role }

// OnStart does nothing.
func (f *Feeder) OnStart() error { return nil }

// OnClose does nothing: the socket and the mailbox belong to the caller.
func (f *Feeder) OnClose() error { return nil }

// DoWork sends up to 256 mailbox messages and returns how many it sent. A
// closed socket terminates the agent (agent.Terminate wrapping ErrClosed).
func (f *Feeder) DoWork() (int, error) {
	n, err := f.mb.Drain(f.h, f.limit)
	if f.err != nil {
		return n, agent.Terminate(f.err)
	}
	return n, err
}

// Refused returns how many times the socket refused a message with ErrHWM
// (each time the message stayed in the mailbox).
func (f *Feeder) Refused() uint64 { return f.hwm }

// Sent returns how many messages the socket accepted from the Feeder.
func (f *Feeder) Sent() uint64 { return f.sent }

func (f *Feeder) handle(msg *mailbox.Message) mailbox.Action {
	parts := msg.Parts()
	if f.m.TypeIDFrame {
		binary.BigEndian.PutUint32(f.tid[:], uint32(msg.TypeID()))
		f.parts = append(append(f.parts[:0], f.tid[:]), parts...)
		parts = f.parts
	}
	err := f.s.Send(parts...)
	clear(f.parts)
	switch err {
	case nil:
		f.sent++
		return mailbox.Continue
	case ErrHWM:
		f.hwm++
		return mailbox.Abort
	default:
		f.err = err
		return mailbox.Abort
	}
}
