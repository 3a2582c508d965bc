package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/counters"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

// TestMain runs the demo's main instead of the tests when envMain is set:
// the tests start this binary as the demo (to send it SIGINT and read its
// exit status) and the demo starts it as its exchange process.
func TestMain(m *testing.M) {
	if os.Getenv(envMain) == "1" {
		os.Exit(realMain(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}

// runIn runs the demo in this process with flags and returns ok and the
// output.
func runIn(t *testing.T, args ...string) (bool, string) {
	t.Helper()
	cfg, err := parseFlags(args, io.Discard)
	require.NoError(t, err)
	var out, errOut bytes.Buffer
	ok, err := run(context.Background(), cfg, &out, &errOut)
	require.NoError(t, err, "stderr: %s", errOut.String())
	t.Logf("%s%s", out.String(), errOut.String())
	return ok, out.String()
}

// table parses the final table's "stage counter count [per-s]" rows.
func table(t *testing.T, out string) map[string]int64 {
	t.Helper()
	m := map[string]int64{}
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		switch f[0] {
		case "feed", "strategy", "risk", "exchange":
			if n, err := strconv.ParseInt(f[2], 10, 64); err == nil {
				m[f[0]+" "+f[1]] = n
			}
		case "tick-to-order", "tick-to-trade":
			n, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err, line)
			m[f[0]] = n
		case "quote", "order": // the stages of tick-to-order: "order out of risk 123 ..."
			for i := 2; i < len(f); i++ {
				if n, err := strconv.ParseInt(f[i], 10, 64); err == nil {
					m[strings.Join(f[:i], " ")] = n
					break
				}
			}
		}
	}
	return m
}

func lastLine(out string) string {
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	return lines[len(lines)-1]
}

// requireReconciled checks the end of a run: reconciliation ok on the
// last line, every stage busy, the books checked and never broken.
func requireReconciled(t *testing.T, out string) {
	t.Helper()
	m := requireLedger(t, out)
	for _, k := range notCounted(m) {
		require.Positive(t, m[k], "%s is not counted", k)
	}
}

// activityCounters are the counters of the final table that a healthy run
// moves, and stageCounters the sampled stages of tick-to-order with the
// counter each samples a share of.
var (
	activityCounters = []string{
		"feed quotes", "strategy quotes-in", "strategy orders-out", "strategy cancels-out", "strategy reports-in",
		"strategy fills-in", "strategy risk-rejects-in", "risk quotes-in", "risk orders-in", "risk passed", "risk rejected",
		"risk reports-in", "exchange quotes-in", "exchange orders-in", "exchange acks", "exchange fills",
		"exchange partial-fills", "exchange cancelled", "exchange book-checks", "exchange participant-orders",
		"tick-to-order", "tick-to-trade",
	}
	stageCounters = map[string]string{
		"quote at strategy": "strategy quotes-in", "order out of strategy": "strategy orders-out",
		"order at risk": "risk orders-in", "order out of risk": "risk passed", "order at exchange": "tick-to-order",
	}
)

// notCounted returns the activity counters and sampled stages that m
// (a final table) has at zero, in a stable order.
func notCounted(m map[string]int64) []string {
	var zero []string
	for _, k := range activityCounters {
		if m[k] <= 0 {
			zero = append(zero, k)
		}
	}
	for _, stage := range slices.Sorted(maps.Keys(stageCounters)) {
		if m[stage] <= 0 {
			zero = append(zero, stage)
		}
	}
	return zero
}

// requireLedger checks what must hold at the end of every run however
// little it did: reconciliation ok on the last line, the ledger equations
// of the printed table, the books never broken, and each sampled stage a
// share of its counter. It returns the table.
func requireLedger(t *testing.T, out string) map[string]int64 {
	t.Helper()
	require.Equal(t, "reconciliation: ok", lastLine(out))
	m := table(t, out)
	require.Zero(t, m["exchange book-check-failures"])
	// The ledger equations, once more from the printed table.
	require.Equal(t, m["feed quotes"], m["exchange quotes-in"])
	require.Equal(t, m["strategy orders-out"], m["risk passed"]+m["risk rejected"])
	require.Equal(t, m["risk passed"], m["exchange orders-in"])
	require.Equal(t, m["exchange reports-out"], m["strategy reports-in"])
	require.Equal(t, m["exchange filled-qty"], m["strategy filled-qty"])
	// The stages of tick-to-order follow a sample of the quotes: the same
	// orders at every point, and a share of what the counters count.
	require.Equal(t, m["order out of strategy"], m["order at risk"])
	require.Equal(t, m["order out of risk"], m["order at exchange"])
	for stage, counter := range stageCounters {
		if m[counter] > 0 { // zero is notCounted's to report
			require.Less(t, m[stage], m[counter]/4, "%s samples more than a share of %s", stage, counter)
		}
	}
	return m
}

// TestInProcess runs the demo's pipeline in this process for a short
// time: every quote, order and report is accounted for, the books'
// invariants held at every check (no crossed book, fills never above the
// order quantity, ...), every fill report's quantities add up, and every
// stage did work.
func TestInProcess(t *testing.T) {
	ok, out := runIn(t, "-duration", "1500ms", "-instruments", "4", "-rate", "50000")
	require.True(t, ok)
	requireReconciled(t, out)
	watch, rest, _ := strings.Cut(out, "\n")
	require.True(t, strings.HasPrefix(watch, "watch it: go run ./cmd/dutystat -dir "), "where to watch it, first")
	require.True(t, strings.HasPrefix(rest, "t=1s quotes "), "then the live line")
	require.Contains(t, out, "final: duration reached")
}

// TestThreadLayouts runs the other groupings of agents on threads, and
// -idle and -cpus given per role. Every run must reconcile; every counter
// and sampled stage must move in some run of the layout. Some paths are
// rare (a risk reject needs an order that breaks a limit), and a run
// starved of CPU by other processes makes fewer orders in its duration,
// so a layout whose run left one at zero runs again, twice as long, up to
// a bound: a path that never counts still fails.
func TestThreadLayouts(t *testing.T) {
	for _, args := range [][]string{
		{"-threads", "1"},
		{"-threads", "3", "-idle", "feed=backoff,trader=yield,exchange=backoff:10:5:1us:100us"},
		{"-threads", "4", "-idle", "sleep-ns:1000", "-cpus", "feed=0,strategy=1,risk=0,exchange=1"},
		{"-threads", "2", "-rate", "0", "-mailbox", "4096"}, // flat out, small mailboxes: back-pressure everywhere
		{"-idle", "wake:10"},                      // threads asleep on their mailboxes between messages
		{"-threads", "4", "-idle", "wake:10:5ms"}, // the feed alone: asleep until its next tick
		{"-threads", "2", "-rate", "0", "-mailbox", "4096", "-idle", "wake:1"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			missing := notCounted(nil) // all of them
			for d := 600 * time.Millisecond; ; d *= 2 {
				ok, out := runIn(t, append([]string{"-duration", d.String(), "-instruments", "3", "-rate", "30000"}, args...)...)
				require.True(t, ok)
				m := requireLedger(t, out)
				missing = slices.DeleteFunc(missing, func(k string) bool { return m[k] > 0 })
				if len(missing) == 0 {
					return
				}
				require.Less(t, d, 4*time.Second, "never counted in this layout: %v", missing)
				t.Logf("not counted yet: %v; running again for %v", missing, 2*d)
			}
		})
	}
}

