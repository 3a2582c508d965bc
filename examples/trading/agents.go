package main

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/examples/trading/internal/feed"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
)

// Each stage is an agent.Agent; each of its mailboxes is drained by a
// mailbox.Actor into a message.Router whose handlers get a view of the
// ring: nothing allocates per message.
//
// Deadlock. Mailboxes are bounded and nothing is dropped, and the flow has
// cycles, so an agent that receives responses has two mailboxes: "in" for
// what makes it send and "resp" for what it only absorbs, drained on every
// cycle. The wait-for graph (strategy.in → risk.in → exchange.in →
// strategy.resp, risk.resp) is then acyclic.
//
// Back-pressure. A handler runs once per message (the domain code counted
// it), so what it could not send stays pending and ends the drain
// (Break); the next cycle sends it first, and a delivery that finds output
// pending is refused with Abort, leaving the message in the ring. The
// pending word is stored before the handler returns, hence before the ring
// releases the message (quiesce relies on it).

// send sends *v with c and reports whether it was accepted. Back-pressure
// returns false; any other refusal (a closed mailbox, a dead consumer)
// counts the message in lost, which fails the reconciliation, and returns
// true: waiting for it would hang the shutdown.
func send[T any](c *message.Fixed[T], b *mailbox.Mailbox, v *T, lost *int64) bool {
	switch err := c.Send(b, v); err {
	case nil:
		return true
	case mailbox.ErrBackPressured:
		return false
	default:
		*lost++
		return true
	}
}

// output is an agent's pending output.
type output struct {
	pending bool
	flush   func() bool   // sends what is pending, reports whether all of it went
	word    *atomic.Int64 // published: 1 while output is pending
}

// send runs flush and publishes the outcome (release store).
func (o *output) send() bool {
	ok := o.flush()
	if ok == o.pending {
		o.pending = !ok
		v := int64(0)
		if !ok {
			v = 1
		}
		counters.SetWord(o.word, v)
	}
	return ok
}

// inbox is one mailbox of an agent under a mailbox.Actor: its Router
// behind the gate of out (nil for a mailbox whose handlers never send),
// and with -record the stream each consumed message is appended to.
type inbox struct {
	agent.Agent // the mailbox's actor
	mb          *mailbox.Mailbox
	r           *message.Router
	out         *output
	rec         *recStream
}

// Receive delivers one message to the router (mailbox.Receiver).
func (i *inbox) Receive(m *mailbox.Message) (mailbox.Action, error) {
	if i.out != nil && i.out.pending && !i.out.send() {
		return mailbox.Abort, nil
	}
	act, err := i.r.Receive(m)
	if i.rec != nil {
		i.rec.record(m)
	}
	if i.out != nil && i.out.pending {
		act = mailbox.Break
	}
	return act, err
}

// undelivered returns the messages the router could not hand to a
// handler. Owner thread, or after it stopped.
func (i *inbox) undelivered() int64 {
	st := i.r.Stats()
	return st.Undecodable + st.NoRoute
}

// route adds one type's route to a router.
type route func(r *message.Router) error

// on is the route of c's messages to h.
func on[T any](c *message.Fixed[T], h func(*T) error) route {
	return func(r *message.Router) error { return message.Handle(r, c, h) }
}

// drained is a mailbox and the routes of its messages.
type drained struct {
	mb     *mailbox.Mailbox
	routes []route
}

func drain(mb *mailbox.Mailbox, routes ...route) drained { return drained{mb, routes} }

func newInboxOf(d drained, out *output) (*inbox, error) {
	i := &inbox{mb: d.mb, r: message.NewRouter(), out: out}
	for _, add := range d.routes {
		if err := add(i.r); err != nil {
			return nil, err
		}
	}
	var err error
	i.Agent, err = mailbox.NewReceiverActor(d.mb.Name(), d.mb, i)
	return i, err
}

// stage is the agent of the strategy, risk and the exchange: "in",
// drained only while nothing is pending, and "resp" (none for the
// exchange), drained on every cycle.
type stage struct {
	role     string
	in, resp *inbox
	ibs      []*inbox // resp (if any), then in
	out      output
	publish  func()
	pub      words // the published counters (publish)
	lost     int64 // see send
	clock    func() int64
	stages   *stages // nil: not recorded
}

// newStage makes the stage of role: flush sends its pending output
// (published in w[0]), publish its counters (w[1:]).
func newStage(role string, clock func() int64, w words, st *stages, flush func() bool, publish func(), in, resp drained) (*stage, error) {
	s := &stage{role: role, out: output{word: w[0], flush: flush}, publish: publish, pub: w[1:], clock: clock, stages: st}
	var err, err2 error
	if resp.mb != nil {
		s.resp, err2 = newInboxOf(resp, nil)
		s.ibs = append(s.ibs, s.resp)
	}
	s.in, err = newInboxOf(in, &s.out)
	s.ibs = append(s.ibs, s.in)
	return s, errors.Join(err, err2)
}

func (s *stage) RoleName() string { return s.role }

// Mailboxes is what "-idle wake" sleeps on.
func (s *stage) Mailboxes() (mbs []*mailbox.Mailbox) {
	for _, i := range s.ibs {
		mbs = append(mbs, i.mb)
	}
	return mbs
}

func (s *stage) OnStart() error { return s.each(agent.Agent.OnStart) }

// OnClose closes and drains the agent's mailboxes.
func (s *stage) OnClose() error { return s.each(agent.Agent.OnClose) }

func (s *stage) each(f func(agent.Agent) error) error {
	var errs []error
	for _, i := range s.ibs {
		errs = append(errs, f(i))
	}
	return errors.Join(errs...)
}

