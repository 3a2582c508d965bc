package main

import (
	"bufio"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWatchableDemo: while the trading demo runs, a scrape of the
// directory it prints shows every mailbox's traffic and depth and every
// thread's cycles, and dutystat reads the same counters.
func TestWatchableDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the trading demo")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "trading")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/dutyrt/duty/examples/trading")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	dir := t.TempDir()
	demo := exec.CommandContext(ctx, bin, "-duration", "3s", "-rate", "20000", "-dir", dir)
	stdout, err := demo.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, demo.Start())
	lines := bufio.NewScanner(stdout)
	require.True(t, lines.Scan(), "the demo printed nothing")
	require.Contains(t, lines.Text(), "dutystat -dir "+dir)
	// The first live line: the pipeline has run for a second.
	require.True(t, lines.Scan())

	fams := scrape(t, dir)
	for _, mb := range []string{"strategy.in", "strategy.resp", "risk.in", "risk.resp", "exchange.in"} {
		v, ok := value(fams, "duty_delivered_total", map[string]string{"file": "demo.counters", "role": mb})
		require.True(t, ok, mb)
		require.Positive(t, v, mb)
		_, ok = value(fams, "duty_mailbox_depth", map[string]string{"role": mb})
		require.True(t, ok, mb)
	}
	for _, th := range []string{"trader", "exchange"} {
		v, ok := value(fams, "duty_duty_cycles_total", map[string]string{"role": th})
		require.True(t, ok, th)
		require.Positive(t, v, th)
		_, ok = value(fams, "duty_longest_cycle_ns", map[string]string{"role": th})
		require.True(t, ok, th)
	}

	// Tick-to-order and tick-to-trade, as the library's histograms.
	for _, h := range []string{"tick-to-order ns", "tick-to-trade ns"} {
		n, ok := value(fams, "duty_histogram", map[string]string{"file": "demo.histograms", "histogram": h})
		require.True(t, ok, h)
		require.Positive(t, n, h)
	}

	var text strings.Builder
	code := runEnv(ctx, &text, &text, []string{"-dir", dir, "-window", "0"}, defaultEnv())
	require.Equal(t, 0, code, text.String())
	require.Contains(t, text.String(), "delivered: exchange.in")
	require.Contains(t, text.String(), "tick-to-trade ns")

	var rest strings.Builder
	for lines.Scan() {
		rest.WriteString(lines.Text() + "\n")
	}
	require.NoError(t, demo.Wait(), rest.String())
	require.Contains(t, rest.String(), "reconciliation: ok")
}
