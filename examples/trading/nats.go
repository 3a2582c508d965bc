package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/natsbridge"
	"github.com/dutyrt/duty/runner"
)

// -nats mode: the exchange runs in a second process, as with -ipc (the
// same -role exchange child, the same directory for its counters,
// histograms, error log and summary), but its three mailboxes are local
// to each process and their messages cross only NATS, through
// natsbridge in core mode:
//
//	exchange.in     demo: mailbox -> Outbound   child: Inbound -> mailbox
//	strategy.resp   child: mailbox -> Outbound  demo: Inbound -> mailbox
//	risk.resp       child: mailbox -> Outbound  demo: Inbound -> mailbox
//
// on subjects <prefix>.<mailbox>, the prefix derived from the directory so
// that two runs can share a server. Two more subjects carry the control
// the shared files carry with -ipc: <prefix>.status, which the child
// answers with its counts (what its inbound bridge delivered, what it
// holds, what its outbound bridges batched), from which the demo keeps
// an estimate of the messages in flight between the processes as the
// exchange's pending word (the drain waits for it to be 0); and
// <prefix>.end, the demo's end after the drain, with the number of
// messages its bridge sent: the child waits until it has delivered as
// many, then closes its exchange.in, and the exchange agent finishes as
// with -ipc. Losses a bridge counts (core NATS mode is at most once) are
// problems of the run: the reconciliation is not ok.
//
// With -nats alone the demo starts a nats-server itself, embedded, on a
// free loopback port; with -nats URL it connects to that server.

// natsEmbedded is config.NATS for -nats without a URL.
const natsEmbedded = "embedded"

// natsPrefix is the subject prefix of a run: one per directory.
func natsPrefix(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(dir))
	return fmt.Sprintf("duty.trading.%016x", h.Sum64())
}

// natsStatus is the child's answer on <prefix>.status. It reads its
// counts in the order a message travels (delivered, then held, then
// batched), so that a message moving meanwhile is counted twice rather
// than missed.
type natsStatus struct {
	Delivered int64 // exchange.in messages the inbound bridge delivered (or dropped)
	Busy      int64 // bytes in its mailboxes plus the exchange's pending output
	Batched   int64 // messages its outbound bridges batched
}

// natsLink is one process's side of -nats: its bridges, their runner and
// the control connection.
type natsLink struct {
	cfg     config
	prefix  string
	url     string
	srv     *server.Server // the embedded server (the demo, -nats alone)
	nc      *nats.Conn     // control: status and end
	outs    []*natsbridge.Outbound
	ins     []*natsbridge.Inbound
	run     *runner.Runner // the outbound bridges
	restore func()         // GOMAXPROCS as it was
	logger  *slog.Logger
	stderr  io.Writer

	// The demo: the estimate of messages in flight, the exchange's
	// pending word for quiesce; watch's goroutine keeps it.
	inflight atomic.Int64
	stop     chan struct{}
	wg       sync.WaitGroup

	// The child.
	mbs  *mailboxes
	exch *atomic.Int64 // the exchange's pending word
}

func newNATSLink(cfg config, dir string, logger *slog.Logger) *natsLink {
	l := &natsLink{cfg: cfg, prefix: natsPrefix(dir), url: cfg.NATS, logger: logger, stop: make(chan struct{})}
	// A runner parked in nanosleep(2) keeps its P until the runtime takes
	// it back: with GOMAXPROCS at the CPU count, the agents' runners and
	// the bridges' would leave the NATS client's goroutines (and the
	// embedded server's) waiting for a P.
	prev := runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), runtime.NumCPU()+2))
	l.restore = func() { runtime.GOMAXPROCS(prev) }
	return l
}

// recvCapacity is the ring of a mailbox a bridge delivers into: core NATS
// mode drops what a full mailbox refuses, so it holds many batches.
func recvCapacity(cfg config) int { return max(cfg.Capacity, 4<<20) }

func (l *natsLink) bridgeConfig(name string, mb *mailbox.Mailbox, ctrs *counters.Manager) natsbridge.Config {
	c := natsbridge.Config{Name: name, Subject: l.prefix + "." + name, URL: l.url, Counters: ctrs, Logger: l.logger}
	if need := mb.MaxMessageSize() + 64; need > natsbridge.DefaultBatchBytes {
		c.BatchBytes = need
	}
	return c
}

