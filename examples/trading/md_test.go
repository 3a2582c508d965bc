package main

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/mdfeed"
	"github.com/dutyrt/duty/zmtp"
)

// -md alone: the demo starts the feeder (this test binary again, as
// mdfeed.Main), takes its quotes over ZMTP, and still reconciles: every
// quote the feeder published arrived, matched the demo's generator, and
// went through the pipeline.
func TestMarketDataFromSpawnedFeeder(t *testing.T) {
	ok, out := runIn(t, "-md", "-duration", "1500ms", "-instruments", "4", "-rate", "50000")
	require.True(t, ok)
	requireReconciled(t, out)
	require.Regexp(t, `market data: [1-9]\d* quotes from tcp://127\.0\.0\.1:\d+ \(the feeder published [1-9]\d*, dropped 0\)`, out)
	m := table(t, out)
	require.Contains(t, out, "the feeder published "+strconv.FormatInt(m["feed quotes"], 10)+",", "what was published is what arrived")
}

// startFeeder runs a feeder in this process, as one started by hand, and
// returns its endpoint and a function that waits for its result.
func startFeeder(t *testing.T, cfg mdfeed.Config) (string, func() error) {
	t.Helper()
	eps := make(chan string, 1)
	cfg.Endpoint, cfg.Bound = "tcp://127.0.0.1:0", func(ep string) { eps <- ep }
	done := make(chan struct{})
	var err error
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _, err = mdfeed.Run(ctx, cfg); close(done) }()
	wait := func() error { <-done; return err }
	t.Cleanup(func() { cancel(); <-done })
	select {
	case ep := <-eps:
		return ep, wait
	case <-done:
		t.Fatal(err)
	case <-time.After(10 * time.Second):
		t.Fatal("the feeder did not bind")
	}
	return "", nil
}

// -md ENDPOINT: a feeder started by hand, whose stream ends well before
// the demo's duration (the demo stops forwarding at its end, so a slow
// pipeline, as under -race on two loaded CPUs, needs the margin): the end
// message arrives and the counts agree.
func TestMarketDataFromAFeederStartedByHand(t *testing.T) {
	ep, wait := startFeeder(t, mdfeed.Config{Instruments: 3, Seed: 7, Rate: 30000, Duration: 300 * time.Millisecond})
	ok, out := runIn(t, "-md", ep, "-duration", "2500ms", "-instruments", "3", "-seed", "7", "-rate", "30000")
	require.True(t, ok)
	requireReconciled(t, out)
	require.Contains(t, out, "market data: ")
	require.Contains(t, out, "quotes from "+ep+" (the feeder published ")
	require.NoError(t, wait())
}

// A feeder with another seed sends other quotes: the check against the
// demo's generator catches it, and the run does not reconcile.
func TestMarketDataFromAnotherSeedIsCaught(t *testing.T) {
	ep, _ := startFeeder(t, mdfeed.Config{Instruments: 3, Seed: 8, Rate: 20000, Duration: 400 * time.Millisecond})
	ok, out := runIn(t, "-md="+ep, "-duration", "800ms", "-instruments", "3", "-seed", "7", "-rate", "20000")
	require.False(t, ok)
	last := lastLine(out)
	require.True(t, strings.HasPrefix(last, "reconciliation: "), last)
	require.Contains(t, last, "differ from the generator's")
}

func TestMarketDataFlags(t *testing.T) {
	cfg, err := parseFlags([]string{"-md", "tcp://127.0.0.1:5556", "-duration", "2s"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "tcp://127.0.0.1:5556", cfg.MD)
	require.Equal(t, 2*time.Second, cfg.Duration)
	cfg, err = parseFlags([]string{"-duration", "2s", "-md"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, mdAuto, cfg.MD)
	cfg, err = parseFlags([]string{"-md=ipc:///tmp/md.sock"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "ipc:///tmp/md.sock", cfg.MD)
	for _, bad := range [][]string{
		{"-md", "-rate", "0"},
		{"-md=localhost:5556"},
		{"-md", "tcp://x:1", "extra"},
		{"-md", "-nats"},
		{"-md", "-record", "/tmp/x"},
		{"-md", "-replay", "/tmp/x"},
	} {
		_, err := parseFlags(bad, io.Discard)
		require.ErrorIs(t, err, errUsage, "%q", bad)
	}
}

// -md with CURVE (-md-curve): the demo makes a key pair for itself
// and one for the feeder it starts, which admits the demo's key only; the
// quotes come encrypted and the run reconciles as without.
func TestMarketDataWithCurveFromSpawnedFeeder(t *testing.T) {
	ok, out := runIn(t, "-md", "-md-curve", "-duration", "1500ms", "-instruments", "4", "-rate", "50000")
	require.True(t, ok)
	requireReconciled(t, out)
	require.Regexp(t, `market data: [1-9]\d* quotes from tcp://127\.0\.0\.1:\d+ with CURVE \(the feeder published [1-9]\d*, dropped 0\)`, out)
}

// -md ENDPOINT with CURVE: a feeder started by hand with its own key pair
// and the demo's public key; the demo with its secret key file and the
// feeder's public key.
func TestMarketDataWithCurveFromAFeederStartedByHand(t *testing.T) {
	dir := t.TempDir()
	demoPub, err := mdfeed.WriteKeyPair(filepath.Join(dir, "demo.key"))
	require.NoError(t, err)
	feederPub, err := mdfeed.WriteKeyPair(filepath.Join(dir, "feeder.key"))
	require.NoError(t, err)
	_, feederSec, err := mdfeed.ReadSecretKey(filepath.Join(dir, "feeder.key"))
	require.NoError(t, err)
	ep, wait := startFeeder(t, mdfeed.Config{Instruments: 3, Seed: 7, Rate: 30000, Duration: 300 * time.Millisecond,
		Curve: &zmtp.Curve{Public: feederPub, Secret: feederSec, Server: true, Allow: []zmtp.CurveKey{demoPub}}})
	ok, out := runIn(t, "-md", ep, "-md-curve-server", feederPub.Z85(), "-md-curve-secret", filepath.Join(dir, "demo.key"),
		"-duration", "2500ms", "-instruments", "3", "-seed", "7", "-rate", "30000")
	require.True(t, ok)
	requireReconciled(t, out)
	require.Contains(t, out, "quotes from "+ep+" with CURVE (the feeder published ")
	require.NoError(t, wait())
}
