package mailbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/internal/countertype"
)

// liveCounters are a mailbox's statistics published as counters
// (Config.Counters), written by its consumer at each heartbeat.
type liveCounters struct {
	delivered, bytes, refusedClosed, backPressured *counters.Counter
	torn, corrupt, discarded, maxDepth, depth      *counters.Counter
	heartbeat                                      *counters.Counter
	last                                           int64 // epoch ms of the last publication
}

func newLiveCounters(mgr *counters.Manager, name string) (*liveCounters, error) {
	l := &liveCounters{}
	var pid [8]byte // the heartbeat's key: whose heartbeat it is
	binary.LittleEndian.PutUint64(pid[:], uint64(os.Getpid()))
	specs := []struct {
		dst   **counters.Counter
		label string
		typ   int32
	}{
		{&l.delivered, "delivered: " + name, countertype.Delivered},
		{&l.bytes, "consumed-bytes: " + name, countertype.ConsumedBytes},
		{&l.refusedClosed, "refused-closed: " + name, countertype.RefusedClosed},
		{&l.backPressured, "back-pressure: " + name, countertype.BackPressureEvents},
		{&l.torn, "unblocked-claims: " + name, countertype.UnblockedClaims},
		{&l.corrupt, "corrupt-records: " + name, countertype.CorruptRecords},
		{&l.discarded, "discarded: " + name, countertype.Discarded},
		{&l.maxDepth, "max-depth: " + name, countertype.MaxDepth},
		{&l.depth, "mailbox-depth: " + name, countertype.MailboxDepth},
		{&l.heartbeat, fmt.Sprintf("heartbeat: mailbox %s consumer pid=%d", name, os.Getpid()), countertype.Heartbeat},
	}
	for _, s := range specs {
		var key []byte
		if s.typ == countertype.Heartbeat {
			key = pid[:]
		}
		c, err := mgr.Allocate(s.label, s.typ, key)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("mailbox %s: counter %q: %w", name, s.label, err), l.close())
		}
		*s.dst = c
	}
	return l, nil
}

// publish stores the statistics into the counters. now is the consumer
// heartbeat's time; the depth is the backlog at this moment, before the
// drain that follows the heartbeat.
func (l *liveCounters) publish(m *Mailbox, now int64) {
	l.last = now
	w := m.w
	l.delivered.Set(w.delivered.Load())
	l.bytes.Set(m.trailer.Head.Load())
	l.refusedClosed.Set(w.refusedClosed.Load())
	l.backPressured.Set(w.backPressured.Load())
	l.torn.Set(w.torn.Load())
	l.corrupt.Set(w.corrupt.Load())
	l.discarded.Set(w.discarded.Load())
	l.maxDepth.Set(w.maxDepth.Load())
	l.depth.Set(int64(m.size()))
	l.heartbeat.Set(now)
}

func (l *liveCounters) close() error {
	var errs []error
	for _, c := range []*counters.Counter{l.delivered, l.bytes, l.refusedClosed, l.backPressured,
		l.torn, l.corrupt, l.discarded, l.maxDepth, l.depth, l.heartbeat} {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// CloseCounters publishes the statistics a last time and frees the
// mailbox's counters (Config.Counters); later calls do nothing. Call it
// from the consumer's goroutine once it has stopped draining (after its
// actor's OnClose, whose last heartbeat publishes the final statistics
// and leaves them readable); ipc.MailboxFile.Close calls it.
func (m *Mailbox) CloseCounters() error {
	l := m.live
	if l == nil || m.gone {
		return nil
	}
	m.live = nil
	l.publish(m, m.clock.EpochMillis())
	return l.close()
}