func (l *natsLink) addOutbound(ctx context.Context, name string, mb *mailbox.Mailbox, ctrs *counters.Manager) error {
	o, err := natsbridge.NewOutbound(ctx, l.bridgeConfig(name, mb, ctrs), mb)
	if err == nil {
		l.outs = append(l.outs, o)
	}
	return err
}

func (l *natsLink) addInbound(ctx context.Context, name string, mb *mailbox.Mailbox, ctrs *counters.Manager) error {
	in, err := natsbridge.NewInbound(ctx, l.bridgeConfig(name, mb, ctrs), mb)
	if err == nil {
		l.ins = append(l.ins, in)
	}
	return err
}

// startOutbounds runs the outbound bridges on a runner of their own.
func (l *natsLink) startOutbounds() error {
	var a agent.Agent = l.outs[0]
	if len(l.outs) > 1 {
		members := make([]agent.Agent, len(l.outs))
		for i, o := range l.outs {
			members[i] = o
		}
		c, err := agent.NewComposite(members...)
		if err != nil {
			return err
		}
		a = c
	}
	b, err := idle.NewBackoff(idle.BackoffConfig{MaxSpins: 10, MaxYields: 5,
		MinPark: time.Microsecond, MaxPark: 100 * time.Microsecond})
	if err != nil {
		return err
	}
	r, err := runner.New(a, runner.WithIdle(b), runner.WithThreadName("natsbridge"))
	if err != nil {
		return err
	}
	if err := r.Start(); err != nil {
		return err
	}
	l.run = r
	return nil
}

// delivered is what the inbound bridges delivered or dropped.
func (l *natsLink) delivered() int64 {
	var n int64
	for _, in := range l.ins {
		st := in.Stats()
		n += st.Delivered + st.Dropped
	}
	return n
}

func (l *natsLink) batched() int64 {
	var n int64
	for _, o := range l.outs {
		n += o.Stats().Batched
	}
	return n
}

// losses returns a problem for every bridge that lost, dropped or
// rejected messages.
func (l *natsLink) losses() []string {
	if l == nil {
		return nil
	}
	var out []string
	for _, in := range l.ins {
		if st := in.Stats(); st.Dropped+st.LostBatches+st.Rejected > 0 {
			out = append(out, fmt.Sprintf("nats bridge %s: %d messages dropped, %d batches lost, %d frames rejected",
				in.RoleName(), st.Dropped, st.LostBatches, st.Rejected))
		}
	}
	for _, o := range l.outs {
		if st := o.Stats(); st.Dropped > 0 {
			out = append(out, fmt.Sprintf("nats bridge %s: %d messages dropped", o.RoleName(), st.Dropped))
		}
	}
	return out
}

// describe is the bridges' counters, one line.
func (l *natsLink) describe() string {
	var parts []string
	for _, o := range l.outs {
		st := o.Stats()
		parts = append(parts, fmt.Sprintf("%s: %d messages in %d batches", o.RoleName(), st.Batched, st.Published))
	}
	for _, in := range l.ins {
		st := in.Stats()
		parts = append(parts, fmt.Sprintf("%s: %d delivered, %d dropped, %d batches lost", in.RoleName(), st.Delivered, st.Dropped, st.LostBatches))
	}
	return strings.Join(parts, "; ")
}

// close stops the bridges and the control connection, and the embedded
// server last. The outbound bridges get a second to hand over what their
// mailboxes still hold.
func (l *natsLink) close() error {
	if l == nil {
		return nil
	}
	l.stopWatch()
	var errs []error
	if l.run != nil {
		for deadline := time.Now().Add(time.Second); l.mbs != nil && time.Now().Before(deadline); {
			if depth(l.mbs.strategyResp)+depth(l.mbs.riskResp) == 0 {
				break
			}
			time.Sleep(time.Millisecond)
		}
		errs = append(errs, l.run.Close())
	} else {
		for _, o := range l.outs {
			errs = append(errs, o.OnClose())
		}
	}
	for _, in := range l.ins {
		errs = append(errs, in.OnClose())
	}
	if l.nc != nil {
		l.nc.Close()
	}
	if l.srv != nil {
		l.srv.Shutdown()
		l.srv.WaitForShutdown()
	}
	l.restore()
	return errors.Join(errs...)
}

