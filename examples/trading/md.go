package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/examples/trading/internal/mdfeed"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/zmtp"
)

// -md: the market data comes from a ZMTP PUB endpoint (package mdfeed's
// feeder). A SUB socket delivers into the mailbox md.in, which the feed
// agent drains instead of generating quotes (mdAgent), so the ledger's
// feed count is what it forwarded. Each quote is checked against
// the demo's own generator (same -seed and -instruments), and the end
// message's counts against what arrived.
//
// -md alone starts the feeder (this binary as mdfeed.Main) on a free
// loopback port and asks it to end (SIGINT) when the feed stops; the feed
// agent then waits for its end message. -md ENDPOINT connects to a feeder
// started by hand. With CURVE the feeder is the server: -md-curve with -md
// alone makes a key pair for each side; with -md ENDPOINT,
// -md-curve-server and -md-curve-secret give the keys.

const mdAuto = "auto" // -md without an endpoint: start the feeder

// envMDFeed makes this binary run the feeder instead (the demo's child).
const envMDFeed = "DUTY_TRADING_MDFEED"

func init() {
	if os.Getenv(envMDFeed) == "1" {
		os.Exit(mdfeed.Main(os.Args[1:], os.Stdout, os.Stderr))
	}
}

func checkMD(c *config) error {
	switch {
	case c.MD == "":
		return nil
	case c.Role != "":
		return fmt.Errorf("%w: -md is for the demo, not -role %s", errUsage, c.Role)
	case c.NATS != "" || c.Record != "" || c.Replay != "":
		return fmt.Errorf("%w: -md does not combine with -nats, -record or -replay", errUsage)
	case c.Rate == 0:
		return fmt.Errorf("%w: -md needs -rate > 0 (a PUB drops for a subscriber that falls behind)", errUsage)
	case c.MD != mdAuto && !strings.HasPrefix(c.MD, "tcp://") && !strings.HasPrefix(c.MD, "ipc://"):
		return fmt.Errorf("%w: -md %q: an endpoint is tcp://host:port or ipc:///path", errUsage, c.MD)
	}
	return nil
}

// mdSource is the market-data connection; nil without -md.
type mdSource struct {
	endpoint string
	sub      *zmtp.Socket
	in       *mailbox.Mailbox
	agent    *mdAgent
	feeder   *child      // or nil
	curve    *zmtp.Curve // the SUB's, or nil
	keyDir   string      // the child feeder's key file's directory, or ""
}

