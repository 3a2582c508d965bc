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
	"go.uber.org/fx"

	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/natsbridge"
	"github.com/dutyrt/duty/natsbridge/natsfx"
)

// -nats: the exchange process of -ipc, but the three mailboxes between the
// processes are local to each, bridged through NATS (natsbridge, core
// mode, built by natsfx, run on one thread) on subjects <prefix>.<mailbox>,
// the prefix derived from the directory: exchange.in from the demo to the
// child, strategy.resp and risk.resp back. The inbound bridges subscribe
// when the fx graph is built; the demo starts its group once the child
// answers. The child answers <prefix>.status with its counts (natsStatus),
// from which the demo keeps the messages in flight as the exchange's
// pending word; after the drain, <prefix>.end carries how many messages
// the demo sent, and the child closes its exchange.in once it delivered as
// many. Losses a bridge counts fail the reconciliation.

// natsEmbedded is config.NATS for -nats without a URL: an embedded server
// on a free loopback port.
const natsEmbedded = "embedded"

// natsThread is the thread of a process's bridges, and its idle strategy.
const (
	natsThread = "natsbridge"
	natsIdle   = "backoff:10:5:1us:100us"
)

func natsPrefix(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(dir))
	return fmt.Sprintf("duty.trading.%016x", h.Sum64())
}

// natsStatus is the child's answer on <prefix>.status, read in the order a
// message travels, so that one moving meanwhile is counted twice, not
// missed.
type natsStatus struct {
	Delivered int64 // exchange.in messages its inbound bridge delivered (or dropped)
	Busy      int64 // bytes in its mailboxes plus the exchange's pending output
	Batched   int64 // messages its outbound bridges batched
}

// natsLink is one process's side of -nats.
type natsLink struct {
	cfg     config
	prefix  string
	url     string
	srv     *server.Server // the embedded server (the demo, -nats alone)
	nc      *nats.Conn     // status and end
	set     *natsfx.Set    // the bridges, once the fx graph is built
	restore func()         // GOMAXPROCS as it was
	logger  *slog.Logger
	stderr  io.Writer

	inflight atomic.Int64 // the demo's: the exchange's pending word, kept by watch
	stop     chan struct{}
	wg       sync.WaitGroup

	mbs  *mailboxes    // the child's
	exch *atomic.Int64 // the child's: the exchange's pending word
}

func newNATSLink(cfg config, dir string, logger *slog.Logger) *natsLink {
	l := &natsLink{cfg: cfg, prefix: natsPrefix(dir), url: cfg.NATS, logger: logger, stop: make(chan struct{})}
	// Room for the NATS client's goroutines beside the runners (a runner
	// parked in nanosleep keeps its P).
	prev := runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), runtime.NumCPU()+2))
	l.restore = func() { runtime.GOMAXPROCS(prev) }
	return l
}

// mailboxes makes the process's mailboxes (named), those bridges deliver
// into (recv) large: core mode drops what a full mailbox refuses.
func (l *natsLink) mailboxes(ctrs *counters.Manager, recv map[string]bool, names ...string) ([]*mailbox.Mailbox, error) {
	var mbs []*mailbox.Mailbox
	for _, name := range names {
		capacity := l.cfg.Capacity
		if recv[name] {
			capacity = max(capacity, 4<<20)
		}
		mb, err := mailbox.New(mailbox.Config{Name: name, Capacity: capacity, Counters: ctrs})
		if err != nil {
			return nil, err
		}
		mbs = append(mbs, mb)
	}
	return mbs, nil
}

// module has natsfx build the bridges of outs and ins into l.set; it
// returns it with the thread that runs them.
func (l *natsLink) module(ctrs *counters.Manager, outs, ins []*mailbox.Mailbox) (fx.Option, thread) {
	opts := []fx.Option{natsfx.Module, fx.Populate(&l.set)}
	th := thread{role: natsThread}
	add := func(mb *mailbox.Mailbox, dir natsfx.Direction, role string) {
		c := natsbridge.Config{Name: mb.Name(), Subject: l.prefix + "." + mb.Name(), URL: l.url, Counters: ctrs, Logger: l.logger}
		b := natsfx.Bridge{Config: c, Mailbox: mb, Direction: dir}
		opts = append(opts, fx.Provide(natsfx.AsBridge(func() natsfx.Bridge { return b })))
		th.agents = append(th.agents, role+mb.Name()) // the bridges' RoleName
	}
	for _, mb := range outs {
		add(mb, natsfx.Out, "natsbridge-out-")
	}
	for _, mb := range ins {
		add(mb, natsfx.In, "natsbridge-in-")
	}
	return fx.Options(opts...), th
}

