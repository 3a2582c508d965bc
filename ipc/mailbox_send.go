package ipc

import (
	"context"
	"sync"

	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/mailbox"
)

// mailboxCheckEvery is how many back-pressured sends pass between two
// consumer checks (a clock read and a heartbeat load): the first refusal
// checks, then one in mailboxCheckEvery. A power of two.
const mailboxCheckEvery = 16

// refused turns a back-pressured send into ErrConsumerDead when the
// consumer heartbeat is stale (checked on one refusal in
// mailboxCheckEvery). A full ring with a live consumer stays
// mailbox.ErrBackPressured, unwrapped and without allocation.
// failed maps a failed send's error (not nil): a full ring to refused, a
// refusal as closed to closedErr, anything else unchanged. The send
// methods call it only when the send failed, so a send that succeeds pays
// one nil check and no load.
func (m *Mailbox) failed(err error) error {
	switch err {
	case mailbox.ErrBackPressured:
		return m.refused()
	case mailbox.ErrClosed:
		return m.closedErr()
	}
	return err
}

// unlessClosed is failed for the waiting sends, whose own loop handles a
// full ring: it maps only a refusal as closed.
func (m *Mailbox) unlessClosed(err error) error {
	if err == mailbox.ErrClosed {
		return m.closedErr()
	}
	return err
}

func (m *Mailbox) refused() error {
	if (m.refusals.Add(1)-1)&(mailboxCheckEvery-1) != 0 {
		return mailbox.ErrBackPressured
	}
	if err := m.CheckConsumer(); err != nil {
		return err
	}
	return mailbox.ErrBackPressured
}

// Send is mailbox.Mailbox.Send: nil, mailbox.ErrBackPressured,
// mailbox.ErrClosed or mailbox.ErrTooLong, unwrapped and without
// allocation, a validation error, or, when the ring is full and the
// consumer heartbeat is stale, an error wrapping ErrConsumerDead, or, when
// the file's state word holds no state (corrupt), an error wrapping
// ErrCorrupt instead of mailbox.ErrClosed. Safe for concurrent use.
func (m *Mailbox) Send(typeID int32, payload []byte) error {
	if m.closed.Load() {
		return mailbox.ErrClosed
	}
	if err := m.mb.Send(typeID, payload); err != nil {
		return m.failed(err)
	}
	return nil
}

// SendParts is mailbox.Mailbox.SendParts with the dead-consumer check of
// Send.
func (m *Mailbox) SendParts(typeID int32, parts ...[]byte) error {
	if m.closed.Load() {
		return mailbox.ErrClosed
	}
	if err := m.mb.SendParts(typeID, parts...); err != nil {
		return m.failed(err)
	}
	return nil
}

// Claim is mailbox.Mailbox.Claim with the dead-consumer check of Send.
// The caller must Commit or Abort the claim on every path; a process that
// dies first leaves a torn message that the consumer drops after its
// unblock timeout.
func (m *Mailbox) Claim(typeID int32, length int) (mailbox.Claim, error) {
	if m.closed.Load() {
		return mailbox.Claim{}, mailbox.ErrClosed
	}
	c, err := m.mb.Claim(typeID, length)
	if err != nil {
		return c, m.failed(err)
	}
	return c, nil
}

// ClaimParts is mailbox.Mailbox.ClaimParts with the dead-consumer check of
// Send.
func (m *Mailbox) ClaimParts(typeID int32, lengths ...int) (mailbox.PartsClaim, error) {
	if m.closed.Load() {
		return mailbox.PartsClaim{}, mailbox.ErrClosed
	}
	c, err := m.mb.ClaimParts(typeID, lengths...)
	if err != nil {
		return c, m.failed(err)
	}
	return c, nil
}

// SendTyped is mailbox.SendTyped with the dead-consumer check of Send.
func SendTyped[E mailbox.Encoder](m *Mailbox, msg E) error {
	if m.closed.Load() {
		return mailbox.ErrClosed
	}
	if err := mailbox.SendTyped(m.mb, msg); err != nil {
		return m.failed(err)
	}
	return nil
}

// SendContext is mailbox.Mailbox.SendContext (it waits with a back-off
// idle strategy while the ring is full) that also stops waiting when the
// consumer heartbeat goes stale: it returns nil, ctx.Err(),
// mailbox.ErrClosed, an error wrapping ErrConsumerDead, or the error of an
// invalid message. A wait counts once in Stats.BackPressured, as in the
// mailbox package.
func (m *Mailbox) SendContext(ctx context.Context, typeID int32, payload []byte) error {
	if m.closed.Load() {
		return mailbox.ErrClosed
	}
	err := m.mb.Send(typeID, payload)
	if err != mailbox.ErrBackPressured {
		return m.unlessClosed(err)
	}
	one := [1][]byte{payload}
	b := mailboxBackoffs.Get().(*idle.BackoffStrategy)
	defer mailboxBackoffs.Put(b)
	return m.waitSend(ctx, b, typeID, one[:], nil)
}

// SendPartsContext is SendParts that waits as SendContext does.
func (m *Mailbox) SendPartsContext(ctx context.Context, typeID int32, parts ...[]byte) error {
	if m.closed.Load() {
		return mailbox.ErrClosed
	}
	err := m.mb.SendParts(typeID, parts...)
	if err != mailbox.ErrBackPressured {
		return m.unlessClosed(err)
	}
	b := mailboxBackoffs.Get().(*idle.BackoffStrategy)
	defer mailboxBackoffs.Put(b)
	return m.waitSend(ctx, b, typeID, parts, nil)
}