// startMD starts the feeder (with -md alone) and the SUB socket.
func startMD(cfg config, stderr io.Writer) (m *mdSource, err error) {
	if cfg.MD == "" {
		return nil, nil
	}
	m = &mdSource{endpoint: cfg.MD}
	defer func() {
		if err != nil {
			m.close()
		}
	}()
	feederArgs, err := m.setCurve(cfg)
	if err != nil {
		return m, err
	}
	if cfg.MD == mdAuto {
		if err := m.spawn(cfg, stderr, feederArgs); err != nil {
			return m, err
		}
	}
	if m.in, err = mailbox.New(mailbox.Config{Name: "md.in", Capacity: cfg.Capacity}); err != nil {
		return m, err
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if m.sub, err = zmtp.NewSocket(zmtp.Sub, zmtp.Options{Logger: logger, Curve: m.curve}); err != nil {
		return m, err
	}
	for _, t := range []int32{mdfeed.TypeQuote, mdfeed.TypeEnd} {
		if err := m.sub.Subscribe(mdfeed.TypeFrame(t)); err != nil {
			return m, err
		}
	}
	if err := m.sub.DeliverTo(m.in, zmtp.Mapping{TypeIDFrame: true}); err != nil {
		return m, err
	}
	if err := m.sub.Connect(m.endpoint); err != nil {
		return m, fmt.Errorf("trading: -md: %w", err)
	}
	return m, nil
}

// setCurve sets the SUB's CURVE and returns the child feeder's arguments.
func (m *mdSource) setCurve(cfg config) ([]string, error) {
	if !cfg.MDCurve && cfg.MDCurveServer == "" && cfg.MDCurveSecret == "" {
		return nil, nil
	}
	if cfg.MD == mdAuto {
		pub, sec, err := zmtp.NewCurveKeyPair()
		if err != nil {
			return nil, err
		}
		if m.keyDir, err = os.MkdirTemp("", "duty-md-curve-"); err != nil {
			return nil, err
		}
		key := filepath.Join(m.keyDir, "feeder.key")
		feederPub, err := mdfeed.WriteKeyPair(key)
		if err != nil {
			return nil, err
		}
		m.curve = &zmtp.Curve{Public: pub, Secret: sec, ServerKey: feederPub}
		return []string{"-curve-secret", key, "-curve-allow", pub.Z85()}, nil
	}
	if cfg.MDCurveServer == "" || cfg.MDCurveSecret == "" {
		return nil, fmt.Errorf("%w: -md %s with CURVE needs -md-curve-server (the feeder's public key) and -md-curve-secret (the file of the demo's secret key)",
			errUsage, m.endpoint)
	}
	serverKey, err := zmtp.ParseCurveKey(cfg.MDCurveServer)
	if err != nil {
		return nil, fmt.Errorf("%w: -md-curve-server: %w", errUsage, err)
	}
	pub, sec, err := mdfeed.ReadSecretKey(cfg.MDCurveSecret)
	if err != nil {
		return nil, fmt.Errorf("%w: -md-curve-secret: %w", errUsage, err)
	}
	m.curve = &zmtp.Curve{Public: pub, Secret: sec, ServerKey: serverKey}
	return nil, nil
}

// spawn starts the feeder on a free loopback port and reads the endpoint
// it bound from its first line.
func (m *mdSource) spawn(cfg config, stderr io.Writer, extra []string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	m.feeder, err = startChild(envMDFeed, append([]string{"-bind", "tcp://127.0.0.1:0",
		"-instruments", strconv.Itoa(cfg.Instruments), "-seed", strconv.FormatUint(cfg.Seed, 10),
		"-rate", strconv.FormatInt(cfg.Rate, 10), "-duration", cfg.Duration.String(), "-watch-parent"}, extra...), w, stderr)
	_ = w.Close()
	if err != nil {
		_ = r.Close()
		return fmt.Errorf("trading: starting the feeder: %w", err)
	}
	lines := make(chan string, 1)
	go func() {
		defer r.Close()
		br := bufio.NewReader(r)
		line, _ := br.ReadString('\n')
		lines <- line
		_, _ = io.Copy(io.Discard, br) // its last line, the counts
	}()
	select {
	case line := <-lines:
		ep, ok := strings.CutPrefix(strings.TrimSpace(line), "mdfeed: publishing on ")
		if !ok {
			return fmt.Errorf("trading: the feeder said %q, not its endpoint", line)
		}
		m.endpoint = ep
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("trading: the feeder did not start within %v", 30*time.Second)
	}
}

// module gives the feed agent md.in to forward instead of its generator's
// quotes.
func (m *mdSource) module() fx.Option {
	if m == nil {
		return fx.Options()
	}
	return fx.Decorate(func(f *feedAgent) (*feedAgent, error) {
		a := &mdAgent{f: f, src: m}
		var err error
		a.in, err = newInboxOf(drain(m.in, on(msg.Quotes, a.onQuote), on(mdfeed.Ends, a.onEnd)), &f.out)
		f.market, m.agent = a, a
		return f, err
	})
}

// finish prints what arrived and returns the problems.
func (m *mdSource) finish(w io.Writer) []string {
	if m == nil || m.agent == nil {
		return nil
	}
	a := m.agent
	var p []string
	fmt.Fprintf(w, "market data: %d quotes from %s", a.f.made, m.endpoint)
	if m.curve != nil {
		fmt.Fprint(w, " with CURVE")
	}
	if a.ended {
		fmt.Fprintf(w, " (the feeder published %d, dropped %d)", a.end.Published, a.end.Dropped)
		if a.end.Dropped > 0 {
			p = append(p, fmt.Sprintf("market data: the feeder's PUB dropped %d quotes", a.end.Dropped))
		}
		if a.end.Published != a.f.made {
			p = append(p, fmt.Sprintf("market data: the feeder published %d quotes, %d arrived", a.end.Published, a.f.made))
		}
	} else if m.feeder != nil {
		p = append(p, "market data: the feeder's end message did not arrive")
	}
	fmt.Fprintln(w)
	if a.mismatch > 0 {
		p = append(p, fmt.Sprintf("market data: %d quotes differ from the generator's (is the feeder's -seed and -instruments the demo's?), the first: %s", a.mismatch, a.firstMismatch))
	}
	if bad := a.bad + a.in.undelivered(); bad > 0 {
		p = append(p, fmt.Sprintf("market data: %d messages undecodable or unexpected", bad))
	}
	if d := m.sub.Stats().Dropped; d > 0 {
		p = append(p, fmt.Sprintf("market data: the SUB bridge dropped %d messages", d))
	}
	return p
}

// close closes the socket and ends the feeder.
func (m *mdSource) close() {
	if m == nil {
		return
	}
	if m.sub != nil {
		_ = m.sub.Close()
	}
	if m.feeder != nil { // asked to end, so that its end message still comes
		m.feeder.end(os.Interrupt)
	}
	if m.keyDir != "" {
		_ = os.RemoveAll(m.keyDir)
	}
}

// mdAgent is the feed agent's part with -md: it forwards the quotes of
// md.in through the feed agent's state (its generator checks them).
type mdAgent struct {
	f     *feedAgent
	src   *mdSource
	in    *inbox // md.in; its actor is not closed: the bridge owns it
	want  msg.Quote
	ended bool
	end   mdfeed.End
	asked bool // the child feeder was asked to end

	mismatch      int64
	firstMismatch string
	bad           int64 // messages after the end
}

// work forwards what md.in holds, until the end message.
func (a *mdAgent) work() (int, error) {
	if a.ended {
		return 0, nil
	}
	n, err := a.in.DoWork()
	counters.SetWord(a.f.quotes, a.f.made)
	return n, err
}

// stopping reports, once the feed is told to stop, whether forwarding
// stops now: at once with a feeder started by hand, else once the child's
// end message is in.
func (a *mdAgent) stopping() bool {
	if a.src.feeder == nil || a.ended {
		return true
	}
	if !a.asked {
		a.asked = true
		_ = a.src.feeder.cmd.Process.Signal(os.Interrupt)
	}
	return false
}

func (a *mdAgent) onQuote(q *msg.Quote) error {
	if a.ended {
		a.bad++
		return nil
	}
	f := a.f
	f.q = *q
	f.gen.Next(&a.want)
	if a.want.FeedNanos = q.FeedNanos; *q != a.want { // the feeder's clock reading is its own
		if a.mismatch++; a.mismatch == 1 {
			a.firstMismatch = fmt.Sprintf("%+v, want %+v", *q, a.want)
		}
	}
	f.forward()
	return nil
}

func (a *mdAgent) onEnd(e *mdfeed.End) error {
	if a.ended {
		a.bad++
		return nil
	}
	a.end, a.ended = *e, true
	return nil
}
