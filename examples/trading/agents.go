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

// The agents. Each stage of internal/sim becomes one agent.Agent with its
// own mailboxes, driven by one thread (a runner, alone or in a
// composite). Messages are the msg package's message.Fixed types, sent
// straight into the receiver's ring; each mailbox is drained by a
// mailbox.Actor into a message.Router whose handlers get a view of the
// ring: nothing allocates per message.
//
// Mailboxes and deadlock. Every mailbox is bounded and nothing is ever
// dropped, so a sender whose receiver is full must wait. The flow has
// cycles (strategy → risk → strategy, risk → exchange → risk, ...), and
// bounded queues on a cycle can deadlock when every agent on it waits for
// the next. So each agent that receives responses has two mailboxes: "in"
// for the messages that make it send (quotes, orders, cancels) and "resp"
// for the ones it only absorbs (execution reports, risk rejects). An agent
// drains its resp mailbox on every cycle whatever else is blocked, and
// draining it never sends, so the wait-for graph is acyclic
// (strategy.in → risk.in → exchange.in → strategy.resp, risk.resp) and the
// pipeline always makes progress.
//
// Back-pressure. A handler cannot be run twice on the same message (the
// domain code has counted it, spent a rate token, opened an order), so a
// handler that cannot send everything keeps what is left as pending output
// (output) and its inbox ends the drain (Break). The next cycle sends the
// pending output first and drains "in" only once it is gone; a delivery
// that finds output still pending is refused with mailbox.Abort, which
// leaves the message in the ring for the next drain. The pending word (1
// while output is pending) is stored before the handler returns, hence
// before the ring releases the message, so whoever sees the message gone
// also sees the pending output (quiesce relies on it).

// send sends *v with c and reports whether it was accepted. Back-pressure
// returns false; any other refusal (a closed mailbox, a dead consumer in
// another process) counts the message in lost and returns true: it can
// never be delivered, and waiting for it would hang the shutdown. The
// reconciliation reports lost messages.
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

// output is an agent's pending output: what its handlers could not send
// yet because a receiver was full.
type output struct {
	pending bool
	flush   func() bool   // sends what is pending, reports whether all of it went
	word    *atomic.Int64 // published: 1 while output is pending
}

