// Package replay records a mailbox's traffic into a journal and feeds a
// journal back into a mailbox, or into any Sink: the agents of event
// sourcing over package journal. Package journal/pubrecord does the same
// for IPC publications, with this package's Replayer.
//
//	j, err := journal.Open(dir, journal.Options{})
//	rec, err := replay.NewRecorder("record-orders", j, 1, in, out, 0) // in -> journal stream 1 -> out
//	// run rec on the journal writer's runner
//
//	t, err := j.NewTailer()
//	rep, err := replay.NewReplayer("replay-orders", t, box, 0, 1) // stream 1 into box
//	rep.Paced = true                                                // at the recorded pace
//
// A Recorder records before it forwards (write-ahead) and records each
// message once, whatever the output does; a Replayer sends each record
// once, holding it while the sink refuses it transiently. Neither
// allocates per message, and nothing here starts a goroutine.
// docs/journal.md, "Record and replay", has the contract.
package replay

import (
	"errors"
	"fmt"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/internal/journalfile"
	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/mailbox"
)

// defaultLimit is the messages or records handled per duty cycle when the
// caller gives no limit.
const defaultLimit = 256

// wallClock is the Replayer's default Clock.
func wallClock() int64 { return time.Now().UnixNano() }

// Recorder is the agent that records a mailbox's traffic into a journal:
// each DoWork drains the input mailbox, appends every message to the
// journal on its stream (write-ahead: recorded before it is passed on),
// then, if an output mailbox is set, forwards it there. A full output is
// back-pressure: the message stays in the input mailbox (recorded once)
// and the drain ends. The Recorder is the input mailbox's consumer and the
// journal's writer: run it on the writer's thread.
//
// A multipart message is recorded as one multipart record
// (journal.Stream.AppendParts), which a Replayer sends as the same parts.
type Recorder struct {
	role    string
	j       *journal.Journal
	stream  *journal.Stream
	in, out *mailbox.Mailbox
	limit   int
	handle  mailbox.Handler // bound once: DoWork allocates nothing
	held    bool            // the message at the input's head is recorded, not yet forwarded
	err     error
}

var _ agent.Agent = (*Recorder)(nil)

// NewRecorder returns a Recorder of in onto stream of j, forwarding to out
// (nil: record only), draining at most limit messages per duty cycle (0:
// 256).
func NewRecorder(role string, j *journal.Journal, stream uint32, in, out *mailbox.Mailbox, limit int) (*Recorder, error) {
	if j == nil || in == nil {
		return nil, fmt.Errorf("%w: recorder needs a journal and an input mailbox", journal.ErrArgument)
	}
	s, err := j.Stream(stream) // ErrReadOnly for a read-only journal
	if err != nil {
		return nil, err
	}
	if limit <= 0 {
		limit = defaultLimit
	}
	r := &Recorder{role: role, j: j, stream: s, in: in, out: out, limit: limit}
	r.handle = r.onMessage
	return r, nil
}

// OnStart implements agent.Agent.
func (r *Recorder) OnStart() error { return nil }

// OnClose implements agent.Agent.
func (r *Recorder) OnClose() error { return nil }

// RoleName implements agent.Agent.
func (r *Recorder) RoleName() string { return r.role }

// DoWork drains the input mailbox into the journal (and the output).
func (r *Recorder) DoWork() (int, error) {
	n, err := r.in.Drain(r.handle, r.limit)
	if r.err != nil {
		err, r.err = r.err, nil
		return n, err
	}
	return n, err
}

func (r *Recorder) onMessage(m *mailbox.Message) mailbox.Action {
	next := mailbox.Continue
	if !r.held {
		if _, _, err := r.stream.AppendParts(m.TypeID(), m.Parts()...); err != nil {
			r.err = err
			if !errors.Is(err, journal.ErrNotDurable) {
				return mailbox.Abort
			}
			// Recorded, not known durable: the message is passed on and
			// consumed like any other (appending it again would record it
			// twice), the drain ends and DoWork returns the error.
			next = mailbox.Break
		}
	}
	if r.out != nil {
		err := r.out.SendParts(m.TypeID(), m.Parts()...)
		if errors.Is(err, mailbox.ErrBackPressured) {
			r.held = true
			return mailbox.Abort
		}
		if err != nil {
			r.held = true
			r.err = errors.Join(r.err, err)
			return mailbox.Abort
		}
	}
	r.held = false
	return next
}

