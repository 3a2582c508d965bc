package main

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// WN and WNL run from the command line, every variant, and leave
// GOMAXPROCS as they found it.
func TestRunWN(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"-w", "wn,wnl", "-n", "3000", "-reps", "1", "-warmup", "0", "-variants", "nats,bridge,bridge-runner"}, &out, &errOut), errOut.String())
	for _, want := range []string{"wn nats", "wn bridge", "wnl nats", "wnl bridge ", "wnl bridge-runner"} {
		require.Contains(t, errOut.String(), want)
	}
	require.Equal(t, procs, runtime.GOMAXPROCS(0))
}

// A message lost on the way fails the bridge variant at once: with a
// receiving mailbox too small for the window, core mode drops, and the run
// reports it rather than wait for the hang guard.
func TestWNBridgeDropFailsTheRun(t *testing.T) {
	_, err := natsBridge(4096)(smokeConfig(findWorkload("wn"), 20000, placement{}))
	require.ErrorIs(t, err, errPayload)
	require.ErrorContains(t, err, "the inbound bridge dropped")
}
