package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

// Recording (-record DIR) and replaying (-replay DIR) a run.
//
// A run is reproduced by what each agent consumed, in the order it
// consumed it: the strategy, risk and the exchange are deterministic given
// their input (risk's rate limit runs on the orders' origin timestamps, not
// on a wall clock), but their input interleaves messages of several
// senders (the strategy's quotes and execution reports) in an order that
// thread timing decides. Replaying the feed alone would not reproduce that
// order. So -record keeps one journal per agent (DIR/strategy, DIR/risk,
// DIR/exchange), each written by its agent's own thread, with one stream
// per mailbox (recStreams); a message is recorded when its handler has
// consumed it (a message the handler refused with Abort comes again and
// is recorded then). The journal's order is the agent's order.
//
// -replay drives each agent from its own journal, one message at a time,
// into the agent's own handlers, and checks every message the agent sends
// against what its receiver recorded (per edge: one sender, one receiver,
// the message types only that sender sends there, in FIFO order). Each
// agent then reaches the recorded state: the same final positions, and the
// same reconciliation.

// Streams: one per mailbox.
const (
	streamStrategyIn uint32 = 1 + iota
	streamStrategyResp
	streamRiskIn
	streamRiskResp
	streamExchangeIn
)

// recRunFile is the run's description in DIR: what replay needs to make
// the same agents, and what the recorded run ended with.
const recRunFile = "run.json"

// recordedRun is recRunFile's content.
type recordedRun struct {
	Instruments int
	Seed        uint64
	Rate        int64
	OrderRate   int64
	DropReport  int64
	BendFill    int64
	// At the end of the recorded run.
	FeedQuotes int64
	Positions  []recon.Position // the exchange's view
	Line       string           // the reconciliation line
}

// recorder is -record's state: the journals of the agents in this
// process (with -ipc or -nats the exchange process records the exchange's
// own, into the same directory).
type recorder struct {
	dir      string
	journals map[string]*journal.Journal // by agent role
	errs     [3]error                    // the first append error of each agent's handlers
	n        [3]int64                    // messages recorded, per agent
	remote   bool                        // the exchange runs in another process, which records it

	// The journals' Flushers run on a runner of their own (prepare the
	// next segment, fault pages in, index), off the agents' threads.
	flushers *runner.Runner
	flushErr error // the first Flusher error (read after flushers closed)
}

var recRoles = [3]string{roleStrategy, roleRisk, roleExchange}

// checkRecordDir refuses a -record directory that holds a recording
// already: any of the agents' journals. The demo checks before it starts
// the exchange process, which records into the same directory.
func checkRecordDir(dir string) error {
	for _, role := range recRoles {
		if _, err := os.Stat(filepath.Join(dir, role)); err == nil {
			return fmt.Errorf("%w: -record %s: %s exists already (record into a fresh directory)", errUsage, dir, filepath.Join(dir, role))
		}
	}
	return nil
}

// startRecording opens the journals of the agents h holds (the exchange's
// only in the exchange process; the strategy's and risk's only in the
// demo's when the exchange runs in another process) in cfg.Record and
// gives their inboxes the streams each consumed message is appended to.
// Call it after the agents exist and before their runners start (the
// journals' writers are then the agents' threads). nil when not
// recording.
func startRecording(cfg config, h handles) (*recorder, error) {
	if cfg.Record == "" {
		return nil, nil
	}
	r := &recorder{dir: cfg.Record, journals: map[string]*journal.Journal{}, remote: h.Exchange == nil}
	present := [3]bool{h.Strategy != nil, h.Risk != nil, h.Exchange != nil}
	for i, role := range recRoles {
		if !present[i] {
			continue
		}
		dir := filepath.Join(cfg.Record, role)
		if _, err := os.Stat(dir); err == nil {
			r.closeAll()
			return nil, fmt.Errorf("%w: -record %s: %s exists already (record into a fresh directory)", errUsage, cfg.Record, dir)
		}
		j, err := journal.Open(dir, journal.Options{Logger: quietLogger})
		if err != nil {
			r.closeAll()
			return nil, fmt.Errorf("trading: -record: %w", err)
		}
		r.journals[role] = j
	}
	var err error
	wrap := func(i int, in *inbox, stream uint32) {
		if err == nil {
			in.rec, err = r.stream(i, stream)
		}
	}
	if h.Strategy != nil {
		wrap(0, h.Strategy.in, streamStrategyIn)
		wrap(0, h.Strategy.resp, streamStrategyResp)
	}
	if h.Risk != nil {
		wrap(1, h.Risk.in, streamRiskIn)
		wrap(1, h.Risk.resp, streamRiskResp)
	}
	if h.Exchange != nil {
		wrap(2, h.Exchange.in, streamExchangeIn)
	}
	if err != nil {
		r.closeAll()
		return nil, err
	}
	if err := r.startFlushers(); err != nil {
		return nil, errors.Join(err, r.closeAll())
	}
	return r, nil
}

