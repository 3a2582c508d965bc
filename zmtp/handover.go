package zmtp

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/internal/zmtpqueue"
	"github.com/dutyrt/duty/internal/zmtpwire"
)

// The read side of a peer's connection (its Decoder and the reads of its
// net.Conn) has one owner at a time (docs/zmtp.md, "Receiving without a
// hand-off"): the peer's reader goroutine, or a receiver of the socket
// (Recv or Drain) when the socket has one peer and nothing is queued.
// The owner alone reads and decodes; the state changes with atomics, so
// the decoder's bytes pass from one owner to the next through them (a
// release store, an acquire load or CAS, as sync/atomic's operations
// are, on arm64 too).
const (
	ownReader int32 = iota // the peer's reader goroutine (at first)
	ownFree                // nobody: the next receiver takes it, or the reader after readGrace
	ownRecv                // a receiver of the socket
)

// readGrace is how long the reader goroutine leaves a read side that a
// receiver gave up free before it takes it back: a receiver that calls
// again within it keeps reading the connection itself, one that does not
// leaves the heartbeats and the receive queue to the reader.
const readGrace = time.Millisecond

// handover is the socket's side of the read-side hand-over.
type handover struct {
	direct  atomic.Pointer[peer] // the peer a receiver reads itself, or nil
	waiters atomic.Int32         // receivers waiting in Recv

	// The context of the receivers' last blocking read, watched so that
	// its end interrupts the read; kept across calls with the same
	// context so that a loop of Recv allocates nothing.
	mu   sync.Mutex
	done <-chan struct{}
	stop func() bool
}

// takeDirect returns the socket's one peer with its read side taken by
// the caller, a receiver that found nothing queued (rc.mu held), or nil.
// A Recv (blocking) also asks the reader goroutine to give the read side
// up after its next delivery; a Drain does not, and does not count as a
// receiver's use for readGrace: a socket only drained is read by its
// reader goroutine.
func (s *Socket) takeDirect(blocking bool) *peer {
	if s.sink != nil {
		return nil
	}
	peers := *s.peersV.Load()
	if len(peers) != 1 {
		return nil
	}
	p := peers[0]
	if !p.rown.CompareAndSwap(ownFree, ownRecv) {
		if blocking && p.rown.Load() == ownReader && p.rwant.CompareAndSwap(false, true) {
			// Ask the reader to stand down, and end the read it may be
			// blocked in: it gives the read side up (yieldRead) and wakes
			// this receiver, a waiter, to take it.
			p.rd.Interrupt()
		}
		return nil
	}
	if blocking {
		p.rgen.Add(1)
	}
	s.ho.direct.Store(p)
	// A message another peer's reader queued before the store above would
	// wait behind a blocking read: look again. One queued after it
	// interrupts the read (peer.readBatch loads direct after its commit).
	if s.in.Avail.Load() > 0 || p.ended.Load() || len(*s.peersV.Load()) != 1 {
		s.release(p)
		return nil
	}
	return p
}

// release gives p's read side up: free for the next receiver, or for the
// reader goroutine, woken if it waits for it.
func (s *Socket) release(p *peer) {
	s.ho.direct.CompareAndSwap(p, nil)
	p.rown.Store(ownFree)
	if p.rpark.Load() && p.rpark.CompareAndSwap(true, false) {
		zmtpqueue.Signal(p.rtoken)
	}
	if s.ho.waiters.Load() > 0 {
		// A receiver waiting in Recv may take the read side now.
		zmtpqueue.Signal(s.in.NotEmpty)
	}
}

// interruptDirect interrupts the blocking read of a receiver.
func (s *Socket) interruptDirect() {
	if p := s.ho.direct.Load(); p != nil {
		p.rd.Interrupt()
	}
}

// watch makes the end of ctx interrupt the receivers' blocking read.
func (s *Socket) watch(ctx context.Context) {
	done := ctx.Done()
	if done == nil {
		return
	}
	h := &s.ho
	h.mu.Lock()
	if h.done != done {
		if h.stop != nil {
			h.stop()
		}
		h.done = done
		h.stop = context.AfterFunc(ctx, s.interruptDirect)
	}
	h.mu.Unlock()
}

// unwatch drops the watch of the last context (Close).
func (s *Socket) unwatch() {
	h := &s.ho
	h.mu.Lock()
	if h.stop != nil {
		h.stop()
		h.stop, h.done = nil, nil
	}
	h.mu.Unlock()
}