// TestLostReportIsCaught proves the reconciliation can fail: one report
// that never reaches the strategy breaks it.
func TestLostReportIsCaught(t *testing.T) {
	ok, out := runIn(t, "-duration", "500ms", "-instruments", "2", "-rate", "20000", "-lose-report", "50")
	require.False(t, ok)
	requireReconciliationFails(t, out, "strategy received")
}

// TestNoAllocationsPerMessage drives the four agents by hand, on this
// goroutine, with in-process mailboxes, and checks that their duty cycles
// allocate nothing once warmed up (the exchange's report buffer and the
// strategy's tables reach their size).
func TestNoAllocationsPerMessage(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates, and runs this for a minute: make allocs runs it without")
	}
	cfg, err := parseFlags([]string{"-instruments", "4", "-rate", "0"}, io.Discard)
	require.NoError(t, err)
	meta, vals, err := counters.NewRegions(statsCounters)
	require.NoError(t, err)
	mgr, err := counters.NewManager(meta, vals, counters.Config{})
	require.NoError(t, err)
	mbs, err := newLocalMailboxes(cfg, mgr) // mailboxes that publish counters, as in the demo
	require.NoError(t, err)
	f, err := newFeedAgent(cfg, monoNanos, mbs)
	require.NoError(t, err)
	t2t, err := heapLatency("tick-to-trade ns")
	require.NoError(t, err)
	t2o, err := heapLatency("tick-to-order ns")
	require.NoError(t, err)
	s, err := newStrategyAgent(cfg, monoNanos, mbs, latencies{t2t: t2t})
	require.NoError(t, err)
	r, err := newRiskAgent(cfg, monoNanos, mbs, latencies{})
	require.NoError(t, err)
	x, err := newExchangeAgent(cfg, monoNanos, mbs, exchangeWords(newWords(1+numExchPub)), latencies{t2o: t2o})
	require.NoError(t, err)
	agents := []interface{ DoWork() (int, error) }{f, s, r, x}
	for _, a := range []agent.Agent{f, s, r, x} {
		require.NoError(t, a.OnStart())
	}
	cycle := func() {
		for _, a := range agents {
			if _, err := a.DoWork(); err != nil {
				panic(err)
			}
		}
	}
	for range 20_000 {
		cycle()
	}
	before := f.made
	require.Zero(t, testing.AllocsPerRun(2_000, cycle))
	require.Greater(t, f.made-before, int64(10_000), "the feed did not run")
	require.Positive(t, s.s.Counts().Reports.Fills)
	require.NoError(t, x.x.Check())
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-duration", "0s"},
		{"-instruments", "0"},
		{"-rate", "-1"},
		{"-threads", "5"},
		{"-idle", "warp"},
		{"-idle", "trader=spin,feed=yield"}, // one thread, two specs
		{"-idle", "nobody=spin"},            // no such role
		{"-threads", "4", "-cpus", "0,1"},   // 2 CPUs for 4 threads
		{"-cpus", "0,x"},
		{"-mailbox", "1000"},
		{"-role", "broker"},
		{"-role", "exchange"},    // needs -dir
		{"-spawn=false"},         // only with -ipc
		{"-ipc", "-spawn=false"}, // needs -dir
		{"extra"},
	} {
		_, err := parseFlags(args, io.Discard)
		require.ErrorIs(t, err, errUsage, "%q", args)
	}
	cfg, err := parseFlags([]string{"-idle", "feed=spin,exchange=yield", "-cpus", "0,1"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"trader": "spin", "exchange": "yield"}, cfg.idle)
	require.Equal(t, map[string][]int{"trader": {0}, "exchange": {1}}, cfg.cpus)
	// With -ipc the exchange is a thread of the other process: same roles.
	cfg, err = parseFlags([]string{"-ipc", "-threads", "3", "-cpus", "0,1,0", "-idle", "spin"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, map[string][]int{"feed": {0}, "trader": {1}, "exchange": {0}}, cfg.cpus)
	require.Equal(t, "spin", cfg.idle["exchange"])
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{{850, "850ns"}, {4_100, "4.10µs"}, {38_000, "38µs"}, {1_230_000, "1.2ms"}, {15_000_000, "15ms"}, {1_500_000_000, "1.50s"}} {
		require.Equal(t, c.want, fmtNanos(c.ns))
	}
	for _, c := range []struct {
		v    float64
		want string
	}{{950, "950"}, {9_500, "9.5k"}, {812_000, "812k"}, {1_250_000, "1.25M"}} {
		require.Equal(t, c.want, fmtRate(c.v))
	}
	require.Equal(t, "position-limit", msg.ReasonPositionLimit.String())
}

