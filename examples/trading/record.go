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

// -record DIR keeps one journal per agent (DIR/strategy, DIR/risk,
// DIR/exchange), written on the agent's thread, one stream per mailbox: a
// message is appended once its handler consumed it, so the journal holds
// the agent's input in the order thread timing gave it. The agents are
// deterministic given that input (risk's rate limit runs on the orders'
// timestamps), so -replay feeds each agent its journal and checks every
// message it sends against what its receiver recorded, per edge in FIFO
// order: the same positions and reconciliation follow.

const (
	streamStrategyIn uint32 = 1 + iota
	streamStrategyResp
	streamRiskIn
	streamRiskResp
	streamExchangeIn
)

// recRunFile, in DIR, is what replay needs to make the same agents, and
// what the recorded run ended with.
const recRunFile = "run.json"

type recordedRun struct {
	Instruments          int
	Seed                 uint64
	Rate, OrderRate      int64
	DropReport, BendFill int64
	FeedQuotes           int64
	Positions            []recon.Position // the exchange's
	Line                 string           // the reconciliation line
}

var recRoles = [3]string{roleStrategy, roleRisk, roleExchange}

// recStreams are the streams of each agent's inboxes, in recInboxes's order.
var recStreams = [3][]uint32{{streamStrategyIn, streamStrategyResp}, {streamRiskIn, streamRiskResp}, {streamExchangeIn}}

// recInboxes returns the inboxes of the agents h holds, nil for those of
// the other process.
func recInboxes(h handles) (ibs [3][]*inbox) {
	if h.Strategy != nil {
		ibs[0] = []*inbox{h.Strategy.in, h.Strategy.resp}
	}
	if h.Risk != nil {
		ibs[1] = []*inbox{h.Risk.in, h.Risk.resp}
	}
	if h.Exchange != nil {
		ibs[2] = []*inbox{h.Exchange.in}
	}
	return ibs
}

// recorder is -record's state in one process.
type recorder struct {
	dir      string
	journals []*journal.Journal
	errs     [3]error // the first append error of each agent
	n        [3]int64 // messages recorded, per agent
	remote   bool     // the exchange process records the exchange
	flushers *runner.Runner
	flushErr error // the first Flusher error, read after flushers closed
}

// checkRecordDir refuses a directory that holds a recording of one of
// roles already.
func checkRecordDir(dir string, roles ...string) error {
	for _, role := range roles {
		if _, err := os.Stat(filepath.Join(dir, role)); err == nil {
			return fmt.Errorf("%w: -record %s: %s exists already (record into a fresh directory)", errUsage, dir, filepath.Join(dir, role))
		}
	}
	return nil
}

// startRecording opens the journals of h's agents and gives their inboxes
// their streams; nil when not recording. Call it before the runners start,
// so that each journal's writer is its agent's thread.
func startRecording(cfg config, h handles) (_ *recorder, err error) {
	if cfg.Record == "" {
		return nil, nil
	}
	r := &recorder{dir: cfg.Record, remote: h.Exchange == nil}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.closeAll())
		}
	}()
	var fs []agent.Agent
	for i, ibs := range recInboxes(h) {
		if ibs == nil {
			continue
		}
		if err := checkRecordDir(cfg.Record, recRoles[i]); err != nil {
			return nil, err
		}
		j, err := journal.Open(filepath.Join(cfg.Record, recRoles[i]), journal.Options{Logger: quietLogger})
		if err != nil {
			return nil, fmt.Errorf("trading: -record: %w", err)
		}
		r.journals = append(r.journals, j)
		fs = append(fs, j.Flusher())
		for k, ib := range ibs {
			s, err := j.Stream(recStreams[i][k])
			if err != nil {
				return nil, err
			}
			ib.rec = &recStream{r: r, agent: i, s: s}
		}
	}
	// The Flushers (next segment, pre-faulting, indexes) run off the
	// agents' threads.
	c, err := agent.NewComposite(fs...)
	if err == nil {
		r.flushers, err = runner.New(c, runner.WithIdle(idle.Backoff()), runner.WithErrorHandler(func(err error) {
			if r.flushErr == nil {
				r.flushErr = err
			}
		}))
	}
	if err == nil {
		err = r.flushers.Start()
	}
	return r, err
}

// recStream is one mailbox's stream in its agent's journal.
type recStream struct {
	r     *recorder
	agent int
	s     *journal.Stream
}

