package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
)

// captureLog sends slog.Default's output to a buffer, as JSON lines, for
// the rest of the test.
func captureLog(t *testing.T) *bytes.Buffer {
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	return &buf
}

func logLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	var lines []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(l, &m))
		lines = append(lines, m)
	}
	return lines
}

// countedErrors sums the count of the default handler's lines (error lines
// and summaries) and checks each names role.
func countedErrors(t *testing.T, lines []map[string]any, role string) int64 {
	t.Helper()
	var sum int64
	for _, m := range lines {
		switch m["msg"] {
		case "duty: agent error", "duty: agent errors not logged":
			require.Equal(t, role, m["role"])
			sum += int64(m["count"].(float64))
		default:
			t.Fatalf("unexpected line %v", m)
		}
	}
	return sum
}

// fakeClockLogger is the default handler on a clock the test moves, without
// the quiet-period timer (close writes the last summary).
func fakeClockLogger(role string, now *time.Time) *errorLogger {
	l := newErrorLogger(role)
	l.now = func() time.Time { return *now }
	l.timed = false
	return l
}

// letters spells i in base 26 with the letters a-z: distinct texts that no
// digit masking can bring together.
func letters(i int) string {
	b := []byte{byte('a' + i%26)}
	for i /= 26; i > 0; i /= 26 {
		b = append(b, byte('a'+i%26))
	}
	return string(b)
}

var errFull = errors.New("full")

func TestDefaultHandlerDeduplicatesByIdentity(t *testing.T) {
	buf := captureLog(t)
	now := time.Unix(1000, 0)
	l := fakeClockLogger("gw", &now)
	boom := errors.New("boom")
	for i := range 868 {
		l.handle(boom)
		if i%2 == 0 {
			l.handle(fmt.Errorf("order %d rejected", i))                        // a number in the text: one identity
			l.handle(fmt.Errorf("order %d for %s: %w", i, letters(i), errFull)) // the wrapper's text does not count
		}
		now = now.Add(time.Millisecond)
	}
	var totals, counts []float64
	byErr := map[string]int{}
	for _, m := range logLines(t, buf) {
		require.Equal(t, "gw", m["role"])
		require.Equal(t, "duty: agent error", m["msg"])
		if m["err"] == "boom" {
			totals = append(totals, m["total"].(float64))
			counts = append(counts, m["count"].(float64))
		}
		switch e := m["err"].(string); {
		case e == "boom":
			byErr["boom"]++
		case strings.HasSuffix(e, ": full"):
			byErr["full"]++
		case strings.HasSuffix(e, " rejected"):
			byErr["rejected"]++
		}
	}
	require.Equal(t, []float64{1, 10, 100}, totals, "868 occurrences in under a second: logged at 1, 10 and 100")
	require.Equal(t, []float64{1, 9, 90}, counts, "each line stands for the errors since the previous one")
	require.Equal(t, map[string]int{"boom": 3, "full": 3, "rejected": 3}, byErr, "3 lines for each of the three identities")
	require.Len(t, l.seen, 3)

	// A recurring error is logged again once a minute, with its totals;
	// the errors not logged in the meantime are accounted for with it, as
	// more than summaryEvery has passed.
	before := len(logLines(t, buf))
	now = now.Add(repeatLogEvery)
	l.handle(boom)
	lines := logLines(t, buf)[before:]
	require.Len(t, lines, 2)
	require.Equal(t, float64(869), lines[0]["total"])
	require.Equal(t, float64(869-100), lines[0]["count"])
	require.NotEqual(t, lines[0]["first"], lines[0]["last"])
	require.Equal(t, "duty: agent errors not logged", lines[1]["msg"])
	require.Equal(t, float64(2*(434-100)), lines[1]["count"], "the two order identities")
	require.Equal(t, float64(2), lines[1]["identities"])

	l.close() // nothing left to account for
	lines = logLines(t, buf)
	require.Len(t, lines, before+2)
	require.Equal(t, int64(868+2*434+1), countedErrors(t, lines, "gw"))
}

// TestDefaultHandlerBoundsLinesAndCountsAddUp: 100 000 errors in 2 s, each
// with a text of its own, print a bounded number of lines, and the counts
// of those lines add up to 100 000. The same with a counter in the text.
func TestDefaultHandlerBoundsLinesAndCountsAddUp(t *testing.T) {
	const n = 100_000
	const span = 2 * time.Second
	for name, mk := range map[string]func(int) error{
		"distinct texts":     func(i int) error { return fmt.Errorf("unknown symbol %s", letters(i)) },
		"a counter in texts": func(i int) error { return fmt.Errorf("order %d rejected", i) },
	} {
		t.Run(name, func(t *testing.T) {
			buf := captureLog(t)
			now := time.Unix(1000, 0)
			l := fakeClockLogger("gw", &now)
			for i := range n {
				l.handle(mk(i))
				now = now.Add(span / n)
			}
			l.close()
			lines := logLines(t, buf)
			bound := logBurst + int(span/time.Second)*logRate + int(span/summaryEvery) + 1
			require.LessOrEqual(t, len(lines), bound, "lines for %d errors in %v", n, span)
			require.Equal(t, int64(n), countedErrors(t, lines, "gw"), "printed + suppressed = errors seen")
			require.LessOrEqual(t, len(l.seen), distinctErrors, "identities remembered")
		})
	}

	// Errors that go on for a minute are summarised every summaryEvery, and
	// the counts still add up.
	buf := captureLog(t)
	now := time.Unix(1000, 0)
	l := fakeClockLogger("gw", &now)
	for i := range n {
		l.handle(fmt.Errorf("unknown symbol %s", letters(i)))
		now = now.Add(time.Minute / n)
	}
	l.close()
	lines := logLines(t, buf)
	summaries := 0
	for _, m := range lines {
		if m["msg"] == "duty: agent errors not logged" {
			summaries++
		}
	}
	require.Equal(t, int(time.Minute/summaryEvery), summaries, "one every summaryEvery, the last when the agent stopped")
	require.Equal(t, int64(n), countedErrors(t, lines, "gw"))
}

