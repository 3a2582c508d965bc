package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

// -ipc mode: the exchange runs in a second process. Three mailboxes cross
// the process boundary, each a shared-memory file in one directory, owned
// (created and drained) by the process that receives:
//
//	exchange.in     owner: the exchange process; senders: feed, risk
//	strategy.resp   owner: the demo;             senders: exchange, risk
//	risk.resp       owner: the demo;             sender:  exchange
//
// strategy.in and risk.in stay in the demo's memory. The exchange process
// also creates exchange.counters, a counters file with its published
// counters (the demo reads its pending-output word while draining; dutystat
// can watch them), and the demo creates demo.counters for its mailboxes'
// statistics. Each side waits for the other's files, so either may start
// first.
//
// The end: after the drain, the demo closes exchange.in (the state word is
// in the shared file); the exchange agent finishes once it is closed and
// empty, the exchange process checks its books and writes exchange.json
// (its counts and its tick-to-order histogram) into the directory, and
// exits. The demo reads the file and reconciles both sides.

const (
	fileExchangeIn       = "exchange.in"
	fileStrategyResp     = "strategy.resp"
	fileRiskResp         = "risk.resp"
	fileExchangeCounters = "exchange.counters"
	fileDemoCounters     = "demo.counters"
	fileDemoHistograms   = "demo.histograms"
	fileExchangeHists    = "exchange.histograms"
	fileDemoErrors       = "demo.errors"
	fileExchangeErrors   = "exchange.errors"
	fileSummary          = "exchange.json"

	// envMain makes a test binary run the demo's main (the tests re-execute
	// themselves as the demo and as its exchange process).
	envMain = "DUTY_TRADING_MAIN"

	// counterType is the type id of the exchange's counters in
	// exchange.counters (user range, above duty's own).
	counterType = 10_001
)

// exchangeSummary is exchange.json.
type exchangeSummary struct {
	Exchange exchangeCounts
	T2O      *hdrhistogram.Snapshot
	// T2OSampled is the exchange's stage of the sampled quotes (stages).
	T2OSampled *hdrhistogram.Snapshot
	Errors     []string
	// AgentErrors is the exchange process's error log at its end.
	AgentErrors []errlog.Observation
}

// remoteExchange is the exchange process seen from the demo: the shared
// files, the child process (unless started by hand) and its summary.
type remoteExchange struct {
	cfg     config
	dir     string
	ownDir  bool
	mbs     *mailboxes
	in      *ipc.MailboxFile // sender
	sResp   *ipc.MailboxFile // owner
	rResp   *ipc.MailboxFile // owner
	demoCtr *ipc.CountersFile
	errs    *ipc.ErrorLogFile // this process's agent errors
	xCtr    *ipc.CountersFile // read-only

	cmd     *exec.Cmd
	exited  chan struct{} // closed when the child has exited (never without a child)
	waitErr error         // the child's exit, once exited is closed

	sum      *exchangeSummary
	t2o      *hdrhistogram.Histogram
	t2oS     *hdrhistogram.Histogram // the sampled quotes' (stages)
	problems []string

	nats *natsLink // -nats: the bridges instead of the shared mailbox files (nats.go)
}

