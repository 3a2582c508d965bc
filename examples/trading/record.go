package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/dutyrt/duty/agent"
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
		j, err := journal.Open(dir, journal.Options{Logger: slog.New(slog.DiscardHandler)})
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
	return journal.Open(dir, journal.Options{ReadOnly: true, Logger: slog.New(slog.DiscardHandler)})
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