// TestDefaultHandlerSummarisesAfterErrorsStop: errors not logged are
// accounted for by a timer once errors stop coming, not only when the
// agent stops.
func TestDefaultHandlerSummarisesAfterErrorsStop(t *testing.T) {
	buf := captureLog(t)
	l := newErrorLogger("quiet")
	l.every = 20 * time.Millisecond
	for i := range 100 {
		l.handle(fmt.Errorf("unknown symbol %s", letters(i)))
	}
	waitFor(t, func() bool {
		l.mu.Lock() // the summary is written under it
		defer l.mu.Unlock()
		return l.unlogged == 0
	})
	lines := logLines(t, buf)
	require.True(t, slices.ContainsFunc(lines, func(m map[string]any) bool { return m["msg"] == "duty: agent errors not logged" }))
	require.Equal(t, int64(100), countedErrors(t, lines, "quiet"))
	l.close()
	require.Len(t, logLines(t, buf), len(lines), "nothing left for the close")
}

// A panic's message carries its stack after the first line: two panics at
// one place are one error.
func TestDefaultHandlerKeysOnTheFirstLine(t *testing.T) {
	buf := captureLog(t)
	now := time.Unix(1000, 0)
	l := fakeClockLogger("p", &now)
	l.handle(&PanicError{Value: "x", Stack: []byte("goroutine 7 [running]:\nmain.f()")})
	l.handle(&PanicError{Value: "x", Stack: []byte("goroutine 9 [running]:\nmain.f()")})
	l.handle(&PanicError{Value: "y", Stack: []byte("goroutine 9 [running]:\nmain.f()")})
	require.Len(t, logLines(t, buf), 2)
}

// TestDefaultHandlerThroughARunner: an agent whose every cycle fails with
// an error text of its own, 100 000 times, then completes. The default
// handler writes a few lines a second however fast the errors come, and
// the counts of its lines add up to the runner's error count.
func TestDefaultHandlerThroughARunner(t *testing.T) {
	const n = 100_000
	buf := captureLog(t)
	a := &fakeAgent{role: "symbols", work: func(c int64) (int, error) {
		if c > n {
			return 0, agent.ErrDone
		}
		return 0, fmt.Errorf("unknown symbol %s", letters(int(c)))
	}}
	r, err := New(a, WithIdle(idle.NoOp()))
	require.NoError(t, err)
	t0 := time.Now()
	require.NoError(t, r.Start())
	waitDone(t, r)
	elapsed := time.Since(t0)
	require.NoError(t, r.Err())
	require.Equal(t, int64(n), r.Stats().Errors)
	lines := logLines(t, buf)
	// The bound follows from the rate and the time the errors took, not a
	// timing assertion: the slower the machine, the more lines it allows.
	bound := logBurst + int(elapsed.Seconds()*logRate) + 1 + int(elapsed/summaryEvery) + 1
	require.LessOrEqual(t, len(lines), bound, "lines for %d errors in %v", n, elapsed)
	require.Equal(t, int64(n), countedErrors(t, lines, "symbols"), "printed + suppressed = Stats.Errors")
}

// TestFailingDutyCycleAllocatesNothing: a duty cycle that fails with an
// error already seen (a sentinel wrapped once, the error made in advance)
// allocates nothing in the default handler when no line is due.
func TestFailingDutyCycleAllocatesNothing(t *testing.T) {
	captureLog(t)
	failure := fmt.Errorf("order 7: %w", errFull)
	left := 0
	a := &fakeAgent{role: "failing", work: func(int64) (int, error) {
		if left--; left <= 0 {
			return 0, agent.ErrDone
		}
		return 0, failure
	}}
	r, err := New(a, WithIdle(idle.NoOp()))
	require.NoError(t, err)
	now := time.Unix(1000, 0)
	r.errLog.now = func() time.Time { return now }
	run := func(cycles int) {
		left = cycles
		r.stop.Store(false)
		r.loop()
	}
	run(20_000) // past the line at 10 000 errors; the next is due at 100 000
	allocs := testing.AllocsPerRun(20, func() { run(100) })
	require.Zero(t, allocs, "allocations per 100 failing duty cycles")
	require.NoError(t, r.Close()) // never started: OnClose on this goroutine
}