// startRemote creates the demo's files, starts the exchange process
// (cfg.Spawn) and opens its files. close releases everything, on every
// path.
func startRemote(cfg config, stderr io.Writer) (_ *remoteExchange, err error) {
	r := &remoteExchange{cfg: cfg, dir: cfg.Dir, exited: make(chan struct{})}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.close())
		}
	}()
	if r.dir == "" {
		base := ipc.DefaultDir()
		if err := os.MkdirAll(base, 0o700); err != nil {
			return r, err
		}
		if r.dir, err = os.MkdirTemp(base, "trading-"); err != nil {
			return r, err
		}
		r.ownDir = true
	} else if err := os.MkdirAll(r.dir, 0o700); err != nil {
		return r, err
	}
	// A summary left by an earlier run in the same directory is not ours.
	if err := os.Remove(filepath.Join(r.dir, fileSummary)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return r, err
	}
	if r.demoCtr, err = ipc.CreateCounters(r.dir, fileDemoCounters, statsCounters, nil, ipc.WithReplaceStale()); err != nil {
		return r, err
	}
	if r.errs, err = ipc.CreateErrorLog(r.dir, fileDemoErrors, errLogLength, ipc.WithReplaceStale()); err != nil {
		return r, err
	}
	r.mbs = &mailboxes{}
	if cfg.NATS != "" {
		return r, r.startNATS(stderr)
	}
	create := func(name string) (*mailbox.Mailbox, *ipc.MailboxFile, error) {
		return ipc.CreateMailbox(r.dir, name, mailbox.Config{Name: name, Capacity: cfg.Capacity},
			ipc.WithCounters(r.demoCtr), ipc.WithReplaceStale())
	}
	if r.mbs.strategyResp, r.sResp, err = create(fileStrategyResp); err != nil {
		return r, err
	}
	if r.mbs.riskResp, r.rResp, err = create(fileRiskResp); err != nil {
		return r, err
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if cfg.Spawn {
		if err := r.spawn(stderr); err != nil {
			return r, err
		}
		go func() {
			select {
			case <-r.exited:
				cancel() // the child died before its files appeared
			case <-ctx.Done():
			}
		}()
	}
	if r.mbs.exchangeIn, r.in, err = ipc.OpenMailbox(ctx, filepath.Join(r.dir, fileExchangeIn), ipc.WithWaitForFile()); err != nil {
		if r.childExited() {
			err = fmt.Errorf("%w (the exchange process exited: %v)", err, r.waitErr)
		}
		return r, err
	}
	if r.xCtr, err = ipc.OpenCounters(ctx, filepath.Join(r.dir, fileExchangeCounters), ipc.WithWaitForFile()); err != nil {
		return r, err
	}
	pending, err := findCounter(r.xCtr, labelPending)
	if err != nil {
		return r, err
	}

	r.mbs.exchangePending = pending
	local := func(name string) (*mailbox.Mailbox, error) {
		return mailbox.New(mailbox.Config{Name: name, Capacity: cfg.Capacity, Counters: r.demoCtr.Manager()})
	}
	if r.mbs.strategyIn, err = local("strategy.in"); err != nil {
		return r, err
	}
	if r.mbs.riskIn, err = local("risk.in"); err != nil {
		return r, err
	}
	return r, nil
}

// spawn starts this program again as the exchange process, in its own
// process group (a Ctrl-C in the terminal reaches only the demo, which
// ends the exchange itself, after the drain).
func (r *remoteExchange) spawn(stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	c := r.cfg
	args := []string{
		"-role", roleExchange, "-dir", r.dir, "-watch-parent",
		"-instruments", strconv.Itoa(c.Instruments), "-threads", strconv.Itoa(c.Threads),
		"-idle", c.IdleSpec, "-cpus", c.CPUSpec, "-mailbox", strconv.Itoa(c.Capacity),
	}
	if c.Verbose {
		args = append(args, "-v")
	}
	if r.nats != nil {
		args = append(args, "-nats="+r.nats.url)
	}
	if c.dropReport > 0 {
		args = append(args, "-lose-report", strconv.FormatInt(c.dropReport, 10))
	}
	if c.Record != "" {
		args = append(args, "-record", c.Record)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), envMain+"=1")
	cmd.Stdout, cmd.Stderr = stderr, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("trading: starting the exchange process: %w", err)
	}
	r.cmd = cmd
	go func() {
		r.waitErr = cmd.Wait()
		close(r.exited)
	}()
	return nil
}

func (r *remoteExchange) childExited() bool {
	select {
	case <-r.exited:
		return true
	default:
		return false
	}
}

// done is closed when the exchange process exits (nil, never closed,
// without a child or without -ipc).
func (r *remoteExchange) done() <-chan struct{} {
	if r == nil || r.cmd == nil {
		return nil
	}
	return r.exited
}

