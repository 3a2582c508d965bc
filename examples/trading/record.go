package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/fnv"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/mailbox"
)

// Record and replay (-record DIR, -replay DIR).
//
// Every agent but the feed is deterministic given the messages it
// handles and the order it handles them in: the strategy's choices come
// from a seeded generator, risk's rate limit counts time in the
// OriginNanos its messages carry, and the exchange matches what it is
// given. What a run leaves to timing is only that order: which quote,
// report or reject an agent's two mailboxes hand it next. So -record
// writes, for each agent, every message it handles, in the order it
// handles it, into a journal of its own (DIR/strategy, DIR/risk,
// DIR/exchange; stream 1 for its "in" mailbox, stream 2 for "resp"), and
// DIR/run.json with the configuration the agents depend on and the
// number of quotes the feed made.
//
// -replay DIR builds fresh agents from run.json and hands each its own
// journal, record by record, through the same handlers; what each sends
// goes to mailboxes that the replay drains into hashes. A replay is
// checked, not only rerun: every output stream must hash equal to the
// records the receiving agent handled in the recording (the strategy's
// orders and cancels to what risk received of them, risk's orders and
// cancels to the exchange's, risk's rejects and the exchange's reports to
// the strategy's and risk's), and the three agents must have handled the
// same quotes, as many as the feed made. Then the ledger of the replayed
// agents is reconciled and printed like a live run's, with the final
// positions, which equal the recorded run's.

// The journal streams of a recording: the mailbox a message came from.
const (
	streamIn   uint32 = 1
	streamResp uint32 = 2
)

const fileRecordedRun = "run.json"

// recordedRun is run.json: what the agents' behaviour depends on, and the
// feed's count, written when the recorded run has ended.
type recordedRun struct {
	Instruments int
	Seed        uint64
	Rate        int64
	OrderRate   int64
	DropReport  int64
	BendFill    int64
	FeedQuotes  int64
	// Positions is the ledger's digest of the final positions (positions),
	// for the replay to compare with its own.
	Positions string
}

// recorder appends what one agent handles to its journal. It belongs to
// the agent's thread; a failure stops the recording and is reported at
// the end (the run itself goes on).
type recorder struct {
	j   *journal.Journal
	err error
}

// note appends m as handled from stream. r may be nil (not recording).
func (r *recorder) note(stream uint32, m *mailbox.Message) {
	if r == nil || r.err != nil {
		return
	}
	p := m.Payload()
	c, err := r.j.Claim(stream, m.TypeID(), len(p))
	if err == nil {
		copy(c.Body, p)
		err = r.j.Commit()
	}
	if err != nil {
		r.err = fmt.Errorf("recording %s: %w", r.j.Dir(), err)
	}
}

// recording is -record's state: the agents' recorders and the goroutine
// that runs their journals' Flushers (next segments made ahead of the
// appenders, off their threads).
type recording struct {
	dir  string
	recs map[string]*recorder // by role
	stop chan struct{}
	done sync.WaitGroup
}

// startRecording creates DIR (which must not hold a recording already)
// and a journal for each of roles.
func startRecording(dir string, roles ...string) (_ *recording, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, fileRecordedRun)); err == nil {
		return nil, fmt.Errorf("%w: -record %s already holds a recording", errUsage, dir)
	}
	rc := &recording{dir: dir, recs: map[string]*recorder{}, stop: make(chan struct{})}
	defer func() {
		if err != nil {
			err = errors.Join(err, rc.close())
		}
	}()
	var flushers []*journal.Flusher
	for _, role := range roles {
		j, err := journal.Open(filepath.Join(dir, role), journal.Options{})
		if err != nil {
			return nil, err
		}
		if j.CommittedPosition() != j.FirstPosition() {
			j.Close()
			return nil, fmt.Errorf("%w: -record %s: %s already holds records", errUsage, dir, role)
		}
		rc.recs[role] = &recorder{j: j}
		flushers = append(flushers, j.Flusher())
	}
	rc.done.Add(1)
	go func() {
		defer rc.done.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-rc.stop:
				return
			case <-t.C:
				for _, f := range flushers {
					_, _ = f.DoWork() // a failure shows at the appender's next Claim
				}
			}
		}
	}()
	return rc, nil
}