// recvDirect receives into m from p's connection, whose read side the
// caller took (takeDirect), and gives the read side up before it returns.
// It reports whether it is done: false after an interrupt or the end of
// the peer, for Recv to look again.
func (s *Socket) recvDirect(ctx context.Context, p *peer, m *Message) (bool, error) {
	if ctx.Done() != nil {
		if err := ctx.Err(); err != nil {
			s.release(p)
			return true, err
		}
		s.watch(ctx)
	}
	for {
		k, err := p.dec.Next()
		if err != nil {
			if err == zmtpwire.ErrInterrupted {
				p.rd.Clear()
				s.release(p)
				if err := ctx.Err(); err != nil {
					return true, err
				}
				return false, nil
			}
			p.end(err)
			s.release(p)
			return false, nil
		}
		if k == zmtpwire.KindCommand {
			if err := p.onCommand(p.dec.Command()); err != nil {
				p.end(err)
				s.release(p)
				return false, nil
			}
			continue
		}
		parts := p.dec.Parts()
		if s.typ == Sub && !s.wants(parts[0]) {
			s.st.unsubscribed.Add(1)
			continue
		}
		m.s.copyParts(p.routeID, parts)
		s.release(p)
		s.st.received.Add(1)
		return true, nil
	}
}

// drainDirect hands up to limit messages already in p's decoder buffer to
// h, parts aliasing the buffer (no copy), without reading; the caller
// took p's read side (takeDirect), and it is given up before the return.
func (s *Socket) drainDirect(p *peer, h func(parts [][]byte), limit int) int {
	rc := &s.rc
	n := 0
	for n < limit {
		if s.typ == Pull || s.typ == Dealer || s.typ == Pair {
			if raw, k := p.dec.NextShorts(limit - n); k > 0 {
				for off := 0; off < len(raw); {
					end := off + zmtpwire.ShortHeader + int(raw[off+1])
					rc.one[0] = raw[off+zmtpwire.ShortHeader : end : end]
					h(rc.one[:])
					off = end
				}
				rc.one[0] = nil
				n += k
				continue
			}
		}
		k, ok, err := p.dec.NextBuffered()
		if err != nil {
			p.end(err)
			break
		}
		if !ok {
			break
		}
		if k == zmtpwire.KindCommand {
			if err := p.onCommand(p.dec.Command()); err != nil {
				p.end(err)
				break
			}
			continue
		}
		parts := p.dec.Parts()
		if s.typ == Sub && !s.wants(parts[0]) {
			s.st.unsubscribed.Add(1)
			continue
		}
		if s.typ.routed() {
			rc.routed = append(append(rc.routed[:0], p.routeID), parts...)
			parts = rc.routed
		}
		h(parts)
		clear(rc.routed)
		n++
	}
	s.st.received.Add(uint64(n))
	s.release(p)
	return n
}

// awaitRead waits until the reader goroutine owns p's read side again: at
// once when the peer ended, after readGrace without a blocking receiver
// when it is free, when a receiver releases it otherwise.
func (p *peer) awaitRead() {
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		switch p.rown.Load() {
		case ownReader:
			return
		case ownFree:
			gen := p.rgen.Load()
			if !p.ended.Load() {
				if t == nil {
					t = time.NewTimer(readGrace)
				} else {
					t.Reset(readGrace)
				}
				select {
				case <-t.C:
				case <-p.done:
				case <-p.rtoken:
				}
			}
			if (p.ended.Load() || p.rgen.Load() == gen) && p.rown.CompareAndSwap(ownFree, ownReader) {
				return
			}
		case ownRecv:
			// Park until the receiver releases (it reads with no timer of
			// ours; after the peer's end its read fails at once). The
			// receiver stores ownFree, then loads rpark; this goroutine
			// stores rpark, then loads the owner: one of them sees the
			// other.
			p.rpark.Store(true)
			if p.rown.Load() == ownRecv {
				<-p.rtoken
			}
			p.rpark.Store(false)
		}
	}
}

// yieldRead gives the read side to a receiver that asked for it, when the
// socket has p as its only peer; it reports whether it did.
func (p *peer) yieldRead() bool {
	p.rwant.Store(false)
	s := p.s
	if s.sink != nil || len(*s.peersV.Load()) != 1 {
		return false
	}
	p.rown.Store(ownFree)
	if s.ho.waiters.Load() > 0 {
		zmtpqueue.Signal(s.in.NotEmpty)
	}
	return true
}
