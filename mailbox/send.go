package mailbox

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/internal/mailboxframe"
	"github.com/dutyrt/duty/internal/pad"
	"github.com/dutyrt/duty/internal/record"
)

// Send sends payload as one message of type typeID (1..MaxTypeID). It never
// blocks: it returns nil (accepted), ErrBackPressured (full: nothing sent),
// ErrClosed or ErrTooLong (above MaxMessageSize), all unwrapped and without
// allocating, a validation error wrapping ErrTypeID, or, for a mailbox
// whose consumer is another process, an error wrapping ErrConsumerDead
// when the mailbox is full and its Host finds the consumer dead, or at
// once, full or not, after the Host proved the consumer's process gone
// (see Host.CheckConsumer; the error is then made once and returned
// again without allocating).
//
// A payload of up to MaxClaimLength bytes is one plain record; a larger one
// is fragmented into records published together (one claim, one
// publication) and reassembled by Drain. A fragmented send that stalled
// for the whole Config.UnblockTimeout while copying may find its claim
// released by the liveness check: it then returns an error wrapping
// ErrClaim (the message was not sent, and is counted torn). Safe for
// concurrent use.
func (m *Mailbox) Send(typeID int32, payload []byte) error {
	if typeID >= 1 && typeID <= MaxTypeID && m.w.state.Load() == stateOpen {
		// The common case, a small plain record: the record core's fast
		// path (the one ManyToOne.Write runs), in line, so that between the caller and the
		// stores into the ring there is no call frame of the mailbox's or
		// of the ring's: on a producer whose stores to ring lines wait for
		// the consumer's core, every spilled register and return address
		// is one more store in the queue (docs/ringbuf.md, "Fast paths";
		// docs/mailbox.md). fast is loaded before the claim's CAS: a load
		// after it cannot complete before the CAS does, and the record's
		// stores, whose address would depend on it, would wait for both.
		if fast := m.fast; fast != nil && len(payload) <= record.MaxPayload {
			size := record.Size(len(payload))
			if index, tail, ok := fast.ClaimFast(size); ok {
				// The state again, after the claim: see closedAfterClaim.
				if st := m.w.state.Load(); st != stateOpen {
					fast.AbortFast(index, size, tail+int64(size))
					return m.refusedClosed(st)
				}
				fast.PublishFast(index, record.Marker(len(payload), typeID), payload, tail+int64(size))
				m.rang()
				// crossing's test, in line: one compare with a word beside
				// fast, true once per eighth of the ring in a view that
				// only sends through a Host, never elsewhere.
				if holdsBoundary(index, size) >= m.probeSpan {
					m.crossed()
				}
				return nil
			}
		}
		if len(payload) <= m.plainMax {
			err := m.write(typeID, payload)
			if err == nil {
				return nil
			}
			return m.outcome(m.ringResult(err), nil)
		}
	}
	return m.outcome(m.send(typeID, payload, nil), nil)
}

// Send's fast path takes any payload of up to record.MaxPayload bytes
// as one plain record: the smallest mailbox's records carry more (a
// many-to-one ring's MaxMessageLength is an eighth of its capacity). This
// fails to compile otherwise.
const _ = uint(minCapacity/8 - record.MaxPayload)

// probeParts is how many parts of the ring a sender's view of a mailbox
// in shared memory divides it into: a send whose record holds the start
// of a part asks the Host about the consumer (crossed), so a sender
// learns of a dead consumer within two parts of sending after the
// consumer stopped, while the ring still has room if it had that much.
// (A part that starts inside padding, at the end of the ring, is not
// asked about: the record at index 0 after it is.)
const probeParts = 8

// crossed asks the Host whether the consumer lives, after a send whose
// record held the start of a part of the ring (probeSpan). The answer is
// not this send's (its message is in the ring: delivered if the consumer
// lives, counted in Stats.Stranded if not): a Host that proves the
// consumer's process gone raises the state word, which refuses the sends
// after it. The Host probes the process only when the consumer's position
// has not moved since it last looked, so a consumer that keeps up costs a
// clock read and a load per part.
//
//go:noinline
func (m *Mailbox) crossed() { _ = m.host.CheckConsumer() }