// demo starts this test binary as the demo with args and returns the
// command, its stdout (read line by line) and its stderr buffer.
func demo(t *testing.T, ctx context.Context, args ...string) (*exec.Cmd, *bufio.Scanner, *bytes.Buffer) {
	t.Helper()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(os.Environ(), envMain+"=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	return cmd, bufio.NewScanner(stdout), &stderr
}

// finish reads the rest of the demo's stdout and waits for it: its output
// and exit status.
// untilFirstTick reads the demo's output up to and including its first
// live line ("t=1s ..."), which it must print, and returns what it read.
func untilFirstTick(t *testing.T, sc *bufio.Scanner, stderr *bytes.Buffer) string {
	t.Helper()
	var head strings.Builder
	for sc.Scan() {
		head.WriteString(sc.Text() + "\n")
		if strings.HasPrefix(sc.Text(), "t=1s ") {
			break
		}
	}
	require.Contains(t, head.String(), "t=1s ", "stderr: %s", stderr)
	return head.String()
}

func finish(t *testing.T, cmd *exec.Cmd, sc *bufio.Scanner, prefix string) (string, int) {
	t.Helper()
	var b strings.Builder
	b.WriteString(prefix)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
	}
	err := cmd.Wait()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return b.String(), code
}

// TestIPC runs the cross-process mode: the demo starts the exchange
// process (this binary again), the two connect through shared-memory
// mailboxes in a directory, and the end reconciles both sides (the
// exchange's counts come from its summary file). Afterwards only the
// summary is left in the directory. With -idle wake, each process sleeps
// on its mailbox files' doorbells and the other's sends wake it.
func TestIPC(t *testing.T) {
	for _, args := range [][]string{
		{"-duration", "2s", "-rate", "50000"},
		{"-duration", "1500ms", "-rate", "20000", "-idle", "wake:10"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := t.TempDir()
			cmd, sc, stderr := demo(t, ctx, append([]string{"-ipc", "-dir", dir, "-instruments", "4"}, args...)...)
			out, code := finish(t, cmd, sc, "")
			t.Logf("%s%s", out, stderr)
			require.Equal(t, 0, code)
			requireReconciled(t, out)
			require.Contains(t, out, "ipc (exchange in a second process)")
			require.Contains(t, stderr.String(), "exchange process: ")
			left, err := filepath.Glob(filepath.Join(dir, "*"))
			require.NoError(t, err)
			require.Equal(t, []string{filepath.Join(dir, fileSummary)}, left)
		})
	}
}

