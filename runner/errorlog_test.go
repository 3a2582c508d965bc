package runner

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

func TestDefaultHandlerLogsDistinctErrorsOnce(t *testing.T) {
	buf := captureLog(t)
	now := time.Unix(1000, 0)
	l := &distinctLogger{role: "gw", now: func() time.Time { return now }, seen: map[string]*seenError{}}
	boom := errors.New("boom")
	for i := range 868 {
		l.handle(boom)
		if i%2 == 0 {
			l.handle(fmt.Errorf("order %d rejected", 7)) // same text every time: one error
		}
		now = now.Add(time.Millisecond)
	}
	var counts []float64
	for _, m := range logLines(t, buf) {
		require.Equal(t, "gw", m["role"])
		if m["err"] == "boom" {
			counts = append(counts, m["count"].(float64))
		}
	}
	require.Equal(t, []float64{1, 10, 100}, counts, "868 occurrences in under a second: logged at 1, 10 and 100")

	// A recurring error is logged again once a minute, with its totals.
	buf.Reset()
	now = now.Add(repeatLogEvery)
	l.handle(boom)
	lines := logLines(t, buf)
	require.Len(t, lines, 1)
	require.Equal(t, float64(869), lines[0]["count"])
	require.NotEqual(t, lines[0]["first"], lines[0]["last"])

	// Past the bound, new errors are logged every time, marked.
	buf.Reset()
	for i := range distinctErrors {
		l.handle(fmt.Errorf("distinct %d", i))
	}
	l.handle(errors.New("one more"))
	l.handle(errors.New("one more"))
	lines = logLines(t, buf)
	// 254 fit beside the two already seen, and are logged once; the last
	// two distinct ones and both "one more" are logged every time.
	require.Equal(t, distinctErrors+2, len(lines))
	require.Equal(t, "not deduplicated: too many distinct errors", lines[len(lines)-1]["note"])
}

// A panic's message carries its stack after the first line: two panics at
// one place are one error.
func TestDefaultHandlerKeysOnTheFirstLine(t *testing.T) {
	buf := captureLog(t)
	l := &distinctLogger{role: "p", now: time.Now, seen: map[string]*seenError{}}
	l.handle(&PanicError{Value: "x", Stack: []byte("goroutine 7 [running]:\nmain.f()")})
	l.handle(&PanicError{Value: "x", Stack: []byte("goroutine 9 [running]:\nmain.f()")})
	require.Len(t, logLines(t, buf), 1)
}