// delivered is what the inbound bridges delivered or dropped.
func (l *natsLink) delivered() (n int64) {
	for _, in := range l.set.Inbound {
		st := in.Stats()
		n += st.Delivered + st.Dropped
	}
	return n
}

func (l *natsLink) batched() (n int64) {
	for _, o := range l.set.Outbound {
		n += o.Stats().Batched
	}
	return n
}

// losses returns a problem for every bridge that lost messages.
func (l *natsLink) losses() []string {
	if l == nil || l.set == nil {
		return nil
	}
	var out []string
	for _, in := range l.set.Inbound {
		if st := in.Stats(); st.Dropped+st.LostBatches+st.Rejected > 0 {
			out = append(out, fmt.Sprintf("nats bridge %s: %d messages dropped, %d batches lost, %d frames rejected",
				in.RoleName(), st.Dropped, st.LostBatches, st.Rejected))
		}
	}
	for _, o := range l.set.Outbound {
		if st := o.Stats(); st.Dropped > 0 {
			out = append(out, fmt.Sprintf("nats bridge %s: %d messages dropped", o.RoleName(), st.Dropped))
		}
	}
	return out
}

// close stops the watch, the control connection and the embedded server.
func (l *natsLink) close() error {
	if l == nil {
		return nil
	}
	l.stopWatch()
	if l.nc != nil {
		l.nc.Close()
	}
	if l.srv != nil {
		l.srv.Shutdown()
		l.srv.WaitForShutdown()
	}
	l.restore()
	return nil
}

func (l *natsLink) stopWatch() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
	l.wg.Wait()
}

// startNATS is startRemote's -nats part: the server (embedded for -nats
// alone), the demo's mailboxes, its bridges' module and the control
// connection.
func (r *remoteExchange) startNATS(files *procFiles, stderr io.Writer) error {
	l := newNATSLink(r.cfg, r.dir, slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn})))
	r.nats, l.stderr = l, stderr
	how := "the server given"
	if l.url == natsEmbedded {
		s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
		if err != nil {
			return fmt.Errorf("trading: nats-server: %w", err)
		}
		s.Start()
		if l.srv, how = s, "a server of its own, embedded"; !s.ReadyForConnections(10 * time.Second) {
			return errors.New("trading: the embedded nats-server is not ready")
		}
		l.url = s.ClientURL()
	}
	ctrs := files.ctr.Manager()
	mbs, err := l.mailboxes(ctrs, map[string]bool{"strategy.resp": true, "risk.resp": true},
		"strategy.resp", "risk.resp", "exchange.in", "strategy.in", "risk.in")
	if err != nil {
		return err
	}
	m := r.mbs
	m.strategyResp, m.riskResp, m.exchangeIn, m.strategyIn, m.riskIn = mbs[0], mbs[1], mbs[2], mbs[3], mbs[4]
	r.natsModule, r.natsThread = l.module(ctrs, mbs[2:3], mbs[:2])
	if l.nc, err = nats.Connect(l.url, nats.Name("duty-trading-control")); err != nil {
		return fmt.Errorf("trading: nats: %w", err)
	}
	// Before the wait: an exchange process started by hand needs the URL.
	fmt.Fprintf(stderr, "nats: the exchange process is connected through %s (%s), subjects %s.*\n", l.url, how, l.prefix)
	return nil
}