// startFlushers runs the journals' Flushers on a runner of their own,
// with a backoff idle strategy, until closeAll stops it; the first error
// they report is a problem of the recording.
func (r *recorder) startFlushers() error {
	var fs []agent.Agent
	for _, j := range r.journals {
		fs = append(fs, j.Flusher())
	}
	c, err := agent.NewComposite(fs...)
	if err != nil {
		return err
	}
	r.flushers, err = runner.New(c, runner.WithIdle(idle.Backoff()), runner.WithErrorHandler(func(err error) {
		if r.flushErr == nil {
			r.flushErr = err // read after the runner is closed
		}
	}))
	if err != nil {
		return err
	}
	return r.flushers.Start()
}

// recStream is one mailbox's stream in its agent's journal.
type recStream struct {
	r     *recorder
	agent int
	j     *journal.Journal
	s     *journal.Stream
}

func (r *recorder) stream(agent int, stream uint32) (*recStream, error) {
	j := r.journals[recRoles[agent]]
	s, err := j.Stream(stream)
	return &recStream{r: r, agent: agent, j: j, s: s}, err
}

// record appends a message its agent has consumed. It runs on the agent's
// thread; it allocates nothing. The first error stops the agent's
// recording (reported by end).
func (w *recStream) record(m *mailbox.Message) {
	r := w.r
	if r.errs[w.agent] != nil {
		return
	}
	n := 0
	for _, p := range m.Parts() {
		n += len(p)
	}
	c, err := w.s.Claim(m.TypeID(), n)
	if err == nil {
		b := c.Body
		for _, p := range m.Parts() {
			b = b[copy(b, p):]
		}
		err = w.j.Commit()
	}
	if err != nil {
		r.errs[w.agent] = err
		return
	}
	r.n[w.agent]++
}

// end closes the journals and returns the recording's problems: an
// append that failed, the Flusher's error, a close that failed. The
// exchange process calls it after its agent has stopped.
func (r *recorder) end() []string {
	if r == nil {
		return nil
	}
	var problems []string
	for i, err := range r.errs {
		if err != nil {
			problems = append(problems, fmt.Sprintf("recording %s's input: %v", recRoles[i], err))
		}
	}
	if err := r.closeAll(); err != nil {
		problems = append(problems, "closing the recording: "+err.Error())
	}
	if r.flushErr != nil {
		problems = append(problems, "the recording's flusher: "+r.flushErr.Error())
	}
	return problems
}

// finish ends the recording (end), counts what the exchange process
// recorded when it ran elsewhere, writes recRunFile and prints what was
// recorded and the final positions; it returns the problems to add to
// the run's. Call it after the agents, and the exchange process, have
// stopped.
func (r *recorder) finish(w io.Writer, cfg config, res *result, h handles) []string {
	if r == nil {
		return nil
	}
	problems := r.end()
	if r.remote {
		n, err := countRecords(filepath.Join(r.dir, roleExchange))
		if err != nil {
			problems = append(problems, "the exchange process's recording: "+err.Error())
		}
		r.n[2] = n
	}
	run := recordedRun{
		Instruments: cfg.Instruments, Seed: cfg.Seed, Rate: cfg.Rate, OrderRate: cfg.OrderRate,
		DropReport: cfg.dropReport, BendFill: cfg.bendFill,
		FeedQuotes: res.ledger.Feed.Quotes, Positions: res.ledger.Exchange.Positions,
		Line: res.line(),
	}
	if len(problems) > 0 {
		run.Line = "reconciliation: " + problems[0]
	}
	b, err := json.MarshalIndent(run, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(r.dir, recRunFile), b, 0o644)
	}
	if err != nil {
		problems = append(problems, "writing the recording's "+recRunFile+": "+err.Error())
	}
	fmt.Fprintf(w, "\nrecorded to %s: strategy %d, risk %d, exchange %d messages consumed\n", r.dir, r.n[0], r.n[1], r.n[2])
	printPositions(w, res.ledger.Exchange.Positions)
	return problems
}