// heartbeat refreshes the owner heartbeat of demo.counters (the
// mailboxes' files are refreshed by their drains).
func (r *remoteExchange) heartbeat() {
	if r == nil {
		return
	}
	now := time.Now().UnixMilli()
	if r.demoCtr != nil {
		_ = r.demoCtr.File.Heartbeat(now)
	}
	if r.errs != nil {
		_ = r.errs.File.Heartbeat(now)
	}
}

// finish ends the exchange process: it closes exchange.in (seen by the
// exchange through the shared state word) and waits, up to limit, for
// the summary the exchange writes when it has drained and stopped.
func (r *remoteExchange) finish(limit time.Duration) {
	if _, err := r.mbs.exchangeIn.Close(mailbox.Drain); err != nil {
		r.problems = append(r.problems, "closing exchange.in: "+err.Error())
	}
	if r.nats != nil {
		r.problems = append(r.problems, r.nats.end(limit)...)
	}
	deadline := time.After(limit)
	if r.cmd != nil {
		select {
		case <-r.exited:
			if r.waitErr != nil {
				r.problems = append(r.problems, fmt.Sprintf("the exchange process failed: %v", r.waitErr))
			}
		case <-deadline:
			r.problems = append(r.problems, fmt.Sprintf("the exchange process did not finish within %v", limit))
			return
		}
	}
	path := filepath.Join(r.dir, fileSummary)
	for {
		b, err := os.ReadFile(path)
		if err == nil {
			var s exchangeSummary
			if err := json.Unmarshal(b, &s); err != nil {
				r.problems = append(r.problems, fmt.Sprintf("%s: %v", path, err))
				return
			}
			r.sum = &s
			if s.T2O != nil {
				r.t2o = hdrhistogram.Import(s.T2O)
			}
			if s.T2OSampled != nil {
				r.t2oS = hdrhistogram.Import(s.T2OSampled)
			}
			r.problems = append(r.problems, s.Errors...)
			return
		}
		if !errors.Is(err, os.ErrNotExist) || r.cmd != nil {
			r.problems = append(r.problems, "no summary from the exchange process: "+err.Error())
			return
		}
		select {
		case <-deadline:
			r.problems = append(r.problems, fmt.Sprintf("no summary from the exchange process within %v", limit))
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// agentErrors returns the exchange process's agent errors, their texts
// marked with the process.
func (r *remoteExchange) agentErrors() []errlog.Observation {
	if r == nil || r.sum == nil {
		return nil
	}
	obs := slices.Clone(r.sum.AgentErrors)
	for i := range obs {
		obs[i].Text = "exchange process: " + obs[i].Text
	}
	return obs
}

// summary returns the exchange's counts and adds the problems met with
// the exchange process.
func (r *remoteExchange) summary(problems []string) (exchangeCounts, []string) {
	problems = append(problems, r.problems...)
	if r.sum == nil {
		return exchangeCounts{}, problems
	}
	return r.sum.Exchange, problems
}

// close releases the files and the child, on any path: it gives a child
// still running a few seconds to finish, then kills it.
func (r *remoteExchange) close() error {
	var errs []error
	if r.cmd != nil {
		select {
		case <-r.exited:
		case <-time.After(5 * time.Second):
			errs = append(errs, fmt.Errorf("trading: killing the exchange process %d", r.cmd.Process.Pid))
			_ = r.cmd.Process.Kill()
			<-r.exited
		}
	}
	errs = append(errs, r.nats.close()) // before the counters file its bridges write
	for _, m := range []*ipc.MailboxFile{r.in, r.sResp, r.rResp} {
		if m == nil {
			continue
		}
		if m.File.IsOwner() {
			errs = append(errs, m.File.Remove())
		}
		errs = append(errs, m.Close())
	}
	if r.xCtr != nil {
		errs = append(errs, r.xCtr.Close())
	}
	if r.demoCtr != nil {
		errs = append(errs, r.demoCtr.File.Remove(), r.demoCtr.Close())
	}
	if r.errs != nil {
		errs = append(errs, r.errs.File.Remove(), r.errs.Close())
	}
	if r.ownDir && r.dir != "" {
		errs = append(errs, os.RemoveAll(r.dir))
	}
	return errors.Join(errs...)
}