// connectNATS, once the demo's bridges are built and before its group
// starts, starts the exchange process (cfg.Spawn), waits for its first
// status and starts the watch.
func (r *remoteExchange) connectNATS() error {
	if r == nil || r.nats == nil {
		return nil
	}
	l := r.nats
	if r.cfg.Spawn {
		if err := r.spawn(l.stderr); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// It is ready once it answers: its inbound bridge has subscribed.
	for _, err := l.status(); err != nil; _, err = l.status() {
		if r.child != nil && r.child.hasExited() {
			return fmt.Errorf("trading: the exchange process exited: %v", r.child.waitErr)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("trading: no answer from the exchange process on %s.status: %w", l.prefix, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
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

// watch keeps the estimate of the messages between the processes: sent
// here, not delivered there; held there; batched there, not delivered
// here. The child's counts are read before its own, so that it errs high;
// an unanswered request makes it 1.
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
		v := int64(1)
		if st, err := l.status(); err == nil {
			if v = (l.batched() - st.Delivered) + st.Busy + (st.Batched - l.delivered()); v < 0 {
				v = 1 // impossible with counts read in this order: never quiet on it
			}
		}
		l.inflight.Store(v)
	}
}

// end, after the drain, tells the exchange process how many messages the
// demo sent.
func (l *natsLink) end(limit time.Duration) []string {
	l.stopWatch()
	var problems []string
	m, err := l.nc.Request(l.prefix+".end", []byte(strconv.FormatInt(l.batched(), 10)), limit)
	switch {
	case err != nil:
		problems = append(problems, fmt.Sprintf("nats: no answer to the end on %s.end: %v", l.prefix, err))
	case string(m.Data) != "ok":
		problems = append(problems, "nats: the exchange process: "+string(m.Data))
	}
	var parts []string
	for _, o := range l.set.Outbound {
		st := o.Stats()
		parts = append(parts, fmt.Sprintf("%s: %d messages in %d batches", o.RoleName(), st.Batched, st.Published))
	}
	for _, in := range l.set.Inbound {
		st := in.Stats()
		parts = append(parts, fmt.Sprintf("%s: %d delivered, %d dropped, %d batches lost", in.RoleName(), st.Delivered, st.Dropped, st.LostBatches))
	}
	fmt.Fprintf(l.stderr, "nats: %s\n", strings.Join(parts, "; "))
	return append(problems, l.losses()...)
}

// newNATSExchange is the exchange process's -nats part: its mailboxes and
// its bridges' module; pending is the exchange's pending word.
func newNATSExchange(cfg config, ctrs *counters.Manager, pending *atomic.Int64, logger *slog.Logger) (*natsLink, fx.Option, thread, error) {
	l := newNATSLink(cfg, cfg.Dir, logger)
	l.exch = pending
	mbs, err := l.mailboxes(ctrs, map[string]bool{"exchange.in": true}, "exchange.in", "strategy.resp", "risk.resp")
	if err != nil {
		return nil, nil, thread{}, errors.Join(err, l.close())
	}
	l.mbs = &mailboxes{exchangeIn: mbs[0], strategyResp: mbs[1], riskResp: mbs[2]}
	opt, th := l.module(ctrs, mbs[1:], mbs[:1])
	return l, opt, th, nil
}

// serve, in the exchange process once its bridges run, answers status and
// end.
func (l *natsLink) serve() (err error) {
	if l.nc, err = nats.Connect(l.url, nats.Name("duty-trading-exchange-control")); err != nil {
		return fmt.Errorf("trading: nats: %w", err)
	}
	if _, err := l.nc.Subscribe(l.prefix+".status", l.onStatus); err != nil {
		return err
	}
	if _, err := l.nc.Subscribe(l.prefix+".end", l.onEnd); err != nil {
		return err
	}
	return l.nc.Flush()
}

// flush gives the exchange process's outbound bridges a second to take
// what their mailboxes hold (OnClose publishes only what they batched).
func (l *natsLink) flush() {
	for deadline := time.Now().Add(time.Second); l != nil && time.Now().Before(deadline) &&
		l.mbs.strategyResp.Stats().Depth+l.mbs.riskResp.Stats().Depth > 0; {
		time.Sleep(time.Millisecond)
	}
}

func (l *natsLink) onStatus(m *nats.Msg) {
	var st natsStatus
	st.Delivered = l.delivered()
	st.Busy = int64(l.mbs.exchangeIn.Stats().Depth) + l.exch.Load() + int64(l.mbs.strategyResp.Stats().Depth+l.mbs.riskResp.Stats().Depth)
	st.Batched = l.batched()
	b, _ := json.Marshal(st)
	_ = m.Respond(b)
}

// onEnd waits (up to -drain) until the inbound bridge delivered as many
// messages as the demo sent, then closes exchange.in.
func (l *natsLink) onEnd(m *nats.Msg) {
	want, err := strconv.ParseInt(string(m.Data), 10, 64)
	answer := "ok"
	if err != nil {
		answer = "bad end: " + err.Error()
	}
	for deadline := time.Now().Add(l.cfg.Drain); err == nil && l.delivered() < want; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			answer = fmt.Sprintf("%d of the %d messages sent arrived", l.delivered(), want)
			break
		}
	}
	_, _ = l.mbs.exchangeIn.Close(mailbox.Drain)
	_ = m.Respond([]byte(answer))
}