// openRecording opens a recorded agent's closed journal.
func openRecording(dir string) (*journal.Journal, error) {
	return journal.Open(dir, journal.Options{ReadOnly: true, Logger: quietLogger})
}

// countRecords reads the closed journal in dir and returns its records.
func countRecords(dir string) (int64, error) {
	j, err := openRecording(dir)
	if err != nil {
		return 0, err
	}
	defer j.Close()
	return eachRecord(j, func(journal.Record) error { return nil })
}

// eachRecord calls f with each record of j, in order, until f fails, and
// returns the records f took.
func eachRecord(j *journal.Journal, f func(journal.Record) error) (int64, error) {
	t, err := j.NewTailer()
	if err != nil {
		return 0, err
	}
	defer t.Close()
	var n int64
	for {
		r, ok, err := t.Next()
		if err == nil && ok {
			err = f(r)
		}
		if err != nil || !ok {
			return n, err
		}
		n++
	}
}

func (r *recorder) closeAll() error {
	if r == nil {
		return nil
	}
	var errs []error
	if r.flushers != nil { // the Flushers stop before their journals close
		errs = append(errs, r.flushers.Close())
		r.flushers = nil
	}
	for _, j := range r.journals {
		errs = append(errs, j.Close())
	}
	r.journals = nil
	return errors.Join(errs...)
}

// printPositions prints the final position of each instrument.
func printPositions(w io.Writer, ps []recon.Position) {
	fmt.Fprintf(w, "%-10s %12s %16s %10s %10s\n", "position", "net", "cash", "open-buy", "open-sell")
	for i, p := range ps {
		fmt.Fprintf(w, "%-10d %12d %16d %10d %10d\n", i, p.Net, p.Cash, p.OpenBuy, p.OpenSell)
	}
}

// ---------------------------------------------------------------- replay

// replayCapacity is the replay's mailbox size: the outputs of one input
// (an exchange's reports for one quote) always fit.
const replayCapacity = 1 << 20

// replayEdge is one sender's messages to one receiver: what the replayed
// sender sends into out is checked, in order, against the receiver's
// journal's records on stream with one of types.
type replayEdge struct {
	name    string
	out     *mailbox.Mailbox
	t       *journal.Tailer
	stream  uint32
	types   []int32
	checked int64
	differ  int64
	first   string // the first difference
	err     error
}

// next returns the edge's next recorded message.
func (e *replayEdge) next() (journal.Record, bool, error) {
	for {
		r, ok, err := e.t.Next()
		if err != nil || !ok {
			return r, ok, err
		}
		if r.StreamID == e.stream && slices.Contains(e.types, r.TypeID) {
			return r, true, nil
		}
	}
}

// drain checks what the sender has sent into out since the last drain.
func (e *replayEdge) drain() error {
	_, err := e.out.Drain(func(m *mailbox.Message) mailbox.Action {
		e.checked++
		r, ok, err := e.next()
		switch {
		case err != nil:
			e.err = err
		case !ok:
			e.mismatch(fmt.Sprintf("message %d (type %d) sent, none recorded", e.checked, m.TypeID()))
		case r.TypeID != m.TypeID() || string(r.Body) != string(m.Payload()):
			e.mismatch(fmt.Sprintf("message %d: type %d sent, type %d recorded at %d, or other bytes", e.checked, m.TypeID(), r.TypeID, r.Position))
		}
		return mailbox.Continue
	}, replayCapacity)
	return errors.Join(err, e.err)
}

func (e *replayEdge) mismatch(what string) {
	e.differ++
	if e.first == "" {
		e.first = what
	}
}