func (l *natsLink) stopWatch() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// depth is the bytes a mailbox holds (0 for none or no mailbox).
func depth(mb *mailbox.Mailbox) int64 {
	if mb == nil {
		return 0
	}
	return int64(mb.Stats().Depth)
}

// startNATS is startRemote's -nats part: the demo's mailboxes, the
// server (embedded for -nats alone), the bridges, the exchange process,
// and the wait for it to answer on the status subject.
func (r *remoteExchange) startNATS(stderr io.Writer) error {
	cfg := r.cfg
	l := newNATSLink(cfg, r.dir, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	r.nats = l
	l.stderr = stderr
	if l.url == natsEmbedded {
		s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
		if err != nil {
			return fmt.Errorf("trading: nats-server: %w", err)
		}
		s.Start()
		l.srv = s
		if !s.ReadyForConnections(10 * time.Second) {
			return errors.New("trading: the embedded nats-server is not ready")
		}
		l.url = s.ClientURL()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ctrs := r.demoCtr.Manager()
	mk := func(name string, capacity int) (*mailbox.Mailbox, error) {
		return mailbox.New(mailbox.Config{Name: name, Capacity: capacity, Counters: ctrs})
	}
	var err error
	if r.mbs.strategyResp, err = mk("strategy.resp", recvCapacity(cfg)); err != nil {
		return err
	}
	if r.mbs.riskResp, err = mk("risk.resp", recvCapacity(cfg)); err != nil {
		return err
	}
	if r.mbs.exchangeIn, err = mk("exchange.in", cfg.Capacity); err != nil {
		return err
	}
	if r.mbs.strategyIn, err = mk("strategy.in", cfg.Capacity); err != nil {
		return err
	}
	if r.mbs.riskIn, err = mk("risk.in", cfg.Capacity); err != nil {
		return err
	}
	// The inbound bridges subscribe before the exchange can answer.
	if err := l.addInbound(ctx, "strategy.resp", r.mbs.strategyResp, ctrs); err != nil {
		return err
	}
	if err := l.addInbound(ctx, "risk.resp", r.mbs.riskResp, ctrs); err != nil {
		return err
	}
	if err := l.addOutbound(ctx, "exchange.in", r.mbs.exchangeIn, ctrs); err != nil {
		return err
	}
	if l.nc, err = nats.Connect(l.url, nats.Name("duty-trading-control")); err != nil {
		return fmt.Errorf("trading: nats: %w", err)
	}
	how := "a server of its own, embedded"
	if cfg.NATS != natsEmbedded {
		how = "the server given"
	}
	// Before the wait: an exchange process started by hand needs the URL.
	fmt.Fprintf(stderr, "nats: the exchange process is connected through %s (%s), subjects %s.*\n", l.url, how, l.prefix)
	if cfg.Spawn {
		if err := r.spawn(stderr); err != nil {
			return err
		}
	}
	// The exchange process is ready once it answers: its inbound bridge
	// has subscribed by then.
	for {
		if _, err := l.status(); err == nil {
			break
		}
		if r.childExited() {
			return fmt.Errorf("trading: the exchange process exited: %v", r.waitErr)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("trading: no answer from the exchange process on %s.status: %w", l.prefix, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := l.startOutbounds(); err != nil {
		return err
	}
	l.inflight.Store(1) // not quiet until the first answer
	r.mbs.exchangePending = &l.inflight
	l.wg.Add(1)
	go l.watch()
	return nil
}

func (l *natsLink) status() (natsStatus, error) {
	var st natsStatus
	m, err := l.nc.Request(l.prefix+".status", nil, 250*time.Millisecond)
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(m.Data, &st)
}

// watch keeps the demo's estimate of the messages between the processes:
// sent by its outbound bridge and not yet delivered in the child, held
// in the child, batched by the child's bridges and not yet delivered
// here. It reads the child's counts before its own (sent and delivered
// here only grow), so that the estimate errs high, never low; an
// unanswered request makes it 1.
func (l *natsLink) watch() {
	defer l.wg.Done()
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-tick.C:
		}
		st, err := l.status()
		if err != nil {
			l.inflight.Store(1)
			continue
		}
		v := (l.batched() - st.Delivered) + st.Busy + (st.Batched - l.delivered())
		if v < 0 {
			v = 1 // cannot happen with counts read in this order; never quiet on it
		}
		l.inflight.Store(v)
	}
}

// end is finish's -nats part, after the drain: it tells the exchange
// process how many messages the demo sent; the process closes its
// exchange.in once it has delivered them all.
func (l *natsLink) end(limit time.Duration) []string {
	l.stopWatch()
	sent := l.batched()
	var problems []string
	m, err := l.nc.Request(l.prefix+".end", []byte(strconv.FormatInt(sent, 10)), limit)
	switch {
	case err != nil:
		problems = append(problems, fmt.Sprintf("nats: no answer to the end on %s.end: %v", l.prefix, err))
	case string(m.Data) != "ok":
		problems = append(problems, "nats: the exchange process: "+string(m.Data))
	}
	fmt.Fprintf(l.stderr, "nats: %s\n", l.describe())
	return append(problems, l.losses()...)
}

// startNATSExchange is the exchange process's -nats part: its mailboxes,
// bridges and answers to status and end. pending is the exchange's
// pending word.
func startNATSExchange(cfg config, ctrs *counters.Manager, pending *atomic.Int64, logger *slog.Logger) (_ *natsLink, err error) {
	l := newNATSLink(cfg, cfg.Dir, logger)
	defer func() {
		if err != nil {
			err = errors.Join(err, l.close())
		}
	}()
	l.exch = pending
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mk := func(name string, capacity int) (*mailbox.Mailbox, error) {
		return mailbox.New(mailbox.Config{Name: name, Capacity: capacity, Counters: ctrs})
	}
	m := &mailboxes{}
	if m.exchangeIn, err = mk("exchange.in", recvCapacity(cfg)); err != nil {
		return l, err
	}
	if m.strategyResp, err = mk("strategy.resp", cfg.Capacity); err != nil {
		return l, err
	}
	if m.riskResp, err = mk("risk.resp", cfg.Capacity); err != nil {
		return l, err
	}
	l.mbs = m
	if err := l.addInbound(ctx, "exchange.in", m.exchangeIn, ctrs); err != nil {
		return l, err
	}
	if err := l.addOutbound(ctx, "strategy.resp", m.strategyResp, ctrs); err != nil {
		return l, err
	}
	if err := l.addOutbound(ctx, "risk.resp", m.riskResp, ctrs); err != nil {
		return l, err
	}
	if err := l.startOutbounds(); err != nil {
		return l, err
	}
	if l.nc, err = nats.Connect(l.url, nats.Name("duty-trading-exchange-control")); err != nil {
		return l, fmt.Errorf("trading: nats: %w", err)
	}
	if _, err := l.nc.Subscribe(l.prefix+".status", l.onStatus); err != nil {
		return l, err
	}
	if _, err := l.nc.Subscribe(l.prefix+".end", l.onEnd); err != nil {
		return l, err
	}
	return l, l.nc.Flush()
}

// onStatus answers the demo with the process's counts, read in the order
// a message travels.
func (l *natsLink) onStatus(m *nats.Msg) {
	var st natsStatus
	st.Delivered = l.delivered()
	st.Busy = depth(l.mbs.exchangeIn) + l.exch.Load() + depth(l.mbs.strategyResp) + depth(l.mbs.riskResp)
	st.Batched = l.batched()
	b, _ := json.Marshal(st)
	_ = m.Respond(b)
}

// onEnd waits (up to the drain limit) until the inbound bridge has
// delivered as many messages as the demo says it sent, then closes
// exchange.in: the exchange agent finishes once it has handled them.
func (l *natsLink) onEnd(m *nats.Msg) {
	want, err := strconv.ParseInt(string(m.Data), 10, 64)
	answer := "ok"
	if err != nil {
		answer = "bad end: " + err.Error()
	} else {
		for deadline := time.Now().Add(l.cfg.Drain); l.delivered() < want; {
			if time.Now().After(deadline) {
				answer = fmt.Sprintf("%d of the %d messages sent arrived", l.delivered(), want)
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	_, _ = l.mbs.exchangeIn.Close(mailbox.Drain)
	_ = m.Respond([]byte(answer))
}