// holdsBoundary is at least span when the record of size bytes at index
// (its own index, header included: 0 <= index, index+size <= capacity)
// holds a multiple of span, a power of two: index <= k*span <
// index+size. (index-1) and (index+size-1) then differ in a bit of span
// or above; for index 0, -1 has every bit set. It is never math.MaxUint
// (that needs index+size-1 == -index), so a probeSpan of math.MaxUint
// never passes.
func holdsBoundary(index, size int) uint { return uint(index-1) ^ uint(index+size-1) }

// crossing calls crossed when the record of size bytes at index holds the
// start of a part of the ring. Small enough to inline: one compare, as in
// Send.
func (m *Mailbox) crossing(index, size int) {
	if holdsBoundary(index, size) >= m.probeSpan {
		m.crossed()
	}
}

// consumerCheckEvery is how many back-pressured sends pass between two
// consumer checks of a Host (Host.CheckConsumer): the first refusal
// checks, then one in consumerCheckEvery. A power of two.
const consumerCheckEvery = 16

// outcome finishes every send that was not accepted at once: a refusal
// for lack of room is counted (Stats.BackPressured) and, with a Host, the
// first refusal and one in consumerCheckEvery ask it whether the consumer
// still drains (ErrConsumerDead otherwise). s is the Sender whose own count
// paces those checks, or nil for the Mailbox's methods. Any other result is
// returned as it is.
func (m *Mailbox) outcome(err error, s *Sender) error {
	if err != ErrBackPressured {
		return err
	}
	m.w.backPressured.Add(1)
	if m.host == nil {
		return ErrBackPressured
	}
	var n int64
	if s != nil {
		s.refusals++
		n = s.refusals
	} else {
		n = m.refusals.Add(1)
	}
	if (n-1)&(consumerCheckEvery-1) != 0 {
		return ErrBackPressured
	}
	if err := m.host.CheckConsumer(); err != nil {
		return err
	}
	return ErrBackPressured
}

// SendParts sends parts as one multipart message of type typeID: the
// receiver gets all of them together, in order, or nothing; no other
// sender's message falls between them. parts is only read during the call:
// pass a caller-owned slice (SendParts(t, parts...)) or the parts inline
// (SendParts(t, a, b)); neither allocates. Outcomes as for Send, plus
// ErrArgument (wrapped) for no part or more than MaxParts. A message of one
// part is sent as by Send.
func (m *Mailbox) SendParts(typeID int32, parts ...[]byte) error {
	return m.outcome(m.sendParts(typeID, parts, nil), nil)
}

// SendContext is Send that waits, with a back-off idle strategy (spin,
// yield, then sleeps of 1 µs doubling to 1 ms), while the mailbox is full.
// It returns nil once the message is accepted, ctx.Err() (unwrapped) when
// ctx ends first, ErrClosed when the mailbox closes, an error wrapping
// ErrConsumerDead when a Host finds the consumer dead while it waits, or
// the error of an invalid message at once. A wait counts once in
// Stats.BackPressured.
func (m *Mailbox) SendContext(ctx context.Context, typeID int32, payload []byte) error {
	err := m.send(typeID, payload, nil)
	if err != ErrBackPressured {
		return err
	}
	b := backoffs.Get().(idle.Strategy)
	defer backoffs.Put(b)
	return m.waitSend(ctx, b, typeID, payload, nil, nil)
}

// SendPartsContext is SendParts that waits as SendContext does.
func (m *Mailbox) SendPartsContext(ctx context.Context, typeID int32, parts ...[]byte) error {
	err := m.sendParts(typeID, parts, nil)
	if err != ErrBackPressured {
		return err
	}
	b := backoffs.Get().(idle.Strategy)
	defer backoffs.Put(b)
	return m.waitSend(ctx, b, typeID, nil, parts, nil)
}

// backoffs holds the idle strategies of Mailbox.SendContext: any goroutine
// may call it, and a strategy keeps state, so each waiting call borrows
// one. A Sender owns its own.
var backoffs = sync.Pool{New: func() any { return idle.Backoff() }}

