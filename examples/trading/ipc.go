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
	"strconv"
	"syscall"
	"time"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/histogram"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

// -ipc: the exchange runs in a second process (this binary with -role
// exchange), connected by shared mailbox files (files.go); each side waits
// for the other's files. The exchange process publishes its pending-output
// word in exchange.counters, which the drain reads. At the end the demo
// closes exchange.in; the exchange agent finishes once it is empty, and
// the exchange process writes its counts into exchange.json and exits.

// envMain makes a test binary run the demo's main.
const envMain = "DUTY_TRADING_MAIN"

// exchangeSummary is exchange.json.
type exchangeSummary struct {
	Exchange    exchangeCounts
	T2O         histogram.Snapshot
	T2OSampled  histogram.Snapshot // the exchange's stage of the sampled quotes
	Errors      []string
	AgentErrors []errlog.Observation // its error log at its end, each marked as its
}

// remoteExchange is the exchange process seen from the demo.
type remoteExchange struct {
	cfg   config
	dir   string
	mbs   *mailboxes
	child *child // unless started by hand

	sum      *exchangeSummary
	problems []string
	nats     *natsLink // -nats: bridges instead of the shared mailbox files
	// natsModule builds the demo's bridges, run on natsThread.
	natsModule fx.Option
	natsThread thread
}

// startRemote makes the demo's mailboxes, starts the exchange process
// (cfg.Spawn) and opens its files.
func startRemote(cfg config, files *procFiles, stderr io.Writer) (_ *remoteExchange, err error) {
	r := &remoteExchange{cfg: cfg, dir: files.dir, mbs: &mailboxes{}}
	defer func() {
		if err != nil {
			err = errors.Join(err, r.close())
		}
	}()
	// A summary left by an earlier run in the same directory is not ours.
	if err := os.Remove(filepath.Join(r.dir, fileSummary)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return r, err
	}
	if cfg.NATS != "" {
		return r, r.startNATS(files, stderr)
	}
	if r.mbs.strategyResp, err = files.mailbox(fileStrategyResp, cfg.Capacity); err != nil {
		return r, err
	}
	if r.mbs.riskResp, err = files.mailbox(fileRiskResp, cfg.Capacity); err != nil {
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
			case <-r.child.exited:
				cancel() // the child died before its files appeared
			case <-ctx.Done():
			}
		}()
	}
	if r.mbs.exchangeIn, err = files.openMailbox(ctx, fileExchangeIn); err != nil {
		if r.child.hasExited() {
			err = fmt.Errorf("%w (the exchange process exited: %v)", err, r.child.waitErr)
		}
		return r, err
	}
	xCtr, err := ipc.OpenCounters(ctx, filepath.Join(r.dir, roleExchange+".counters"), ipc.WithWaitForFile())
	if err != nil {
		return r, err
	}
	files.closers = append(files.closers, xCtr.Close)
	if r.mbs.exchangePending, err = findCounter(xCtr, exchangeLabels[0]); err != nil {
		return r, err
	}
	local, err := newLocalMailboxes(cfg, files.ctr.Manager())
	r.mbs.strategyIn, r.mbs.riskIn = local.strategyIn, local.riskIn
	return r, err
}

// spawn starts this program again as the exchange process.
func (r *remoteExchange) spawn(stderr io.Writer) (err error) {
	c := r.cfg
	args := []string{
		"-role", roleExchange, "-dir", r.dir, "-watch-parent",
		"-instruments", strconv.Itoa(c.Instruments), "-threads", strconv.Itoa(c.Threads),
		"-idle", c.IdleSpec, "-cpus", c.CPUSpec, "-mailbox", strconv.Itoa(c.Capacity),
		"-lose-report", strconv.FormatInt(c.dropReport, 10), "-record", c.Record,
	}
	if c.Verbose {
		args = append(args, "-v")
	}
	if r.nats != nil {
		args = append(args, "-nats="+r.nats.url)
	}
	if r.child, err = startChild(envMain, args, stderr, stderr); err != nil {
		return fmt.Errorf("trading: starting the exchange process: %w", err)
	}
	return nil
}

// done is closed when the exchange process exits (nil without a child).
func (r *remoteExchange) done() <-chan struct{} {
	if r == nil || r.child == nil {
		return nil
	}
	return r.child.exited
}

// finish closes exchange.in after the drain and waits, up to limit, for
// the summary the exchange process writes when it has stopped.
func (r *remoteExchange) finish(limit time.Duration) {
	if _, err := r.mbs.exchangeIn.Close(mailbox.Drain); err != nil {
		r.problems = append(r.problems, "closing exchange.in: "+err.Error())
	}
	if r.nats != nil {
		r.problems = append(r.problems, r.nats.end(limit)...)
	}
	deadline := time.After(limit)
	if r.child != nil {
		select {
		case <-r.child.exited:
			if r.child.waitErr != nil {
				r.problems = append(r.problems, fmt.Sprintf("the exchange process failed: %v", r.child.waitErr))
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
			r.problems = append(r.problems, s.Errors...)
			return
		}
		if !errors.Is(err, os.ErrNotExist) || r.child != nil {
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

// summary returns the exchange's counts and adds the exchange process's
// problems.
func (r *remoteExchange) summary(problems []string) (exchangeCounts, []string) {
	problems = append(problems, r.problems...)
	if r.sum == nil {
		return exchangeCounts{}, problems
	}
	return r.sum.Exchange, problems
}

// close ends the child and closes the NATS link.
func (r *remoteExchange) close() error {
	var err error
	if r.child != nil && r.child.end(nil) {
		err = fmt.Errorf("trading: killed the exchange process %d", r.child.cmd.Process.Pid)
	}
	return errors.Join(err, r.nats.close())
}

// child is this program started again with env set (the exchange
// process, the feeder), in its own process group: a Ctrl-C reaches only
// the demo, which ends the child in order.
type child struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed once it has exited
	waitErr error         // its exit, once exited is closed
}

func startChild(env string, args []string, stdout, stderr io.Writer) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	c := &child{cmd: exec.Command(exe, args...), exited: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), env+"=1")
	c.cmd.Stdout, c.cmd.Stderr = stdout, stderr
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		c.waitErr = c.cmd.Wait()
		close(c.exited)
	}()
	return c, nil
}

func (c *child) hasExited() bool {
	select {
	case <-c.exited:
		return true
	default:
		return false
	}
}

// end sends sig (if not nil) and waits for the child to exit, killing it
// after 5 s; it reports whether it had to.
func (c *child) end(sig os.Signal) bool {
	if sig != nil {
		_ = c.cmd.Process.Signal(sig)
	}
	select {
	case <-c.exited:
		return false
	case <-time.After(5 * time.Second):
		_ = c.cmd.Process.Kill()
		<-c.exited
		return true
	}
}