// of returns role's recorder, nil for a nil recording.
func (rc *recording) of(role string) *recorder {
	if rc == nil {
		return nil
	}
	return rc.recs[role]
}

// finish writes run.json after the agents have stopped, and reports the
// recorders' failures.
func (rc *recording) finish(cfg config, feedQuotes int64, positions string) error {
	var errs []error
	for _, r := range rc.recs {
		errs = append(errs, r.err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	run := recordedRun{
		Instruments: cfg.Instruments, Seed: cfg.Seed, Rate: cfg.Rate, OrderRate: cfg.OrderRate,
		DropReport: cfg.dropReport, BendFill: cfg.bendFill, FeedQuotes: feedQuotes, Positions: positions,
	}
	data, err := json.MarshalIndent(&run, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(rc.dir, fileRecordedRun), data, 0o644)
}

// close stops the flushing goroutine and closes the journals (a final
// flush each). Safe on a nil recording.
func (rc *recording) close() error {
	if rc == nil {
		return nil
	}
	close(rc.stop)
	rc.done.Wait()
	var errs []error
	for _, r := range rc.recs {
		errs = append(errs, r.j.Close())
	}
	return errors.Join(errs...)
}

// positions is a digest of the ledger's final positions, printed by every
// run so that a replay's can be compared with its recording's: the
// strategy's and the exchange's positions per instrument (net, cash, open
// buys, open sells), hashed.
func positions(l *recon.Ledger) string {
	h := fnv.New64a()
	var b [8]byte
	for _, ps := range [][]recon.Position{l.Strategy.Positions, l.Exchange.Positions} {
		for _, p := range ps {
			for _, v := range []int64{p.Net, p.Cash, p.OpenBuy, p.OpenSell} {
				binary.LittleEndian.PutUint64(b[:], uint64(v))
				h.Write(b[:])
			}
		}
		h.Write([]byte{0xff})
	}
	return fmt.Sprintf("%016x", h.Sum64())
}

// streamHash hashes a sequence of messages (type id, length, bytes).
type streamHash struct {
	h hash.Hash64
	n int64
}

func newStreamHash() *streamHash { return &streamHash{h: fnv.New64a()} }

func (s *streamHash) add(typeID int32, body []byte) {
	var b [8]byte
	binary.LittleEndian.PutUint32(b[:4], uint32(typeID))
	binary.LittleEndian.PutUint32(b[4:], uint32(len(body)))
	s.h.Write(b[:])
	s.h.Write(body)
	s.n++
}

func (s *streamHash) equal(o *streamHash) bool { return s.n == o.n && s.h.Sum64() == o.h.Sum64() }

// replayFlow is one flow of messages between two agents: what the
// recording says its receiver handled, and what the replayed sender sent.
type replayFlow struct {
	name           string
	recorded, sent *streamHash
}

// runReplay replays the recording in cfg.Replay (see the top of this
// file) and prints the final table and the reconciliation line.
func runReplay(cfg config, stdout io.Writer) (ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(cfg.Replay, fileRecordedRun))
	if err != nil {
		return false, fmt.Errorf("-replay %s: not a finished recording: %w", cfg.Replay, err)
	}
	var run recordedRun
	if err := json.Unmarshal(data, &run); err != nil {
		return false, fmt.Errorf("-replay %s: %s: %w", cfg.Replay, fileRecordedRun, err)
	}
	cfg.Instruments, cfg.Seed, cfg.Rate, cfg.OrderRate = run.Instruments, run.Seed, run.Rate, run.OrderRate
	cfg.dropReport, cfg.bendFill = run.DropReport, run.BendFill
	if err := cfg.check(); err != nil {
		return false, fmt.Errorf("-replay %s: %s: %w", cfg.Replay, fileRecordedRun, err)
	}
	started := time.Now()

	mk := func(name string) *mailbox.Mailbox {
		if err != nil {
			return nil
		}
		var m *mailbox.Mailbox
		m, err = mailbox.New(mailbox.Config{Name: name, Capacity: cfg.Capacity})
		return m
	}
	// Each agent gets mailboxes of its own: its inputs, which the replay
	// fills from its journal, and its outputs, which the replay drains.
	sm := &mailboxes{strategyIn: mk("strategy.in"), strategyResp: mk("strategy.resp"), riskIn: mk("strategy->risk")}
	rm := &mailboxes{riskIn: mk("risk.in"), riskResp: mk("risk.resp"), exchangeIn: mk("risk->exchange"), strategyResp: mk("risk->strategy")}
	xm := &mailboxes{exchangeIn: mk("exchange.in"), strategyResp: mk("exchange->strategy"), riskResp: mk("exchange->risk")}
	if err != nil {
		return false, err
	}
	t2t, err := heapLatency("replay t2t")
	if err != nil {
		return false, err
	}
	t2o, err := heapLatency("replay t2o")
	if err != nil {
		return false, err
	}
	s, err := newStrategyAgent(cfg, monoNanos, sm, newWords(1+numStratPub), t2t)
	if err != nil {
		return false, err
	}
	k, err := newRiskAgent(cfg, rm, newWords(1+numRiskPub))
	if err != nil {
		return false, err
	}
	x, err := newExchangeAgent(cfg, monoNanos, xm, newWords(1+numExchPub), t2o)
	if err != nil {
		return false, err
	}

	// The flows, each hashed twice: as recorded by its receiver, as sent
	// by its replayed sender.
	flow := func(name string) *replayFlow {
		return &replayFlow{name: name, recorded: newStreamHash(), sent: newStreamHash()}
	}
	quotes := [3]*replayFlow{flow("quotes to the strategy"), flow("quotes to risk"), flow("quotes to the exchange")}
	sOrders, kOrders := flow("strategy's orders and cancels to risk"), flow("risk's orders and cancels to the exchange")
	kRejects := flow("risk's rejects to the strategy")
	xReportsS, xReportsR := flow("exchange's reports to the strategy"), flow("exchange's reports to risk")
	flows := []*replayFlow{quotes[0], quotes[1], quotes[2], sOrders, kOrders, kRejects, xReportsS, xReportsR}

	type side struct {
		role string
		in   [3]inbox              // by stream
		recv map[int32]*replayFlow // what this agent handled, by type
		outs map[*mailbox.Mailbox]*replayFlow
	}
	sides := []side{
		{roleStrategy, [3]inbox{streamIn: s.in, streamResp: s.resp},
			map[int32]*replayFlow{msg.TypeQuote: quotes[0], msg.TypeExecutionReport: xReportsS, msg.TypeRiskReject: kRejects},
			map[*mailbox.Mailbox]*replayFlow{sm.riskIn: sOrders}},
		{roleRisk, [3]inbox{streamIn: k.in, streamResp: k.resp},
			map[int32]*replayFlow{msg.TypeQuote: quotes[1], msg.TypeNewOrder: sOrders, msg.TypeCancelOrder: sOrders, msg.TypeExecutionReport: xReportsR},
			map[*mailbox.Mailbox]*replayFlow{rm.exchangeIn: kOrders, rm.strategyResp: kRejects}},
		{roleExchange, [3]inbox{streamIn: x.in},
			map[int32]*replayFlow{msg.TypeQuote: quotes[2], msg.TypeNewOrder: kOrders, msg.TypeCancelOrder: kOrders},
			map[*mailbox.Mailbox]*replayFlow{xm.strategyResp: xReportsS, xm.riskResp: xReportsR}},
	}
	var problems []string
	for _, sd := range sides {
		n, err := replayAgent(filepath.Join(cfg.Replay, sd.role), sd.in, sd.recv, sd.outs)
		if err != nil {
			return false, fmt.Errorf("-replay %s: %s: %w", cfg.Replay, sd.role, err)
		}
		if n == 0 {
			problems = append(problems, "the recording of "+sd.role+" is empty")
		}
	}
	// Quotes have no replayed sender: the feed's count stands for it, and
	// the three agents must have handled the same ones.
	quotes[0].sent = quotes[1].recorded
	quotes[1].sent = quotes[2].recorded
	quotes[2].sent = quotes[0].recorded
	if quotes[0].recorded.n != run.FeedQuotes {
		problems = append(problems, fmt.Sprintf("the recording has %d quotes, the feed made %d", quotes[0].recorded.n, run.FeedQuotes))
	}
	for _, f := range flows {
		if !f.recorded.equal(f.sent) {
			problems = append(problems, fmt.Sprintf("replay diverged: %s: %d recorded, %d replayed, not the same", f.name, f.recorded.n, f.sent.n))
		}
	}

	var res result
	res.why = "replayed " + cfg.Replay
	res.mode = "replay"
	res.x = x.summary()
	res.ledger = recon.Ledger{Feed: recon.Feed{Quotes: run.FeedQuotes}, Strategy: s.s.Counts(), Risk: k.c.Counts(), Exchange: res.x.Counts}
	res.ledger.Strategy.Positions = s.s.Positions(nil)
	res.ledger.Risk.Positions = k.c.Positions(nil)
	res.t2t, res.t2o = newHist(), newHist()
	res.total = time.Since(started)
	res.problems = append(problems, res.problems...)
	if bad := s.bad + k.bad + k.c.Unknown() + res.x.Bad; bad > 0 {
		res.problems = append(res.problems, fmt.Sprintf("%d messages undecodable, unexpected or about unknown orders", bad))
	}
	if run.Positions != "" && positions(&res.ledger) != run.Positions {
		res.problems = append(res.problems, fmt.Sprintf("final positions %s, recorded %s", positions(&res.ledger), run.Positions))
	}
	res.print(stdout, cfg, handles{})
	return res.ok(), nil
}

// replayAgent hands the records of the journal in dir to the agent's
// inboxes, one at a time and in order, hashing each into recv by type,
// and after each drains the agent's output mailboxes into outs. It returns
// the number of records.
func replayAgent(dir string, in [3]inbox, recv map[int32]*replayFlow, outs map[*mailbox.Mailbox]*replayFlow) (int64, error) {
	j, err := journal.Open(dir, journal.Options{ReadOnly: true})
	if err != nil {
		return 0, err
	}
	defer j.Close()
	tl, err := j.NewTailer()
	if err != nil {
		return 0, err
	}
	defer tl.Close()
	var n int64
	var hashInto *replayFlow
	sink := func(m *mailbox.Message) mailbox.Action {
		hashInto.sent.add(m.TypeID(), m.Payload())
		return mailbox.Continue
	}
	for {
		rec, ok, err := tl.Next()
		if err != nil {
			return n, err
		}
		if !ok {
			return n, nil
		}
		n++
		if rec.StreamID != streamIn && rec.StreamID != streamResp || in[rec.StreamID].b == nil {
			return n, fmt.Errorf("%w: record %d at %d: stream %d", errBadRecording, n, rec.Position, rec.StreamID)
		}
		f := recv[rec.TypeID]
		if f == nil {
			return n, fmt.Errorf("%w: record %d at %d: type %d", errBadRecording, n, rec.Position, rec.TypeID)
		}
		f.recorded.add(rec.TypeID, rec.Body)
		box := in[rec.StreamID]
		if err := box.b.Send(rec.TypeID, rec.Body); err != nil {
			return n, err
		}
		if d, err := box.b.Drain(box.h, 1); err != nil || d != 1 {
			return n, fmt.Errorf("record %d at %d: the agent did not take it (%d, %v)", n, rec.Position, d, err)
		}
		for mb, f := range outs {
			hashInto = f
			if _, err := mb.Drain(sink, mailbox.DefaultDrainLimit); err != nil {
				return n, err
			}
			if mb.Stats().Depth != 0 {
				return n, fmt.Errorf("record %d at %d: more output than a drain takes", n, rec.Position)
			}
		}
	}
}

// errBadRecording is wrapped by every error about a recording that is not
// the demo's.
var errBadRecording = errors.New("trading: not a recording of this demo")