// mailboxBackoffs holds the idle strategies of Mailbox.SendContext (a
// strategy keeps state: each waiting call borrows one).
var mailboxBackoffs = sync.Pool{New: func() any { return idle.Backoff() }}

// waitSend retries a back-pressured send (from s, or the mailbox's own
// methods when s is nil) until it is accepted, ctx ends, the mailbox
// closes or the consumer is found dead. The first refusal was counted by
// the mailbox; the retries' counts are taken back, so a wait counts once.
func (m *Mailbox) waitSend(ctx context.Context, b *idle.BackoffStrategy, typeID int32, parts [][]byte, s *mailbox.Sender) error {
	bp := m.mb.Counters().BackPressured
	b.Reset()
	for i := 0; ; i++ {
		if i&(mailboxCheckEvery-1) == 0 {
			if err := m.CheckConsumer(); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		b.IdleOnce()
		if m.closed.Load() { // closed by this process while waiting
			return mailbox.ErrClosed
		}
		var err error
		if s != nil {
			err = s.SendParts(typeID, parts...)
		} else {
			err = m.mb.SendParts(typeID, parts...)
		}
		if err != mailbox.ErrBackPressured {
			return m.unlessClosed(err)
		}
		bp.Add(-1)
	}
}

// MailboxSender sends to a Mailbox from one goroutine: a mailbox.Sender
// (a key unique among all senders of the file, taken from the ring's
// correlation counter, and a message sequence, stamped on framed messages)
// with the dead-consumer check of Mailbox.Send and its own idle strategy,
// so that none of its methods allocates. Not safe for concurrent use.
type MailboxSender struct {
	m        *Mailbox
	s        *mailbox.Sender
	b        *idle.BackoffStrategy
	refusals int
}

// NewSender returns a MailboxSender for m.
func (m *Mailbox) NewSender() *MailboxSender {
	return &MailboxSender{m: m, s: m.mb.NewSender(), b: idle.Backoff()}
}

// Key returns the sender's key (see mailbox.Sender.Key).
func (s *MailboxSender) Key() int64 { return s.s.Key() }

// Sender returns the underlying mailbox.Sender (no dead-consumer check).
func (s *MailboxSender) Sender() *mailbox.Sender { return s.s }

// Mailbox returns the mailbox s sends to.
func (s *MailboxSender) Mailbox() *Mailbox { return s.m }

// failed is Mailbox.failed for this sender's own refusal count.
func (s *MailboxSender) failed(err error) error {
	if err == mailbox.ErrBackPressured {
		return s.refused()
	}
	return s.m.unlessClosed(err)
}

func (s *MailboxSender) refused() error {
	s.refusals++
	if (s.refusals-1)&(mailboxCheckEvery-1) != 0 {
		return mailbox.ErrBackPressured
	}
	if err := s.m.CheckConsumer(); err != nil {
		return err
	}
	return mailbox.ErrBackPressured
}

// Send is Mailbox.Send from this sender.
func (s *MailboxSender) Send(typeID int32, payload []byte) error {
	if s.m.closed.Load() {
		return mailbox.ErrClosed
	}
	if err := s.s.Send(typeID, payload); err != nil {
		return s.failed(err)
	}
	return nil
}

// SendParts is Mailbox.SendParts from this sender.
func (s *MailboxSender) SendParts(typeID int32, parts ...[]byte) error {
	if s.m.closed.Load() {
		return mailbox.ErrClosed
	}
	if err := s.s.SendParts(typeID, parts...); err != nil {
		return s.failed(err)
	}
	return nil
}

// Claim is Mailbox.Claim from this sender.
func (s *MailboxSender) Claim(typeID int32, length int) (mailbox.Claim, error) {
	if s.m.closed.Load() {
		return mailbox.Claim{}, mailbox.ErrClosed
	}
	c, err := s.s.Claim(typeID, length)
	if err != nil {
		return c, s.failed(err)
	}
	return c, nil
}

// ClaimParts is Mailbox.ClaimParts from this sender.
func (s *MailboxSender) ClaimParts(typeID int32, lengths ...int) (mailbox.PartsClaim, error) {
	if s.m.closed.Load() {
		return mailbox.PartsClaim{}, mailbox.ErrClosed
	}
	c, err := s.s.ClaimParts(typeID, lengths...)
	if err != nil {
		return c, s.failed(err)
	}
	return c, nil
}

// SendContext is Mailbox.SendContext from this sender, waiting with the
// sender's own idle strategy.
func (s *MailboxSender) SendContext(ctx context.Context, typeID int32, payload []byte) error {
	if s.m.closed.Load() {
		return mailbox.ErrClosed
	}
	err := s.s.Send(typeID, payload)
	if err != mailbox.ErrBackPressured {
		return s.m.unlessClosed(err)
	}
	one := [1][]byte{payload}
	return s.m.waitSend(ctx, s.b, typeID, one[:], s.s)
}

// SendPartsContext is Mailbox.SendPartsContext from this sender.
func (s *MailboxSender) SendPartsContext(ctx context.Context, typeID int32, parts ...[]byte) error {
	if s.m.closed.Load() {
		return mailbox.ErrClosed
	}
	err := s.s.SendParts(typeID, parts...)
	if err != mailbox.ErrBackPressured {
		return s.m.unlessClosed(err)
	}
	return s.m.waitSend(ctx, s.b, typeID, parts, s.s)
}