// record appends a message its agent consumed, on the agent's thread,
// allocating nothing. The first error stops the agent's recording.
func (w *recStream) record(m *mailbox.Message) {
	if w.r.errs[w.agent] != nil {
		return
	}
	if _, _, err := w.s.Append(m.TypeID(), m.Payload()); err != nil {
		w.r.errs[w.agent] = err
		return
	}
	w.r.n[w.agent]++
}

// end closes the journals and returns the recording's problems. Call it
// after the agents stopped.
func (r *recorder) end() (problems []string) {
	if r == nil {
		return nil
	}
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

// finish ends the recording, writes recRunFile and prints what was
// recorded; it returns the problems to add to the run's. Call it after
// the agents, and the exchange process, stopped.
func (r *recorder) finish(w io.Writer, cfg config, res *result) []string {
	if r == nil {
		return nil
	}
	problems := r.end()
	if r.remote {
		n, err := eachRecord(filepath.Join(r.dir, roleExchange), func(journal.Record) error { return nil })
		if err != nil {
			problems = append(problems, "the exchange process's recording: "+err.Error())
		}
		r.n[2] = n
	}
	run := recordedRun{
		Instruments: cfg.Instruments, Seed: cfg.Seed, Rate: cfg.Rate, OrderRate: cfg.OrderRate,
		DropReport: cfg.dropReport, BendFill: cfg.bendFill,
		FeedQuotes: res.ledger.Feed.Quotes, Positions: res.ledger.Exchange.Positions, Line: res.line(),
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

// openTailer opens the recorded journal in dir for reading; close closes
// both.
func openTailer(dir string) (t *journal.Tailer, close func(), err error) {
	j, err := journal.Open(dir, journal.Options{ReadOnly: true, Logger: quietLogger})
	if err != nil {
		return nil, nil, err
	}
	if t, err = j.NewTailer(); err != nil {
		return nil, nil, errors.Join(err, j.Close())
	}
	return t, func() { _ = t.Close(); _ = j.Close() }, nil
}

// eachRecord calls f with each record of the closed journal in dir, in
// order, until f fails, and returns the records f took.
func eachRecord(dir string, f func(journal.Record) error) (n int64, err error) {
	t, closeT, err := openTailer(dir)
	if err != nil {
		return 0, err
	}
	defer closeT()
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

func printPositions(w io.Writer, ps []recon.Position) {
	fmt.Fprintf(w, "%-10s %12s %16s %10s %10s\n", "position", "net", "cash", "open-buy", "open-sell")
	for i, p := range ps {
		fmt.Fprintf(w, "%-10d %12d %16d %10d %10d\n", i, p.Net, p.Cash, p.OpenBuy, p.OpenSell)
	}
}

// replayCapacity is the replay's mailbox size: the outputs of one input
// always fit.
const replayCapacity = 1 << 20

// replayEdge is one sender's messages to one receiver: what the replayed
// sender sends into out is checked, in order, against the records of the
// receiver's journal on stream with one of types.
type replayEdge struct {
	name            string
	out             *mailbox.Mailbox
	t               *journal.Tailer
	stream          uint32
	types           []int32
	checked, differ int64
	first           string // the first difference
	err             error
}

func (e *replayEdge) next() (journal.Record, bool, error) {
	for {
		r, ok, err := e.t.Next()
		if err != nil || !ok || r.StreamID == e.stream && slices.Contains(e.types, r.TypeID) {
			return r, ok, err
		}
	}
}

// drain checks what the sender sent into out since the last drain.
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
	if e.differ++; e.first == "" {
		e.first = what
	}
}

// rest counts the recorded messages the replayed sender never sent.
func (e *replayEdge) rest() error {
	for {
		r, ok, err := e.next()
		if err != nil || !ok {
			return err
		}
		e.mismatch(fmt.Sprintf("type %d recorded at %d, never sent", r.TypeID, r.Position))
	}
}

// runReplay replays the run recorded in cfg.Replay and prints the final
// positions and the reconciliation line, last.
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
	cfg.dropReport, cfg.bendFill, cfg.Capacity = run.DropReport, run.BendFill, replayCapacity
	if err := cfg.check(); err != nil {
		return false, fmt.Errorf("trading: -replay: %s: %w", recRunFile, err)
	}
	// The agents drain the mailboxes of in and send into out's.
	out, err1 := newLocalMailboxes(cfg, nil)
	in, err2 := newLocalMailboxes(cfg, nil)
	if err := errors.Join(err1, err2); err != nil {
		return false, err
	}
	sm, km, xm := *out, *out, *out
	sm.strategyIn, sm.strategyResp = in.strategyIn, in.strategyResp
	km.riskIn, km.riskResp = in.riskIn, in.riskResp
	xm.exchangeIn = in.exchangeIn
	t2t, err1 := heapLatency("tick-to-trade")
	t2o, err2 := heapLatency("tick-to-order")
	s, err3 := newStrategyAgent(cfg, monoNanos, &sm, latencies{t2t: t2t})
	k, err4 := newRiskAgent(cfg, monoNanos, &km, latencies{})
	x, err5 := newExchangeAgent(cfg, monoNanos, &xm, exchangeWords(newWords(1+numExchPub)), latencies{t2o: t2o})
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return false, err
	}

	var closers []func()
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	edge := func(name string, outb *mailbox.Mailbox, role string, stream uint32, types ...int32) *replayEdge {
		e := &replayEdge{name: name, out: outb, stream: stream, types: types}
		var closeT func()
		if e.t, closeT, e.err = openTailer(filepath.Join(cfg.Replay, role)); e.err == nil {
			closers = append(closers, closeT)
		}
		return e
	}
	orders := []int32{msg.TypeNewOrder, msg.TypeCancelOrder}
	edges := [3][]*replayEdge{
		{edge("strategy->risk", out.riskIn, roleRisk, streamRiskIn, orders...)},
		{edge("risk->exchange", out.exchangeIn, roleExchange, streamExchangeIn, orders...),
			edge("risk->strategy", out.strategyResp, roleStrategy, streamStrategyResp, msg.TypeRiskReject)},
		{edge("exchange->strategy", out.strategyResp, roleStrategy, streamStrategyResp, msg.TypeExecutionReport),
			edge("exchange->risk", out.riskResp, roleRisk, streamRiskResp, msg.TypeExecutionReport)},
	}
	var replayed [3]int64
	for i, ibs := range recInboxes(handles{Strategy: s, Risk: k, Exchange: x}) {
		if replayed[i], err = replayAgent(filepath.Join(cfg.Replay, recRoles[i]), recStreams[i], ibs, edges[i]); err != nil {
			return false, fmt.Errorf("trading: -replay: %s: %w", recRoles[i], err)
		}
	}

	res := result{x: x.summary()}
	res.ledger = recon.Ledger{Feed: recon.Feed{Quotes: run.FeedQuotes}, Strategy: s.s.Counts(), Risk: k.c.Counts(), Exchange: res.x.Counts}
	res.ledger.Strategy.Positions = s.s.Positions(nil)
	res.ledger.Risk.Positions = k.c.Positions(nil)
	var checked, differ int64
	for _, e := range slices.Concat(edges[:]...) {
		checked += e.checked
		differ += e.differ
		if e.differ > 0 {
			res.problems = append(res.problems, fmt.Sprintf("replayed %s differs from the recording in %d messages (first: %s)", e.name, e.differ, e.first))
		}
	}
	res.problems = append(res.problems, stageProblems(s, k, res.x)...)
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

// replayAgent feeds one agent the journal in dir, one message at a time,
// each into the inbox of its stream (inboxes[k] has streams[k]), and
// checks what the agent sent after each. It returns the messages replayed.
func replayAgent(dir string, streams []uint32, inboxes []*inbox, edges []*replayEdge) (int64, error) {
	for _, e := range edges {
		if e.err != nil {
			return 0, e.err
		}
	}
	n, err := eachRecord(dir, func(r journal.Record) error {
		k := slices.Index(streams, r.StreamID)
		if k < 0 {
			return fmt.Errorf("record at %d: stream %d is none of this agent's mailboxes", r.Position, r.StreamID)
		}
		if err := inboxes[k].mb.Send(r.TypeID, r.Body); err != nil {
			return fmt.Errorf("record at %d: %w", r.Position, err)
		}
		if n, err := inboxes[k].DoWork(); err != nil || n != 1 {
			return fmt.Errorf("record at %d: the agent took %d messages (%v)", r.Position, n, err)
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
			err = e.rest()
		}
	}
	return n, err
}