// TestIPCSeparateExchange starts the exchange process by hand, as a user
// would from a second terminal, and the demo with -spawn=false.
func TestIPCSeparateExchange(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	xcmd, xsc, xerr := demo(t, ctx, "-role", "exchange", "-dir", dir, "-instruments", "3")
	cmd, sc, stderr := demo(t, ctx, "-ipc", "-spawn=false", "-dir", dir, "-duration", "1s", "-instruments", "3", "-rate", "30000")
	out, code := finish(t, cmd, sc, "")
	t.Logf("%s%s", out, stderr)
	xout, xcode := finish(t, xcmd, xsc, "")
	t.Logf("exchange process: %s%s", xout, xerr)
	require.Equal(t, 0, code)
	require.Equal(t, 0, xcode)
	requireReconciled(t, out)
	require.Contains(t, xout, "exchange process: ")
}

// TestInterrupt sends SIGINT to a demo that would run for a minute: it
// stops the feed, drains, still prints the final table and reconciles.
func TestInterrupt(t *testing.T) {
	for _, mode := range [][]string{nil, {"-ipc"}} {
		t.Run(fmt.Sprint("mode", mode), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			args := append([]string{"-duration", "1m", "-instruments", "4", "-rate", "30000"}, mode...)
			cmd, sc, stderr := demo(t, ctx, args...)
			head := untilFirstTick(t, sc, stderr)
			require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
			out, code := finish(t, cmd, sc, head)
			t.Logf("%s%s", out, stderr)
			require.Equal(t, 0, code)
			require.Contains(t, out, "final: interrupted")
			requireReconciled(t, out)
		})
	}
}

// TestExitStatus: the exit status is 1 when the run does not reconcile,
// 2 for bad flags.
func TestExitStatus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd, sc, _ := demo(t, ctx, "-duration", "300ms", "-instruments", "2", "-rate", "20000", "-lose-report", "10")
	out, code := finish(t, cmd, sc, "")
	require.Equal(t, 1, code, out)
	require.True(t, strings.HasPrefix(lastLine(out), "reconciliation: "))
	require.NotEqual(t, "reconciliation: ok", lastLine(out))

	cmd, sc, _ = demo(t, ctx, "-threads", "9")
	_, code = finish(t, cmd, sc, "")
	require.Equal(t, 2, code)
}

// TestWrongFillIsCaught: one fill report reaches risk with the wrong side
// (counts, kinds and quantities all still add up). Risk's position and
// open quantity on that instrument are then wrong, and the reconciliation
// must say so: counting reports is not enough to call a run reconciled.
func TestWrongFillIsCaught(t *testing.T) {
	cfg, err := parseFlags([]string{"-duration", "500ms", "-instruments", "2", "-rate", "20000"}, io.Discard)
	require.NoError(t, err)
	cfg.bendFill = 50
	var out, errOut bytes.Buffer
	ok, err := run(context.Background(), cfg, &out, &errOut)
	require.NoError(t, err, "stderr: %s", errOut.String())
	t.Logf("%s%s", out.String(), errOut.String())
	require.False(t, ok)
	requireReconciliationFails(t, out.String(), "risk")
}

// requireReconciliationFails checks that the demo's output ends with a
// failed reconciliation that names want.
func requireReconciliationFails(t *testing.T, out, want string) {
	t.Helper()
	last := lastLine(out)
	require.True(t, strings.HasPrefix(last, "reconciliation: "), last)
	require.NotEqual(t, "reconciliation: ok", last)
	require.Contains(t, last, want)
}

// TestCPUsOrder: CPUs given without roles go to the threads in -threads
// order, the exchange last, although the runner starts the exchange first
// (the flag's help and the README used to say "start order").
func TestCPUsOrder(t *testing.T) {
	cfg, err := parseFlags([]string{"-threads", "4", "-cpus", "2,3,4,5"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, map[string][]int{"feed": {2}, "strategy": {3}, "risk": {4}, "exchange": {5}}, cfg.cpus)
	rc := runnerConfig(cfg, threadLayout(cfg.Threads, true), nil, nil)
	require.Equal(t, []string{"exchange", "risk", "strategy", "feed"}, rc.Order, "start order")
	require.Equal(t, []int{5}, rc.CPUs["exchange"])
}
