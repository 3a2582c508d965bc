package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestWatchableDemo: while the trading demo runs (its exchange in a second
// process, connected through NATS, every agent's input recorded into
// journals inside the watched directory), a scrape of the directory it
// prints shows every mailbox's traffic and depth, every thread's cycles,
// the latency histograms, the bridges and the journals, by Prometheus's
// conventions; the Grafana dashboard queries only metrics the scrape has;
// the live page shows the pipeline in a real browser; and dutystat reads
// the same counters.
func TestWatchableDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the trading demo")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "trading")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/dutyrt/duty/examples/trading")
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	dir := t.TempDir()
	// A long run, ended by SIGINT once the checks are done (the demo then
	// drains and reconciles as at the end of a run).
	demo := exec.CommandContext(ctx, bin, "-duration", "2m", "-rate", "20000", "-nats", "-dir", dir, "-record", filepath.Join(dir, "rec"))
	stdout, err := demo.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, demo.Start())
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			demo.Process.Kill()
			demo.Wait()
		}
	})
	lines := bufio.NewScanner(stdout)
	var head strings.Builder
	for lines.Scan() {
		head.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), "t=") {
			break // the first live line: the pipeline has run for a second
		}
	}
	require.Contains(t, head.String(), "dutystat -dir "+dir, head.String())
	require.Contains(t, head.String(), "-serve", "where the live page is")
	// The rest of the output, read as it comes (the demo must not block
	// on a full pipe).
	rest := make(chan string, 1)
	go func() {
		var b strings.Builder
		for lines.Scan() {
			b.WriteString(lines.Text() + "\n")
		}
		rest <- b.String()
	}()

	t.Run("scrape", func(t *testing.T) {
		fams, text := scrapeText(t, dir)
		checkScrape(t, fams, text)
		mailboxes := map[string]bool{}
		for _, m := range fams["duty_mailbox_delivered_messages_total"].GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "mailbox" {
					mailboxes[l.GetValue()] = true
				}
			}
		}
		for _, mb := range []string{"strategy.in", "strategy.resp", "risk.in", "risk.resp", "exchange.in"} {
			require.True(t, mailboxes[mb], mb)
			_, ok := value(fams, "duty_mailbox_depth_bytes", map[string]string{"mailbox": mb})
			require.True(t, ok, mb)
		}
		v, ok := value(fams, "duty_mailbox_delivered_messages_total", map[string]string{"file": "exchange.counters", "mailbox": "exchange.in"})
		require.True(t, ok)
		require.Positive(t, v)
		for _, th := range []string{"trader", "exchange"} {
			v, ok := value(fams, "duty_runner_cycles_total", map[string]string{"runner": th})
			require.True(t, ok, th)
			require.Positive(t, v, th)
			_, ok = value(fams, "duty_runner_longest_cycle_seconds", map[string]string{"runner": th})
			require.True(t, ok, th)
		}
		// Tick-to-order and tick-to-trade, as the library's histograms.
		for _, h := range []string{"tick-to-order", "tick-to-trade"} {
			n, ok := value(fams, "duty_latency_seconds", map[string]string{"histogram": h, "file": map[string]string{"tick-to-order": "exchange.histograms", "tick-to-trade": "demo.histograms"}[h]})
			require.True(t, ok, h)
			require.Positive(t, n, h)
		}
		v, ok = value(fams, "duty_natsbridge_published_batches_total", map[string]string{"bridge": "exchange.in", "direction": "out"})
		require.True(t, ok)
		require.Positive(t, v)
		_, ok = value(fams, "duty_journal_flush_lag_bytes", map[string]string{"journal": "rec/strategy"})
		require.True(t, ok)
	})

	t.Run("dashboard", func(t *testing.T) {
		checkDashboard(t, scrape(t, dir))
	})

	t.Run("page", func(t *testing.T) {
		fams := scrape(t, dir)
		checkPage(t, startServer(t, dir), fams)
	})

	t.Run("watch", func(t *testing.T) {
		var text strings.Builder
		code := runEnv(ctx, &text, &text, []string{"-dir", dir, "-watch", "-n", "1", "-window", "300ms"}, defaultEnv())
		require.Equal(t, 0, code, text.String())
		out := text.String()
		t.Log("\n" + out)
		require.NotContains(t, out, "delivered: exchange.in", "no per-counter list without -counters")
		fams := scrape(t, dir)
		for _, mb := range labelSet(fams, "duty_mailbox_delivered_messages_total", "mailbox") {
			file, name, _ := strings.Cut(mb, "/")
			require.Regexp(t, `(?m)^\s*`+regexp.QuoteMeta(name)+`\s+`+regexp.QuoteMeta(file)+`\s+[0-9]+\s`, out, "a row for %s, with its rate", mb)
		}
		for _, r := range labelSet(fams, "duty_runner_cycles_total", "runner") {
			file, name, _ := strings.Cut(r, "/")
			require.Regexp(t, `(?m)^\s*`+regexp.QuoteMeta(name)+`\s+`+regexp.QuoteMeta(file)+`\s+[0-9.]+%\s+[0-9]+\s+[0-9]+\s+[0-9.]+(ns|µs|ms|s)\s`, out, "a row for %s", r)
		}
		require.Regexp(t, `(?m)^\s*tick-to-trade\s+demo.histograms\s+[0-9]+(\s+[0-9.]+(ns|µs|ms|s)){5}$`, out, "latencies in ns, µs, ms or s")
		lines := strings.Count(out, "\n")
		require.Less(t, lines, 60, "a screenful, not one line per counter")

		text.Reset()
		code = runEnv(ctx, &text, &text, []string{"-dir", dir, "-watch", "-counters", "-n", "1", "-window", "0"}, defaultEnv())
		require.Equal(t, 0, code, text.String())
		require.Contains(t, text.String(), "delivered: exchange.in", "-counters: every counter")
	})

	t.Run("once", func(t *testing.T) {
		var text strings.Builder
		code := runEnv(ctx, &text, &text, []string{"-dir", dir, "-window", "0"}, defaultEnv())
		require.Equal(t, 0, code, text.String())
		require.Contains(t, text.String(), "delivered: exchange.in")
		require.Contains(t, text.String(), "tick-to-trade ns")
	})

	require.NoError(t, demo.Process.Signal(os.Interrupt))
	tail := <-rest
	stopped = true
	require.NoError(t, demo.Wait(), head.String()+tail)
	require.Contains(t, tail, "reconciliation: ok")
}