// finish counts recorded messages the replayed sender never sent.
func (e *replayEdge) finish() error {
	for {
		r, ok, err := e.next()
		if err != nil || !ok {
			return err
		}
		e.mismatch(fmt.Sprintf("type %d recorded at %d, never sent", r.TypeID, r.Position))
	}
}

// runReplay replays the run recorded in cfg.Replay (see record.go): each
// agent from its own journal, its outputs checked against its receivers'
// journals. It prints the final positions and the reconciliation line,
// last; ok reports whether everything reconciled.
func runReplay(cfg config, stdout io.Writer) (ok bool, err error) {
	b, err := os.ReadFile(filepath.Join(cfg.Replay, recRunFile))
	if err != nil {
		return false, fmt.Errorf("trading: -replay: %w", err)
	}
	var run recordedRun
	if err := json.Unmarshal(b, &run); err != nil {
		return false, fmt.Errorf("trading: -replay: %s: %w", recRunFile, err)
	}
	cfg.Instruments, cfg.Seed, cfg.Rate, cfg.OrderRate = run.Instruments, run.Seed, run.Rate, run.OrderRate
	cfg.dropReport, cfg.bendFill = run.DropReport, run.BendFill
	cfg.Capacity = replayCapacity
	if err := cfg.check(); err != nil {
		return false, fmt.Errorf("trading: -replay: %s: %w", recRunFile, err)
	}

	journals := map[string]*journal.Journal{}
	defer func() {
		for _, j := range journals {
			_ = j.Close()
		}
	}()
	for _, role := range recRoles {
		j, err := openRecording(filepath.Join(cfg.Replay, role))
		if err != nil {
			return false, fmt.Errorf("trading: -replay: %w", err)
		}
		journals[role] = j
	}

	// The agents send into out and are fed through in (their inboxes).
	out, err := newLocalMailboxes(cfg, nil)
	if err != nil {
		return false, err
	}
	in, err := newLocalMailboxes(cfg, nil)
	if err != nil {
		return false, err
	}
	t2t, err := heapLatency("tick-to-trade")
	if err != nil {
		return false, err
	}
	t2o, err := heapLatency("tick-to-order")
	if err != nil {
		return false, err
	}
	// Each agent drains its own mailboxes of in and sends into out's.
	sm, km, xm := *out, *out, *out
	sm.strategyIn, sm.strategyResp = in.strategyIn, in.strategyResp
	km.riskIn, km.riskResp = in.riskIn, in.riskResp
	xm.exchangeIn = in.exchangeIn
	s, err := newStrategyAgent(cfg, monoNanos, &sm, newWords(1+numStratPub), t2t)
	if err != nil {
		return false, err
	}
	k, err := newRiskAgent(cfg, monoNanos, &km, newWords(1+numRiskPub))
	if err != nil {
		return false, err
	}
	x, err := newExchangeAgent(cfg, monoNanos, &xm, newWords(1+numExchPub), t2o)
	if err != nil {
		return false, err
	}

	orders := []int32{msg.TypeNewOrder, msg.TypeCancelOrder}
	edge := func(name string, outb *mailbox.Mailbox, role string, stream uint32, types ...int32) (*replayEdge, error) {
		t, err := journals[role].NewTailer()
		return &replayEdge{name: name, out: outb, t: t, stream: stream, types: types}, err
	}
	type stage struct {
		role   string
		inputs map[uint32]*inbox
		edges  []*replayEdge
	}
	stages := []stage{
		{roleStrategy, map[uint32]*inbox{streamStrategyIn: s.in, streamStrategyResp: s.resp}, nil},
		{roleRisk, map[uint32]*inbox{streamRiskIn: k.in, streamRiskResp: k.resp}, nil},
		{roleExchange, map[uint32]*inbox{streamExchangeIn: x.in}, nil},
	}
	var errs []error
	add := func(i int, e *replayEdge, err error) {
		if e.t != nil {
			stages[i].edges = append(stages[i].edges, e)
		}
		errs = append(errs, err)
	}
	e, err := edge("strategy->risk", out.riskIn, roleRisk, streamRiskIn, orders...)
	add(0, e, err)
	e, err = edge("risk->exchange", out.exchangeIn, roleExchange, streamExchangeIn, orders...)
	add(1, e, err)
	e, err = edge("risk->strategy", out.strategyResp, roleStrategy, streamStrategyResp, msg.TypeRiskReject)
	add(1, e, err)
	e, err = edge("exchange->strategy", out.strategyResp, roleStrategy, streamStrategyResp, msg.TypeExecutionReport)
	add(2, e, err)
	e, err = edge("exchange->risk", out.riskResp, roleRisk, streamRiskResp, msg.TypeExecutionReport)
	add(2, e, err)
	defer func() {
		for _, st := range stages {
			for _, e := range st.edges {
				_ = e.t.Close()
			}
		}
	}()
	if err := errors.Join(errs...); err != nil {
		return false, err
	}
	var replayed [3]int64
	for i, st := range stages {
		if replayed[i], err = replayStage(journals[st.role], st.inputs, st.edges); err != nil {
			return false, fmt.Errorf("trading: -replay: %s: %w", st.role, err)
		}
	}

	var res result
	res.x = x.summary()
	res.ledger = recon.Ledger{Feed: recon.Feed{Quotes: run.FeedQuotes}, Strategy: s.s.Counts(), Risk: k.c.Counts(), Exchange: res.x.Counts}
	res.ledger.Strategy.Positions = s.s.Positions(nil)
	res.ledger.Risk.Positions = k.c.Positions(nil)
	var checked, differ int64
	for _, st := range stages {
		for _, e := range st.edges {
			checked += e.checked
			differ += e.differ
			if e.differ > 0 {
				res.problems = append(res.problems, fmt.Sprintf("replayed %s differs from the recording in %d messages (first: %s)", e.name, e.differ, e.first))
			}
		}
	}
	if bad := s.undelivered() + k.undelivered() + k.c.Unknown() + res.x.Bad; bad > 0 {
		res.problems = append(res.problems, fmt.Sprintf("%d messages undecodable, unexpected or about unknown orders", bad))
	}
	if s.badAudit > 0 {
		res.problems = append(res.problems, fmt.Sprintf("%d fill reports break the order's quantities (first: %s)", s.badAudit, s.auditErr))
	}
	if res.x.CheckErrs > 0 {
		res.problems = append(res.problems, fmt.Sprintf("book invariants violated in %d of %d checks (first: %s)", res.x.CheckErrs, res.x.Checks, res.x.CheckErr))
	}
	same := slices.Equal(res.ledger.Exchange.Positions, run.Positions)
	if !same {
		res.problems = append(res.problems, "the final positions differ from the recorded run's")
	}

	fmt.Fprintf(stdout, "replayed %s: strategy %d, risk %d, exchange %d messages; %d messages sent, %d differ from the recording\n",
		cfg.Replay, replayed[0], replayed[1], replayed[2], checked, differ)
	printPositions(stdout, res.ledger.Exchange.Positions)
	if same {
		fmt.Fprintln(stdout, "positions: as in the recorded run")
	}
	fmt.Fprintln(stdout, "recorded run's", run.Line)
	fmt.Fprintln(stdout, res.line())
	return res.ok(), nil
}

// replayStage feeds one agent its journal, one message at a time, each
// into the inbox its stream names and through the agent's handler; after
// each, it checks what the agent sent. It returns the messages replayed.
func replayStage(j *journal.Journal, inputs map[uint32]*inbox, edges []*replayEdge) (int64, error) {
	n, err := eachRecord(j, func(r journal.Record) error {
		ib, known := inputs[r.StreamID]
		if !known {
			return fmt.Errorf("record at %d: stream %d is none of this agent's mailboxes", r.Position, r.StreamID)
		}
		if err := ib.Mailbox().Send(r.TypeID, r.Body); err != nil {
			return fmt.Errorf("record at %d: %w", r.Position, err)
		}
		if k, err := ib.DoWork(); err != nil || k != 1 {
			return fmt.Errorf("record at %d: the agent took %d messages (%v)", r.Position, k, err)
		}
		for _, e := range edges {
			if err := e.drain(); err != nil {
				return err
			}
		}
		return nil
	})
	for _, e := range edges {
		if err == nil {
			err = e.finish()
		}
	}
	return n, err
}
