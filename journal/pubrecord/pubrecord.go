package pubrecord

import (
	"errors"
	"fmt"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/ipc/publication"
	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/ringbuf"
)

// ErrArgument reports a bad argument to a constructor.
var ErrArgument = errors.New("pubrecord: bad argument")

// defaultLimit is the messages or records handled per duty cycle when the
// caller gives no limit.
const defaultLimit = 256

// Recorder is the agent that records a publication subscription's
// messages into a journal stream. See the package documentation.
type Recorder struct {
	role   string
	j      *journal.Journal
	stream *journal.Stream
	sub    *publication.Subscription
	limit  int
	handle ringbuf.ControlledHandler // bound once: DoWork allocates nothing
	err    error
	n      int64
}

var _ agent.Agent = (*Recorder)(nil)

// NewRecorder returns a Recorder of sub onto streamID of j (the journal's
// writer), recording at most limit messages per duty cycle (0: 256).
func NewRecorder(role string, j *journal.Journal, streamID uint32, sub *publication.Subscription, limit int) (*Recorder, error) {
	if j == nil || sub == nil {
		return nil, fmt.Errorf("%w: a recorder needs a journal and a subscription", ErrArgument)
	}
	s, err := j.Stream(streamID)
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = defaultLimit
	}
	r := &Recorder{role: role, j: j, stream: s, sub: sub, limit: limit}
	r.handle = r.onMessage
	return r, nil
}

// OnStart implements agent.Agent.
func (r *Recorder) OnStart() error { return nil }

// OnClose implements agent.Agent.
func (r *Recorder) OnClose() error { return nil }

// RoleName implements agent.Agent.
func (r *Recorder) RoleName() string { return r.role }

// Recorded returns the number of messages recorded.
func (r *Recorder) Recorded() int64 { return r.n }

// DoWork polls the subscription and appends what it delivers. It returns
// agent.ErrDone at the publication's end of stream, a journal error as
// is, and the subscription's other errors (ErrSubscriberDropped,
// ErrCorrupt, ...) wrapped.
func (r *Recorder) DoWork() (int, error) {
	n, err := r.sub.ControlledPoll(r.handle, r.limit)
	if r.err != nil {
		err, r.err = r.err, nil
		return n, err
	}
	if errors.Is(err, publication.ErrEndOfStream) {
		return n, agent.ErrDone
	}
	if err != nil {
		return n, fmt.Errorf("pubrecord: %s: %w", r.role, err)
	}
	return n, nil
}

// onMessage appends one message (write-ahead: the message is consumed
// from the publication only once it is in the journal).
func (r *Recorder) onMessage(typeID int32, payload []byte) ringbuf.Action {
	c, err := r.stream.Claim(typeID, len(payload))
	if err != nil {
		r.err = err
		return ringbuf.Abort
	}
	copy(c.Body, payload)
	if err := r.j.Commit(); err != nil {
		r.err = err
		return ringbuf.Abort
	}
	r.n++
	return ringbuf.Continue
}

// Replayer is the agent that offers a journal's records to a publication.
// See the package documentation.
type Replayer struct {
	role      string
	t         *journal.Tailer
	pub       *publication.Publication
	stream    uint32
	oneStream bool
	limit     int
	// Paced offers each record when as much time has passed since the
	// first one was offered as passed between their timestamps, by Clock
	// (ns since the Unix epoch; set by NewReplayer to the wall clock).
	Paced bool
	Clock func() int64
	// StopAtEnd ends the replay (agent.ErrDone) at the journal's end
	// instead of following its tail.
	StopAtEnd bool

	pending       journal.Record // read, not yet offered (its Body stays valid until the Tailer's next call)
	hasPending    bool
	started       bool
	wall0, stamp0 int64
	sent          int64
}

var _ agent.Agent = (*Replayer)(nil)

// NewReplayer returns a Replayer reading with t (its position is where
// the replay starts) into pub, at most limit records per duty cycle (0:
// 256). streams restricts it to one stream; none means every stream.
func NewReplayer(role string, t *journal.Tailer, pub *publication.Publication, limit int, streams ...uint32) (*Replayer, error) {
	if t == nil || pub == nil || len(streams) > 1 {
		return nil, fmt.Errorf("%w: a replayer needs a tailer, a publication and at most one stream", ErrArgument)
	}
	if limit <= 0 {
		limit = defaultLimit
	}
	p := &Replayer{role: role, t: t, pub: pub, limit: limit, Clock: wallClock}
	if len(streams) == 1 {
		p.stream, p.oneStream = streams[0], true
	}
	return p, nil
}

// OnStart implements agent.Agent.
func (p *Replayer) OnStart() error { return nil }

// OnClose implements agent.Agent.
func (p *Replayer) OnClose() error { return nil }

// RoleName implements agent.Agent.
func (p *Replayer) RoleName() string { return p.role }

// Sent returns the number of records offered successfully.
func (p *Replayer) Sent() int64 { return p.sent }

// DoWork offers up to the limit of records. A transient outcome of Offer
// (back-pressure, no subscriber, admin action) or a record whose time has
// not come (Paced) ends the cycle; the record is offered first next
// time. Other Offer errors (ErrClosed, a message too long for the
// publication, ...) are returned, the record still pending.
func (p *Replayer) DoWork() (int, error) {
	n := 0
	for n < p.limit {
		if !p.hasPending {
			rec, ok, err := p.t.Next()
			if err != nil {
				return n, err
			}
			if !ok {
				if p.StopAtEnd {
					return n, agent.ErrDone
				}
				return n, nil
			}
			if p.oneStream && rec.StreamID != p.stream {
				continue
			}
			p.pending, p.hasPending = rec, true
		}
		rec := &p.pending
		if p.Paced {
			now := p.Clock()
			if !p.started {
				p.started, p.wall0, p.stamp0 = true, now, rec.Timestamp
			}
			if rec.Timestamp-p.stamp0 > now-p.wall0 {
				return n, nil
			}
		}
		if _, err := p.pub.Offer(rec.TypeID, rec.Body); err != nil {
			if errors.Is(err, publication.ErrBackPressured) || errors.Is(err, publication.ErrNotConnected) || errors.Is(err, publication.ErrAdminAction) {
				return n, nil
			}
			return n, fmt.Errorf("pubrecord: %s: record at %d: %w", p.role, rec.Position, err)
		}
		p.hasPending = false
		p.sent++
		n++
	}
	return n, nil
}

// wallClock is the default Clock: ns since the Unix epoch, as the
// journal's timestamps.
func wallClock() int64 { return time.Now().UnixNano() }