// Replayer is the agent that feeds a journal back into a Sink (a
// mailbox, or a publication through package pubrecord): each DoWork reads
// records with its Tailer (all streams, or one) and sends them with their
// type id, as fast as the sink takes them or at the pace they were
// recorded (Paced). A refusal the sink's retry function calls transient
// (a full mailbox: back-pressure) leaves the record to be sent again on
// the next duty cycle, so nothing is skipped and nothing is sent twice.
// With StopAtEnd, the Replayer returns agent.ErrDone at the end of the log.
type Replayer struct {
	role      string
	t         *journal.Tailer
	out       Sink
	retry     func(error) bool
	stream    uint32
	oneStream bool
	limit     int
	// Paced sends each record when as much time has passed since the
	// first one was sent as passed between their timestamps, by Clock
	// (ns; default the system clock: what Options.Clock defaults to).
	Paced bool
	Clock func() int64
	// StopAtEnd ends the replay (agent.ErrDone) at the log's end instead
	// of following the tail.
	StopAtEnd bool

	started       bool
	wall0, stamp0 int64
	sent          int64
	parts         [][]byte  // a multipart record's parts, reused
	partsOut      PartsSink // out, if it takes multipart messages
}

// A Sink takes the records a Replayer sends: Send returns nil once it has
// taken one. *mailbox.Mailbox is a Sink, and a PartsSink.
type Sink interface {
	Send(typeID int32, body []byte) error
}

// A PartsSink is a Sink that takes multipart messages: a Replayer sends a
// multipart record to it with SendParts, its parts as they
// were recorded. A multipart record for a Sink that is not a PartsSink is
// an error (journal.ErrArgument) naming the record, which stays pending.
type PartsSink interface {
	Sink
	SendParts(typeID int32, parts ...[]byte) error
}

var _ agent.Agent = (*Replayer)(nil)

// NewReplayer returns a Replayer reading with t (its position is where the
// replay starts) into out, at most limit records per duty cycle (0: 256).
// streams restricts it to one stream; none means every stream. A full
// mailbox (mailbox.ErrBackPressured) is retried.
func NewReplayer(role string, t *journal.Tailer, out *mailbox.Mailbox, limit int, streams ...uint32) (*Replayer, error) {
	if out == nil { // before it becomes a non-nil Sink
		return nil, fmt.Errorf("%w: replayer needs a tailer, a mailbox and at most one stream", journal.ErrArgument)
	}
	return NewSinkReplayer(role, t, out, func(err error) bool { return errors.Is(err, mailbox.ErrBackPressured) }, limit, streams...)
}

// NewSinkReplayer is NewReplayer into any Sink: retry reports which of its
// refusals are transient (the record is sent again next duty cycle); any
// other is returned by DoWork, the record still pending.
func NewSinkReplayer(role string, t *journal.Tailer, out Sink, retry func(error) bool, limit int, streams ...uint32) (*Replayer, error) {
	if t == nil || out == nil || retry == nil || len(streams) > 1 {
		return nil, fmt.Errorf("%w: replayer needs a tailer, a sink, a retry function and at most one stream", journal.ErrArgument)
	}
	if limit <= 0 {
		limit = defaultLimit
	}
	p := &Replayer{role: role, t: t, out: out, retry: retry, limit: limit, Clock: wallClock}
	p.partsOut, _ = out.(PartsSink)
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

// Sent returns the number of records sent.
func (p *Replayer) Sent() int64 { return p.sent }

// DoWork sends up to the limit of records.
func (p *Replayer) DoWork() (int, error) {
	n := 0
	for n < p.limit {
		pos := p.t.Position()
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
		if p.Paced {
			now := p.Clock()
			if !p.started {
				p.started, p.wall0, p.stamp0 = true, now, rec.Timestamp
			}
			if rec.Timestamp-p.stamp0 > now-p.wall0 {
				return n, p.t.SeekPosition(pos) // not yet: read it again next cycle
			}
		}
		if err := p.send(&rec); err != nil {
			if serr := p.t.SeekPosition(pos); serr != nil { // sent again next cycle, or after the caller's fix
				return n, serr
			}
			if p.retry(err) {
				return n, nil
			}
			return n, fmt.Errorf("replay: %s: record at %d: %w", p.role, rec.Position, err)
		}
		p.sent++
		n++
	}
	return n, nil
}

// send sends rec to the sink: its parts if it is a multipart record.
func (p *Replayer) send(rec *journal.Record) error {
	if rec.Flags&journalfile.RecordParts == 0 {
		return p.out.Send(rec.TypeID, rec.Body)
	}
	if p.partsOut == nil {
		return fmt.Errorf("%w: a multipart record, and the sink takes no multipart messages", journal.ErrArgument)
	}
	parts, err := rec.Parts(p.parts)
	if err != nil {
		return err
	}
	p.parts = parts[:0]
	return p.partsOut.SendParts(rec.TypeID, parts...)
}
