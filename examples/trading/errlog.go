package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/ipc"
)

// errLogLength is the size of each process's distinct error log: room for
// a few dozen distinct errors with their stacks. An error that finds no
// room is still logged to stderr.
const errLogLength = 64 << 10

// agentErrors is a process's distinct error log (Agrona's
// DistinctErrorLog): every error the runners report is recorded once with
// a count, in a file of the -ipc directory that dutystat shows while the
// demo runs, or in memory otherwise. The final table lists what it holds.
type agentErrors struct {
	log  *errlog.Log
	read func(fn func(errlog.Observation)) (int, error)
}

// newHeapErrors is the in-process demo's log, in memory.
func newHeapErrors() (*agentErrors, error) {
	buf := make([]byte, errLogLength) // 8-byte aligned: a heap allocation this size is
	log, err := errlog.New(buf)
	if err != nil {
		return nil, err
	}
	return &agentErrors{log: log, read: func(fn func(errlog.Observation)) (int, error) {
		return errlog.Read(buf, 0, fn)
	}}, nil
}

// fileErrors is the log of an error log file this process created.
func fileErrors(f *ipc.ErrorLogFile) *agentErrors {
	return &agentErrors{log: f.Log(), read: func(fn func(errlog.Observation)) (int, error) {
		return f.Read(0, fn)
	}}
}

// record records err; it reports whether the log had room.
func (e *agentErrors) record(err error) bool { return e.log.Record(err) }

// observations returns what the log holds, and a problem reading it.
func (e *agentErrors) observations() ([]errlog.Observation, error) {
	var obs []errlog.Observation
	_, err := e.read(func(o errlog.Observation) { obs = append(obs, o) })
	return obs, err
}

// printErrors writes the "agent errors" lines of the final table: one per
// distinct error, with its count and the first line of its text.
func printErrors(w io.Writer, obs []errlog.Observation) {
	if len(obs) == 0 {
		fmt.Fprintln(w, "agent errors: none")
		return
	}
	fmt.Fprintf(w, "agent errors: %d distinct\n", len(obs))
	for _, o := range obs {
		first, _, _ := strings.Cut(o.Text, "\n")
		fmt.Fprintf(w, "  %6dx  %s\n", o.Count, first)
	}
}
