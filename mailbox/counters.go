package mailbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	"github.com/dutyrt/duty/counters"
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
		{&l.delivered, "delivered: " + name, counters.TypeDelivered},
		{&l.bytes, "consumed-bytes: " + name, counters.TypeConsumedBytes},
		{&l.refusedClosed, "refused-closed: " + name, counters.TypeRefusedClosed},
		{&l.backPressured, "back-pressure: " + name, counters.TypeBackPressureEvents},
		{&l.torn, "unblocked-claims: " + name, counters.TypeUnblockedClaims},
		{&l.corrupt, "corrupt-records: " + name, counters.TypeCorruptRecords},
		{&l.discarded, "discarded: " + name, counters.TypeDiscarded},
		{&l.maxDepth, "max-depth: " + name, counters.TypeMaxDepth},
		{&l.depth, "mailbox-depth: " + name, counters.TypeMailboxDepth},
		{&l.heartbeat, fmt.Sprintf("heartbeat: mailbox %s consumer pid=%d", name, os.Getpid()), counters.TypeHeartbeat},
	}
	for _, s := range specs {
		var key []byte
		if s.typ == counters.TypeHeartbeat {
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
// Actor's OnClose, whose last heartbeat publishes the final statistics
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
