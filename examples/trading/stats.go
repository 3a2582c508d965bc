package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ipc/counters"
	"github.com/dutyrt/duty/runner"
)

// statsCounters is how many counters the demo's counters file holds: ten
// for each of its mailboxes and five for each of its runners, with room to
// spare.
const statsCounters = 128

// statsFiles are the files through which the demo can be watched while it
// runs, in one directory: its counters file (every mailbox's and every
// runner's statistics) in either mode, beside the shared mailboxes with
// -ipc. dutystat, or its Prometheus exporter, pointed at the directory
// shows the pipeline live.
type statsFiles struct {
	dir      string
	ownDir   bool
	counters *ipc.CountersFile
	own      bool // the demo created counters (in-process mode); -ipc: the remote's
}

// openStats makes the in-process demo's directory and counters file, or,
// with -ipc, uses those of the remote exchange's setup.
func openStats(cfg config, remote *remoteExchange) (*statsFiles, error) {
	if remote != nil {
		return &statsFiles{dir: remote.dir, counters: remote.demoCtr}, nil
	}
	s := &statsFiles{dir: cfg.Dir, own: true}
	if s.dir == "" {
		base := ipc.DefaultDir()
		if err := os.MkdirAll(base, 0o700); err != nil {
			return nil, err
		}
		dir, err := os.MkdirTemp(base, "trading-")
		if err != nil {
			return nil, err
		}
		s.dir, s.ownDir = dir, true
	}
	var err error
	if s.counters, err = ipc.CreateCounters(s.dir, fileDemoCounters, statsCounters, nil, ipc.WithReplaceStale()); err != nil {
		return nil, errors.Join(err, s.close())
	}
	return s, nil
}

// manager is the counters manager mailboxes and runners publish into.
func (s *statsFiles) manager() *counters.Manager { return s.counters.Manager() }

// runnerOption makes a runner publish its statistics live.
func (s *statsFiles) runnerOption() runner.Option { return runner.WithCounters(s.manager()) }

// announce says where to watch from.
func (s *statsFiles) announce(w io.Writer) {
	fmt.Fprintf(w, "watch it: go run ./cmd/dutystat -dir %s -watch   (Prometheus: -serve :9464)\n", s.dir)
}

// heartbeat keeps the counters file's owner heartbeat fresh (the run loop
// calls it every second; -ipc: the remote's heartbeat does).
func (s *statsFiles) heartbeat() {
	if s.own {
		_ = s.counters.File().Heartbeat(time.Now().UnixMilli())
	}
}

// close removes and closes what openStats created: after the runners and
// mailboxes that publish into it have stopped.
func (s *statsFiles) close() error {
	var errs []error
	if s.own && s.counters != nil {
		errs = append(errs, s.counters.File().Remove(), s.counters.Close())
	}
	if s.ownDir {
		errs = append(errs, os.RemoveAll(s.dir))
	}
	return errors.Join(errs...)
}
