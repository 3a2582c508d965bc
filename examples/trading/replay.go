package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/mailbox"
)

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