// DoWork drains resp, sends pending output, and drains in when nothing is
// pending. It ends the agent (agent.ErrDone) once in is closed and
// drained.
func (s *stage) DoWork() (work int, err error) {
	if s.resp != nil {
		if work, err = s.resp.DoWork(); err == agent.ErrDone {
			err = nil // resp is closed only after the run
		}
	}
	if s.out.pending && s.out.send() {
		work++
	}
	var errIn error
	if !s.out.pending {
		var n int
		n, errIn = s.in.DoWork()
		work += n
	}
	s.publish()
	if err != nil {
		return work, errors.Join(err, errIn)
	}
	return work, errIn
}

// undelivered returns the messages of its mailboxes the agent could not
// handle. After it stopped.
func (s *stage) undelivered() (n int64) {
	for _, i := range s.ibs {
		n += i.undelivered()
	}
	return n
}

// words are an agent's published counters (single writer, release store):
// in-process each on its own pair of cache lines, in the exchange process
// counters of its counters file.
type words []*atomic.Int64

type paddedWord struct {
	atomic.Int64
	_ [128 - 8]byte
}

func newWords(n int) words {
	ws := make([]paddedWord, n)
	out := make(words, n)
	for i := range ws {
		out[i] = &ws[i].Int64
	}
	return out
}

// set stores vs into the words, in order, each only when it changes.
func (w words) set(vs ...int64) {
	for i, v := range vs {
		if w[i].Load() != v {
			counters.SetWord(w[i], v)
		}
	}
}

// feedAgent generates quotes at cfg.Rate (at most feedBatch per cycle) and
// sends each to the strategy, risk and the exchange. A quote refused by a
// full mailbox waits; the quotes owed meanwhile are capped at owed, so
// that a stall does not become a burst.
type feedAgent struct {
	gen   *feed.Generator
	dst   [3]*mailbox.Mailbox // strategy.in, risk.in, exchange.in
	clock func() int64
	rate  float64 // quotes per ns; 0 = unpaced
	start int64
	made  int64 // quotes generated
	owed  int64

	q    msg.Quote
	sent uint8 // bit i: dst[i] has q
	out  output
	lost int64

	stop    atomic.Bool   // controller → feed: generate no more
	stopped *atomic.Int64 // 1 once stopped with nothing pending
	quotes  *atomic.Int64 // published: generated
	market  *mdAgent      // -md: quotes from md.in instead of gen
}

const feedBatch = 64

func newFeedAgent(cfg config, clock clockFunc, mbs *mailboxes) (*feedAgent, error) {
	w := newWords(3)
	gen, err := feed.New(feed.Config{Instruments: cfg.Instruments, Seed: cfg.Seed, Now: clock})
	f := &feedAgent{
		gen: gen, dst: [3]*mailbox.Mailbox{mbs.strategyIn, mbs.riskIn, mbs.exchangeIn}, clock: clock,
		rate: float64(cfg.Rate) / 1e9, owed: max(feedBatch, cfg.Rate/100), // 10 ms of quotes
		stopped: w[0], out: output{word: w[1]}, quotes: w[2],
	}
	f.out.flush = f.flush
	return f, err
}

func (f *feedAgent) RoleName() string { return roleFeed }
func (f *feedAgent) OnStart() error   { f.start = f.clock(); return nil }
func (f *feedAgent) OnClose() error   { return nil }

// NextDeadline is when the feed owes its next quote ("-idle wake"): now
// while a quote is pending or the feed is unpaced, none once it stopped
// or with -md.
func (f *feedAgent) NextDeadline() time.Time {
	switch {
	case f.out.pending, f.rate == 0 && !f.stop.Load():
		return time.Now()
	case f.stop.Load(), f.market != nil:
		return time.Time{}
	}
	due := f.start + int64(float64(f.made+1)/f.rate)
	return time.Now().Add(time.Duration(due - f.clock()))
}

// resend sends the pending quote; it reports whether none is pending.
func (f *feedAgent) resend() bool { return !f.out.pending || f.out.send() }

// Mailboxes is what "-idle wake" sleeps on: md.in with -md.
func (f *feedAgent) Mailboxes() []*mailbox.Mailbox {
	if f.market == nil {
		return nil
	}
	return []*mailbox.Mailbox{f.market.in.mb}
}

func (f *feedAgent) DoWork() (int, error) {
	if !f.resend() {
		return 0, nil
	}
	if f.stop.Load() && (f.market == nil || f.market.stopping()) {
		counters.SetWord(f.stopped, 1)
		return 0, nil
	}
	if f.market != nil {
		return f.market.work()
	}
	n := int64(feedBatch)
	if f.rate > 0 {
		due := int64(float64(f.clock()-f.start)*f.rate) - f.made
		if due > f.owed { // behind by more than owed: forget the rest
			f.start += int64(float64(due-f.owed) / f.rate)
			due = f.owed
		}
		n = min(n, due)
	}
	work := 0
	for range n {
		f.gen.Next(&f.q)
		if !f.forward() {
			break
		}
		work++
	}
	counters.SetWord(f.quotes, f.made)
	return work, nil
}

// forward sends f.q, a new quote; it reports whether all have it.
func (f *feedAgent) forward() bool {
	f.made++
	f.sent = 0
	return f.out.send()
}

func (f *feedAgent) flush() bool {
	for i, mb := range f.dst {
		if f.sent&(1<<i) == 0 {
			if !send(msg.Quotes, mb, &f.q, &f.lost) {
				return false
			}
			f.sent |= 1 << i
		}
	}
	return true
}