// waitSend retries a back-pressured send (of payload, or of parts when
// parts is non-nil) until it is accepted, ctx ends, the mailbox closes or
// a Host finds the consumer dead (asked before the first retry, then every
// consumerCheckEvery retries).
func (m *Mailbox) waitSend(ctx context.Context, b idle.Strategy, typeID int32, payload []byte, parts [][]byte, s *Sender) error {
	m.w.backPressured.Add(1)
	b.Reset()
	for i := 0; ; i++ {
		if m.host != nil && i&(consumerCheckEvery-1) == 0 {
			if err := m.host.CheckConsumer(); err != nil {
				return err
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		b.IdleOnce()
		var err error
		if parts != nil {
			err = m.sendParts(typeID, parts, s)
		} else {
			err = m.send(typeID, payload, s)
		}
		if err != ErrBackPressured {
			return err
		}
	}
}

// send is Send without the accounting of outcome, for s (nil: the
// mailbox's per-message keys).
func (m *Mailbox) send(typeID int32, payload []byte, s *Sender) error {
	if typeID < 1 || typeID > MaxTypeID {
		return errTypeID(typeID)
	}
	// The state is loaded before the claim, so that a closed mailbox
	// refuses without claiming, and again after it (closedAfterClaim).
	if st := m.w.state.Load(); st != stateOpen {
		return m.refusedClosed(st)
	}
	if len(payload) <= m.plainMax {
		if err := m.write(typeID, payload); err != nil {
			return m.ringResult(err)
		}
		return nil
	}
	one := [1][]byte{payload}
	return m.sendFramed(typeID, one[:], s)
}

func (m *Mailbox) sendParts(typeID int32, parts [][]byte, s *Sender) error {
	if len(parts) == 1 {
		return m.send(typeID, parts[0], s)
	}
	if typeID < 1 || typeID > MaxTypeID {
		return errTypeID(typeID)
	}
	if len(parts) == 0 || len(parts) > m.maxParts {
		return fmt.Errorf("%w: %d parts (1..%d)", ErrArgument, len(parts), m.maxParts)
	}
	if st := m.w.state.Load(); st != stateOpen {
		return m.refusedClosed(st)
	}
	return m.sendFramed(typeID, parts, s)
}

// write sends payload as one plain record, sealed in a checksummed
// mailbox. Errors are the ring's (ringResult maps them) or, for a mailbox
// closed while it claimed, the state's (refusedClosed).
func (m *Mailbox) write(typeID int32, payload []byte) error {
	if m.checksum {
		return m.writeSealed(typeID, payload)
	}
	if len(payload) <= record.MaxPayload {
		size := record.Size(len(payload))
		if index, tail, ok := m.prod.ClaimFast(size); ok {
			if st := m.w.state.Load(); st != stateOpen {
				m.prod.AbortFast(index, size, tail+int64(size))
				return m.refusedClosed(st)
			}
			m.prod.PublishFast(index, record.Marker(len(payload), typeID), payload, tail+int64(size))
			m.rang()
			m.crossing(index, size)
			return nil
		}
	}
	c, err := m.prod.TryClaim(typeID, len(payload))
	if err != nil {
		return err
	}
	if err := m.closedAfterClaim(c.Index); err != nil {
		return err
	}
	copy(c.Payload, payload)
	if err := m.prod.Commit(c.Index); err != nil {
		return fmt.Errorf("%w: %w", ErrClaim, err)
	}
	m.rang()
	m.crossing(c.Index-record.HeaderLength, record.Size(len(payload)))
	return nil
}

// closedAfterClaim is Close's protocol on the sending side: after its
// claim, a send loads the state again, and if the mailbox was closed
// meanwhile it aborts the claim (the consumer skips it as padding) and
// returns why. The claim's compare-and-swap of the tail and this load, and
// Close's compare-and-swap of the state and the consumer's later load of
// the tail, are sequentially consistent: either this load sees the close
// (the send is refused), or the consumer's load of the tail after it saw
// the close sees this claim (and waits for it). So once the consumer has
// seen the mailbox closed and then empty, no send can still land in it
// (actor's end of stream relies on it).
func (m *Mailbox) closedAfterClaim(index int) error {
	st := m.w.state.Load()
	if st == stateOpen {
		return nil
	}
	_ = m.prod.Abort(index)
	return m.refusedClosed(st)
}

// writeSealed is write for a checksummed mailbox: claim, copy, seal,
// commit.
func (m *Mailbox) writeSealed(typeID int32, payload []byte) error {
	typeID |= checkedFlag
	c, err := m.prod.TryClaim(typeID, checksumLength+len(payload))
	if err != nil {
		return err
	}
	if err := m.closedAfterClaim(c.Index); err != nil {
		return err
	}
	pos := m.claimPosition(c.Index - record.HeaderLength)
	copy(c.Payload[checksumLength:], payload)
	mailboxframe.Seal(c.Payload, typeID, pos)
	if err := m.prod.Commit(c.Index); err != nil {
		return fmt.Errorf("%w: %w", ErrClaim, err)
	}
	m.rang()
	m.crossing(c.Index-record.HeaderLength, record.Size(len(c.Payload)))
	return nil
}

// claimPosition returns the ring position of the record at index that
// this sender claimed a moment ago (mailboxframe.ClaimPosition, which
// says why it is read right after the claim).
func (m *Mailbox) claimPosition(index int) int64 {
	return mailboxframe.ClaimPosition(m.trailer.Tail.Load(), m.capacity, index)
}

// checkFlag is the flag of every record of this mailbox's: checkedFlag in
// a checksummed mailbox, 0 otherwise.
func (m *Mailbox) checkFlag() int32 {
	if m.checksum {
		return checkedFlag
	}
	return 0
}

// refusedClosed counts a send refused because the state word st is not
// open and returns why (stateErr): ErrClosed, ErrConsumerDead (counted
// in Stats.BackPressured, with the other sends a dead consumer refused),
// or corruption. A send to a detached mailbox is not counted: its
// statistics stay as they were when its Host took its memory away.
func (m *Mailbox) refusedClosed(st int64) error {
	switch st {
	case stateDetached:
	case stateConsumerDead:
		m.w.backPressured.Add(1)
	default:
		m.w.refusedClosed.Add(1)
	}
	return m.stateErr(st)
}

// sendFramed sends parts as one framed message in one batch.
func (m *Mailbox) sendFramed(typeID int32, parts [][]byte, s *Sender) error {
	body := mailboxframe.BodyLength(parts)
	if body > m.lay.MaxMessage {
		return ErrTooLong
	}
	count, size := m.lay.Records(body)
	h := mailboxframe.Header{Count: uint32(count), BodyLen: uint32(body), Parts: uint32(len(parts))}
	w := mailboxframe.NewBodyWriter(parts)
	over, recordType := m.lay.Over, framedFlag|m.checkFlag()|typeID
	if count == 1 {
		// One record: a plain claim is lighter than a batch.
		c, err := m.prod.TryClaim(recordType, over+frameHeaderLength+body)
		if err != nil {
			return m.ringResult(err)
		}
		if err := m.closedAfterClaim(c.Index); err != nil {
			return err
		}
		var pos int64
		if m.checksum {
			pos = m.claimPosition(c.Index - record.HeaderLength)
		}
		m.stamp(&h, s)
		mailboxframe.PutHeader(c.Payload[over:], &h)
		w.Fill(c.Payload[over+frameHeaderLength:])
		if m.checksum {
			mailboxframe.Seal(c.Payload, recordType, pos)
		}
		if err := m.prod.Commit(c.Index); err != nil {
			return fmt.Errorf("%w: %w", ErrClaim, err)
		}
		m.rang()
		m.crossing(c.Index-record.HeaderLength, record.Size(len(c.Payload)))
		return nil
	}
	b, err := m.prod.TryClaimBatch(size)
	if err != nil {
		return m.ringResult(err)
	}
	if st := m.w.state.Load(); st != stateOpen { // as closedAfterClaim
		_ = m.prod.AbortBatch(b)
		return m.refusedClosed(st)
	}
	m.stamp(&h, s)
	first, err := mailboxframe.FillBatch(&b, &m.prod.Log, m.trailer.Tail, &m.lay, recordType, &h, &w, count)
	if err != nil {
		_ = m.prod.AbortBatch(b)
		return fmt.Errorf("%w: %w", ErrClaim, err)
	}
	if err := m.prod.CommitBatch(b); err != nil {
		return fmt.Errorf("%w: %w", ErrClaim, err)
	}
	m.rang()
	m.crossing(first, b.Len())
	return nil
}

// stamp sets the sender key and sequence of a framed message: s's (and
// s's sequence moves on), or a fresh key for the Mailbox's own methods.
func (m *Mailbox) stamp(h *mailboxframe.Header, s *Sender) {
	if s != nil {
		h.Key, h.Seq = s.key, s.seq
		s.seq++
		return
	}
	h.Key = m.newKey()
}

// newKey returns a fresh sender key: the ring's next correlation id plus
// one, so that no framed message has key 0, the key of a plain message. Unique among all senders of the ring, in
// every process, as the correlation counter is.
func (m *Mailbox) newKey() int64 { return m.trailer.Correlation.Add(1) }

// ringResult maps a ring error to the mailbox's outcome.
func (m *Mailbox) ringResult(err error) error {
	switch err {
	case nil:
		return nil
	case record.ErrFull:
		return ErrBackPressured
	case ErrClosed:
		return err // closedAfterClaim's
	}
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrClaim) {
		return err // the state word's (closedAfterClaim), a claim released under its sender (write)
	}
	if errors.Is(err, record.ErrTooLong) {
		return ErrTooLong
	}
	return fmt.Errorf("%w: %w", ErrCorrupt, err)
}

func errTypeID(typeID int32) error {
	return fmt.Errorf("%w: type id %d (1..%d)", ErrTypeID, typeID, MaxTypeID)
}

// Claim is space for one plain message claimed by Mailbox.Claim: fill
// Payload, then call exactly one of Commit or Abort, on every path. Until
// then the receiver stops at the claim (later messages wait behind it);
// a claim never completed is released by the liveness check after
// Config.UnblockTimeout and counted as torn.
type Claim struct {
	mb     *Mailbox     // the mailbox (its producer completes the claim, its doorbell rings); nil once completed
	c      record.Claim // its Payload: the message's space, after the checksum prefix of a sealed record
	sealed bool         // a checksummed mailbox's claim, sealed at Commit
	pos    int64        // a sealed claim's ring position, read when it was claimed
}

// Payload returns the claimed space, aliasing the ring. It is valid until
// Commit or Abort, after which it is nil.
func (c *Claim) Payload() []byte { return c.c.Payload }

// Commit publishes the message. A second Commit or Abort of the same Claim
// returns ErrClaim. (A copy of a Claim does not know that the original was
// completed: once the space has been reused by another sender's claim, a
// Commit through the copy would publish that claim. Complete a claim
// through one value.)
func (c *Claim) Commit() error {
	m := c.mb
	if m == nil {
		return fmt.Errorf("%w: zero or completed Claim", ErrClaim)
	}
	if c.sealed {
		// Sealed only while the record is still this claim (its marker
		// in place): a sender that stalled past the unblock timeout must
		// not seal what another sender has written there since. The
		// whole payload starts checksumLength bytes before the message's
		// space (the claim's index is its payload's).
		at := c.c.Index - checksumLength - record.HeaderLength
		if _, _, err := m.prod.OpenClaim(at + record.HeaderLength); err != nil {
			return fmt.Errorf("%w: %w", ErrClaim, err)
		}
		mailboxframe.Seal(m.prod.Payload(at, checksumLength+len(c.c.Payload)), *m.prod.TypeAt(at), c.pos)
	}
	at, size := c.c.Index-c.over()-record.HeaderLength, record.Size(c.over()+len(c.c.Payload))
	if err := m.prod.Commit(c.c.Index - c.over()); err != nil {
		return fmt.Errorf("%w: %w", ErrClaim, err)
	}
	*c = Claim{} // completed: the index may soon be another sender's claim
	m.rang()
	m.crossing(at, size)
	return nil
}

// Abort discards the claim: the receiver skips it. A second Commit or
// Abort returns ErrClaim (see Commit).
func (c *Claim) Abort() error {
	if c.mb == nil {
		return fmt.Errorf("%w: zero or completed Claim", ErrClaim)
	}
	if err := c.mb.prod.Abort(c.c.Index - c.over()); err != nil {
		return fmt.Errorf("%w: %w", ErrClaim, err)
	}
	*c = Claim{}
	return nil
}

// over is how far the message's space starts after the record's payload:
// the checksum prefix of a sealed record.
func (c *Claim) over() int {
	if c.sealed {
		return checksumLength
	}
	return 0
}

// newClaim is the Claim of the record core's claim c, whose payload starts
// with over bytes before the message's space (the checksum prefix).
func (m *Mailbox) newClaim(c record.Claim) Claim {
	if !m.checksum {
		return Claim{mb: m, c: c}
	}
	pos := m.claimPosition(c.Index - record.HeaderLength)
	c.Index += checksumLength
	c.Payload = c.Payload[checksumLength:]
	return Claim{mb: m, c: c, sealed: true, pos: pos}
}

// Claim claims space for a plain message of length bytes (at most
// MaxClaimLength) to be written in place: the zero-copy send. Outcomes as
// for Send, plus ErrArgument (wrapped) for a negative length.
func (m *Mailbox) Claim(typeID int32, length int) (Claim, error) { return m.claim(typeID, length, nil) }

func (m *Mailbox) claim(typeID int32, length int, s *Sender) (Claim, error) {
	if typeID < 1 || typeID > MaxTypeID {
		return Claim{}, errTypeID(typeID)
	}
	if length < 0 {
		return Claim{}, fmt.Errorf("%w: negative length %d", ErrArgument, length)
	}
	if length > m.plainMax {
		return Claim{}, ErrTooLong
	}
	if st := m.w.state.Load(); st != stateOpen {
		return Claim{}, m.refusedClosed(st)
	}
	c, err := m.prod.TryClaim(m.checkFlag()|typeID, m.lay.Over+length)
	if err != nil {
		return Claim{}, m.outcome(m.ringResult(err), s)
	}
	if err := m.closedAfterClaim(c.Index); err != nil {
		return Claim{}, err
	}
	return m.newClaim(c), nil
}

// PartsClaim is space for one multipart message claimed by ClaimParts,
// with the part lengths already written: fill each Part, then call exactly
// one of Commit or Abort (see Claim). Write through Part only: the Payload
// it has from Claim is the whole record (the frame header, then each part
// behind its length prefix), and a write there corrupts the frame.
type PartsClaim struct {
	Claim
	n int
}

// Part returns the space of part i, aliasing the ring, valid until Commit
// or Abort. It panics if i is out of range, as indexing does, and after
// Commit or Abort.
func (p *PartsClaim) Part(i int) []byte {
	if i < 0 || i >= p.n {
		panic(fmt.Sprintf("mailbox: part %d of %d", i, p.n))
	}
	if p.mb == nil {
		panic("mailbox: Part of a zero or completed PartsClaim")
	}
	return mailboxframe.Part(p.c.Payload[frameHeaderLength:], p.n, i)
}

// ClaimParts claims space for a multipart message whose parts have the
// given lengths, to be written in place. The whole message must fit in one
// record: the body (the lengths plus partLengthPrefix bytes each, or the
// single length for one part) must not exceed MaxPartsClaimLength, or
// ErrTooLong is returned. Other outcomes as for SendParts.
func (m *Mailbox) ClaimParts(typeID int32, lengths ...int) (PartsClaim, error) {
	return m.claimParts(typeID, lengths, nil)
}

func (m *Mailbox) claimParts(typeID int32, lengths []int, s *Sender) (PartsClaim, error) {
	if typeID < 1 || typeID > MaxTypeID {
		return PartsClaim{}, errTypeID(typeID)
	}
	n := len(lengths)
	if n == 0 || n > m.maxParts {
		return PartsClaim{}, fmt.Errorf("%w: %d parts (1..%d)", ErrArgument, n, m.maxParts)
	}
	body := 0
	for _, l := range lengths {
		if l < 0 {
			return PartsClaim{}, fmt.Errorf("%w: part of %d bytes", ErrArgument, l)
		}
		if l > m.lay.MaxFrag {
			return PartsClaim{}, ErrTooLong
		}
		body += l
	}
	if n > 1 {
		body += n * partLengthPrefix
	}
	if body > m.lay.MaxFrag || body > m.lay.MaxMessage {
		return PartsClaim{}, ErrTooLong
	}
	if st := m.w.state.Load(); st != stateOpen {
		return PartsClaim{}, m.refusedClosed(st)
	}
	c, err := m.prod.TryClaim(framedFlag|m.checkFlag()|typeID, m.lay.Over+frameHeaderLength+body)
	if err != nil {
		return PartsClaim{}, m.outcome(m.ringResult(err), s)
	}
	if err := m.closedAfterClaim(c.Index); err != nil {
		return PartsClaim{}, err
	}
	mc := m.newClaim(c)
	h := mailboxframe.Header{Count: 1, BodyLen: uint32(body), Parts: uint32(n)}
	m.stamp(&h, s)
	mailboxframe.PutHeader(mc.c.Payload, &h)
	mailboxframe.PutPartLengths(mc.c.Payload[frameHeaderLength:], lengths)
	return PartsClaim{Claim: mc, n: n}, nil
}

// Sender sends to a mailbox from one goroutine. It carries a key unique
// among the senders of the ring (taken from the ring's correlation
// counter, so unique across processes too) and a message sequence, which
// stamp its framed messages, and its own idle strategy for SendContext, so
// that none of its methods allocates. Use one Sender per goroutine; it is
// not safe for concurrent use. Mailbox's own send methods are safe for
// concurrent use and take a fresh key per framed message instead.
type Sender struct {
	// Padded: senders of different goroutines are often allocated side by
	// side, and seq is written on every framed send.
	_        pad.Pair
	mb       *Mailbox
	key      int64
	seq      uint64
	refusals int64 // back-pressured sends, pacing a Host's consumer checks
	idle     idle.Strategy
	_        pad.Pair
}

// NewSender returns a Sender for m.
func (m *Mailbox) NewSender() *Sender {
	return &Sender{mb: m, key: m.newKey(), idle: idle.Backoff()}
}

// Send is Mailbox.Send from this sender.
func (s *Sender) Send(typeID int32, payload []byte) error {
	return s.mb.outcome(s.mb.send(typeID, payload, s), s)
}

// SendParts is Mailbox.SendParts from this sender.
func (s *Sender) SendParts(typeID int32, parts ...[]byte) error {
	return s.mb.outcome(s.mb.sendParts(typeID, parts, s), s)
}

// SendContext is Mailbox.SendContext from this sender, waiting with the
// sender's own back-off strategy.
func (s *Sender) SendContext(ctx context.Context, typeID int32, payload []byte) error {
	err := s.mb.send(typeID, payload, s)
	if err != ErrBackPressured {
		return err
	}
	return s.mb.waitSend(ctx, s.idle, typeID, payload, nil, s)
}

// SendPartsContext is Mailbox.SendPartsContext from this sender.
func (s *Sender) SendPartsContext(ctx context.Context, typeID int32, parts ...[]byte) error {
	err := s.mb.sendParts(typeID, parts, s)
	if err != ErrBackPressured {
		return err
	}
	return s.mb.waitSend(ctx, s.idle, typeID, nil, parts, s)
}

// Claim is Mailbox.Claim from this sender (plain messages carry no sender
// key).
func (s *Sender) Claim(typeID int32, length int) (Claim, error) {
	return s.mb.claim(typeID, length, s)
}

// ClaimParts is Mailbox.ClaimParts from this sender.
func (s *Sender) ClaimParts(typeID int32, lengths ...int) (PartsClaim, error) {
	return s.mb.claimParts(typeID, lengths, s)
}
