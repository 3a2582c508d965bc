package main

import (
	"bytes"
	"errors"
	"github.com/dutyrt/duty/errlog"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/runner"
)

// failing returns errBoom from its first three duty cycles and a
// different error from the fourth, then stops.
type failing struct{ n int }

var errBoom = errors.New("boom")

func (f *failing) RoleName() string { return "failing" }
func (f *failing) OnStart() error   { return nil }
func (f *failing) OnClose() error   { return nil }
func (f *failing) DoWork() (int, error) {
	f.n++
	switch {
	case f.n <= 3:
		return 1, errBoom
	case f.n == 4:
		return 1, errors.New("other failure")
	}
	return 0, agent.ErrDone
}

// TestAgentErrorsAreRecordedAndPrinted: the runner options the demo gives
// every thread record each agent error in the process's error log, once
// per distinct error with its count, and the final table lists them.
func TestAgentErrorsAreRecordedAndPrinted(t *testing.T) {
	errs, err := newHeapErrors()
	require.NoError(t, err)
	rc := runnerConfig(config{}, nil, slog.New(slog.NewTextHandler(io.Discard, nil)), errs)
	r, err := runner.New(&failing{}, rc.Options("failing")...)
	require.NoError(t, err)
	require.NoError(t, r.Start())
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the agent did not stop")
	}
	require.NoError(t, r.Close())

	obs, err := errs.observations()
	require.NoError(t, err)
	require.Len(t, obs, 2, "two distinct errors")
	require.EqualValues(t, 3, obs[0].Count)
	require.Contains(t, obs[0].Text, "boom")
	require.EqualValues(t, 1, obs[1].Count)
	require.Contains(t, obs[1].Text, "other failure")

	var out bytes.Buffer
	printErrors(&out, obs)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Equal(t, "agent errors: 2 distinct", lines[0])
	require.Len(t, lines, 3)
	require.Regexp(t, `^\s+3x\s+.*boom`, lines[1])

	out.Reset()
	printErrors(&out, nil)
	require.Equal(t, "agent errors: none\n", out.String())
}

// newHeapErrors is an error log in memory.
func newHeapErrors() (*agentErrors, error) {
	buf := make([]byte, errLogLength)
	log, err := errlog.New(buf)
	return &agentErrors{log: log, read: func(fn func(errlog.Observation)) (int, error) { return errlog.Read(buf, 0, fn) }}, err
}
