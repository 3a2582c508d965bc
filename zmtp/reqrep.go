package zmtp

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"time"
)

// REQ and REP keep libzmq's strict alternation. A REQ sends a request to
// one peer (round robin over those connected), with an empty delimiter
// frame in front, then receives one reply, from that peer only, the
// delimiter taken off; replies from other peers, or without the
// delimiter, are dropped and counted (Stats.Dropped). A REP receives a
// request, keeps its envelope (the frames up to and including the first
// empty one, which routers in between put in front), hands out the rest,
// then sends the reply to the requester with the envelope in front. A
// call out of turn returns ErrState and changes nothing. Inside, both use
// a ROUTER's routing ids, so that a reply goes to, and is taken from, the
// right peer.
//
// One goroutine at a time drives a REQ or a REP. A REQ whose peer leaves
// before it replies stays waiting for that reply, as libzmq's does
// without ZMQ_REQ_RELAXED: close it and make another.

// reqRep is the alternation's state, under mu.
type reqRep struct {
	mu     sync.Mutex
	turn   bool     // REQ: a request is out, its reply due; REP: a request came, its reply due
	peer   []byte   // the routing id of the peer asked (REQ) or asking (REP)
	env    [][]byte // REP: the request's envelope, copied into envBuf
	envBuf []byte
	out    [][]byte // a send's frames
	next   uint32   // REQ: the round robin's position
}

// peerWait is how often a REQ's SendContext looks for a connected peer.
const peerWait = time.Millisecond

// sendStrict sends a REQ's request or a REP's reply; a REQ waits for a
// peer until ctx ends when wait is set.
func (s *Socket) sendStrict(ctx context.Context, wait bool, parts [][]byte) error {
	if s.closing.Load() {
		return ErrClosed
	}
	rr := &s.rr
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if s.typ == Req {
		if rr.turn {
			return fmt.Errorf("%w: REQ sends again before the reply", ErrState)
		}
		p, err := s.pickPeer(ctx, wait)
		if err != nil {
			return err
		}
		rr.out = append(append(rr.out[:0], nil), parts...)
		ok := p.out.TryPut(rr.out)
		clear(rr.out)
		if !ok {
			return ErrHWM
		}
		rr.peer, rr.turn = p.routeID, true
		return nil
	}
	if !rr.turn {
		return fmt.Errorf("%w: REP sends before a request", ErrState)
	}
	rr.turn = false
	rr.out = append(append(rr.out[:0], rr.env...), parts...)
	defer clear(rr.out)
	for _, p := range *s.peersV.Load() {
		if bytes.Equal(p.routeID, rr.peer) {
			if !p.out.TryPut(rr.out) {
				s.st.dropped.Add(1)
			}
			return nil
		}
	}
	// The requester is gone: its reply has no one to go to.
	s.st.dropped.Add(1)
	return nil
}

// pickPeer returns a REQ's next peer, round robin; without wait it
// does not wait for one (ErrNoPeer).
func (s *Socket) pickPeer(ctx context.Context, wait bool) (*peer, error) {
	var t *time.Timer
	defer func() {
		if t != nil {
			t.Stop()
		}
	}()
	for {
		peers := *s.peersV.Load()
		for range peers {
			p := peers[s.rr.next%uint32(len(peers))]
			s.rr.next++
			if !p.ended.Load() {
				return p, nil
			}
		}
		if !wait {
			return nil, ErrNoPeer
		}
		if t == nil {
			t = time.NewTimer(peerWait)
		} else {
			t.Reset(peerWait)
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, fmt.Errorf("%w: %w", ErrNoPeer, ctx.Err())
		case <-s.stopping:
			return nil, ErrClosed
		}
	}
}

func (s *Socket) recvStrict(ctx context.Context, m *Message) error {
	rr := &s.rr
	rr.mu.Lock()
	turn := rr.turn
	rr.mu.Unlock()
	if s.typ == Req && !turn {
		return fmt.Errorf("%w: REQ receives before a request", ErrState)
	}
	if s.typ == Rep && turn {
		return fmt.Errorf("%w: REP receives again before the reply", ErrState)
	}
	for {
		if err := s.recv(ctx, m); err != nil {
			return err
		}
		ps := m.s.parts // the routing id, then the message
		rr.mu.Lock()
		ok := s.takeStrict(ps, m)
		rr.mu.Unlock()
		if ok {
			return nil
		}
		s.st.dropped.Add(1)
	}
}

// takeStrict takes a received message apart (rr.mu held): false for one
// a REQ or REP drops.
func (s *Socket) takeStrict(ps [][]byte, m *Message) bool {
	rr := &s.rr
	if s.typ == Req {
		if len(ps) < 2 || !bytes.Equal(ps[0], rr.peer) || len(ps[1]) != 0 {
			return false
		}
		m.s.parts = ps[:copy(ps, ps[2:])]
		rr.turn = false
		return true
	}
	delim := -1
	for i := 1; i < len(ps); i++ {
		if len(ps[i]) == 0 {
			delim = i
			break
		}
	}
	if delim < 0 {
		return false
	}
	rr.peer = append(rr.peer[:0], ps[0]...)
	rr.envBuf = rr.envBuf[:0]
	for _, f := range ps[1 : delim+1] {
		rr.envBuf = append(rr.envBuf, f...)
	}
	rr.env = rr.env[:0]
	off := 0
	for _, f := range ps[1 : delim+1] {
		rr.env = append(rr.env, rr.envBuf[off:off+len(f):off+len(f)])
		off += len(f)
	}
	m.s.parts = ps[:copy(ps, ps[delim+1:])]
	rr.turn = true
	return true
}