// send runs flush, keeps the outcome and publishes it (release store).
func (o *output) send() bool {
	ok := o.flush()
	if ok == o.pending {
		o.pending = !ok
		counters.SetWord(o.word, int64(boolInt(!ok)))
	}
	return ok
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// inbox is one mailbox of an agent under a mailbox.Actor, which drains it
// into the inbox (and closes and drains it on OnClose): the agent's Router
// behind the back-pressure gate of out (nil for a mailbox whose handlers
// never send), and, with -record, the journal stream each consumed
// message is appended to.
type inbox struct {
	agent.Agent // the mailbox's actor
	mb          *mailbox.Mailbox
	r           *message.Router
	out         *output
	rec         *recStream // nil: not recording
}

func newInbox(mb *mailbox.Mailbox, r *message.Router, out *output) (*inbox, error) {
	i := &inbox{mb: mb, r: r, out: out}
	var err error
	i.Agent, err = mailbox.NewReceiverActor(mb.Name(), mb, i)
	return i, err
}

// Mailbox is the inbox's mailbox.
func (i *inbox) Mailbox() *mailbox.Mailbox { return i.mb }

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

// stage is the agent type of the strategy, risk and the exchange: "in",
// drained only while nothing is pending, and "resp" (none for the
// exchange), drained on every cycle.
type stage struct {
	role     string
	in, resp *inbox
	out      output
	publish  func()
	pub      words // the published counters (publish)
	lost     int64 // see send
	clock    func() int64
	stages   *stages // nil: not recorded
}

func (s *stage) RoleName() string { return s.role }

// Mailboxes are the mailboxes the stage drains, for an idle strategy that
// sleeps until one of them gets a message ("-idle wake").
func (s *stage) Mailboxes() []*mailbox.Mailbox {
	var mbs []*mailbox.Mailbox
	for _, i := range s.inboxes() {
		mbs = append(mbs, i.Mailbox())
	}
	return mbs
}

func (s *stage) inboxes() []*inbox {
	if s.resp == nil {
		return []*inbox{s.in}
	}
	return []*inbox{s.resp, s.in}
}

func (s *stage) OnStart() error {
	var errs []error
	for _, i := range s.inboxes() {
		errs = append(errs, i.OnStart())
	}
	return errors.Join(errs...)
}

// OnClose closes and drains the agent's mailboxes (mailbox.Actor).
func (s *stage) OnClose() error {
	var errs []error
	for _, i := range s.inboxes() {
		errs = append(errs, i.OnClose())
	}
	return errors.Join(errs...)
}

// DoWork drains resp, sends pending output, and drains in when nothing is
// pending. It ends the agent (agent.ErrDone) once in is closed and drained.
func (s *stage) DoWork() (int, error) {
	var work int
	var err, errIn error
	if s.resp != nil {
		if work, err = s.resp.DoWork(); err == agent.ErrDone {
			err = nil // resp is closed only after the run
		}
	}
	if s.out.pending && s.out.send() {
		work++
	}
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
	for _, i := range s.inboxes() {
		n += i.undelivered()
	}
	return n
}

// route adds one type's route to a router (see on).
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

// newInboxOf makes d's router and its inbox.
func newInboxOf(d drained, out *output) (*inbox, error) {
	r := message.NewRouter()
	for _, add := range d.routes {
		if err := add(r); err != nil {
			return nil, err
		}
	}
	return newInbox(d.mb, r, out)
}

// newStage makes the stage of role: in and resp (none when its mailbox is
// nil) with their routes, flush for its pending output (published in
// w[0]) and publish for its counters (w[1:]).
func newStage(role string, clock func() int64, w words, flush func() bool, publish func(), in, resp drained) (*stage, error) {
	s := &stage{role: role, out: output{word: w[0], flush: flush}, publish: publish, pub: w[1:], clock: clock}
	var err, err2 error
	s.in, err = newInboxOf(in, &s.out)
	if resp.mb != nil {
		s.resp, err2 = newInboxOf(resp, nil)
	}
	return s, errors.Join(err, err2)
}

// words are the published counters of one agent: the agent stores them
// (single writer, release store), anyone reads. In-process each is on its
// own cache line; in the -ipc exchange process they are counters in a
// shared counters file (128-byte records), so the demo and dutystat see
// them.
type words []*atomic.Int64

// paddedWord fills two cache lines (the adjacent-line prefetcher fetches
// lines in pairs), so that no two agents' words share one.
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

// set stores vs into the words, in order (setWord).
func (w words) set(vs ...int64) {
	for i, v := range vs {
		setWord(w[i], v)
	}
}

// setWord stores v into w, a single-writer word, with a release store, and
// only when it changes.
func setWord(w *atomic.Int64, v int64) {
	if w.Load() != v {
		counters.SetWord(w, v)
	}
}

// ---------------------------------------------------------------- feed

// feedAgent is the market-data agent: it generates quotes at cfg.Rate
// (paced by the clock, in bursts of at most feedBatch per cycle) and sends
// each to the strategy, risk and the exchange. A quote refused by a full
// mailbox waits (the feed never drops); the quotes it owes meanwhile are
// capped at maxOwed, so a stall does not turn into a burst afterwards.
type feedAgent struct {
	gen   *feed.Generator
	dst   [3]*mailbox.Mailbox // strategy.in, risk.in, exchange.in
	clock func() int64
	rate  float64 // quotes per ns; 0 = unpaced
	start int64
	made  int64 // quotes generated
	owed  int64 // most quotes owed at once

	q    msg.Quote
	sent uint8 // bit i: dst[i] has q
	out  output
	lost int64

	stop    atomic.Bool   // controller → feed: generate no more
	stopped *atomic.Int64 // 1 once stopped with nothing pending
	quotes  *atomic.Int64 // published: generated
	lostW   *atomic.Int64
}

const feedBatch = 64

func newFeedAgent(cfg config, clock func() int64, mbs *mailboxes, w words) (*feedAgent, error) {
	gen, err := feed.New(feed.Config{Instruments: cfg.Instruments, Seed: cfg.Seed, Now: clock})
	if err != nil {
		return nil, err
	}
	f := &feedAgent{
		gen:     gen,
		dst:     [3]*mailbox.Mailbox{mbs.strategyIn, mbs.riskIn, mbs.exchangeIn},
		clock:   clock,
		rate:    float64(cfg.Rate) / 1e9,
		owed:    max(feedBatch, cfg.Rate/100), // 10 ms of quotes
		stopped: w[0],
		out:     output{word: w[1]},
		quotes:  w[2],
		lostW:   w[3],
	}
	f.out.flush = f.flush
	return f, nil
}

func (f *feedAgent) RoleName() string { return roleFeed }
func (f *feedAgent) OnStart() error   { f.start = f.clock(); return nil }

// NextDeadline is when the feed owes its next quote, for an idle strategy
// that sleeps ("-idle wake"): now while a quote is pending or the feed is
// unpaced, none once it stopped.
func (f *feedAgent) NextDeadline() time.Time {
	switch {
	case f.out.pending, f.rate == 0 && !f.stop.Load():
		return time.Now()
	case f.stop.Load():
		return time.Time{}
	}
	due := f.start + int64(float64(f.made+1)/f.rate)
	return time.Now().Add(time.Duration(due - f.clock()))
}
func (f *feedAgent) OnClose() error { return nil }

// resend sends the quote still pending, and reports whether nothing is
// pending now.
func (f *feedAgent) resend() bool { return !f.out.pending || f.out.send() }

func (f *feedAgent) DoWork() (int, error) {
	if !f.resend() {
		return 0, nil
	}
	work := 0
	if f.stop.Load() {
		setWord(f.stopped, 1)
		return work, nil
	}
	n := int64(feedBatch)
	if f.rate > 0 {
		now := f.clock()
		due := int64(float64(now-f.start)*f.rate) - f.made
		if due > f.owed {
			// Behind schedule by more than owed: forget the rest.
			f.start += int64(float64(due-f.owed) / f.rate)
			due = f.owed
		}
		n = min(n, due)
	}
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

// forward sends f.q, a new quote, on, and reports whether every
// destination has it (the rest is pending output).
func (f *feedAgent) forward() bool {
	f.made++
	f.sent = 0
	return f.out.send()
}

// flush sends the current quote to every destination that does not have
// it yet, and reports whether all have it.
func (f *feedAgent) flush() bool {
	for i, mb := range f.dst {
		if f.sent&(1<<i) != 0 {
			continue
		}
		if !send(msg.Quotes, mb, &f.q, &f.lost) {
			return false
		}
		f.sent |= 1 << i
	}
	setWord(f.lostW, f.lost)
	return true
}
