package pubrecord

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/ipc/publication"
	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/journal/replay"
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
	copy(c.Body(), payload)
	if err := r.j.Commit(); err != nil {
		r.err = err
		if !errors.Is(err, journal.ErrNotDurable) {
			return ringbuf.Abort
		}
		// Recorded, not known durable: consumed (polling it again would
		// record it twice), the poll ends and DoWork returns the error.
		r.n++
		return ringbuf.Break
	}
	r.n++
	return ringbuf.Continue
}

// Replayer is the agent that offers a journal's records to a
// publication: a replay.Replayer whose Sink is the publication. See the
// package documentation.
type Replayer = replay.Replayer

// NewReplayer returns a Replayer reading with t (its position is where
// the replay starts) into pub, at most limit records per duty cycle (0:
// 256). streams restricts it to one stream; none means every stream.
// ErrBackPressured, ErrNotConnected and ErrAdminAction are transient: the
// record is offered again on the next duty cycle.
func NewReplayer(role string, t *journal.Tailer, pub *publication.Publication, limit int, streams ...uint32) (*Replayer, error) {
	if t == nil || pub == nil || len(streams) > 1 {
		return nil, fmt.Errorf("%w: a replayer needs a tailer, a publication and at most one stream", ErrArgument)
	}
	if limit <= 0 {
		limit = defaultLimit
	}
	return replay.NewSinkReplayer(role, t, offerSink{pub}, transient, limit, streams...)
}

// offerSink offers each record to a publication.
type offerSink struct{ pub *publication.Publication }

func (s offerSink) Send(typeID int32, body []byte) error {
	_, err := s.pub.Offer(typeID, body)
	return err
}

// transient reports the Offer outcomes after which the same record is
// offered again.
func transient(err error) bool {
	return errors.Is(err, publication.ErrBackPressured) || errors.Is(err, publication.ErrNotConnected) ||
		errors.Is(err, publication.ErrAdminAction)
}
