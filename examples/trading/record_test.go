package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// positionsLine returns the "final positions: ..." line of a run's output.
func positionsLine(t *testing.T, out string) string {
	t.Helper()
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasPrefix(line, "final positions: ") {
			return line
		}
	}
	t.Fatalf("no final positions line in:\n%s", out)
	return ""
}

// TestRecordAndReplay: a replay of a recorded run handles the same
// messages (checked flow by flow), reaches the same final positions and
// counts, and reconciles.
func TestRecordAndReplay(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	ok, rec := runIn(t, "-duration", "500ms", "-instruments", "4", "-rate", "20000", "-record", dir)
	require.True(t, ok, rec)
	requireReconciled(t, rec)

	ok, rep := runIn(t, "-replay", dir)
	require.True(t, ok, rep)
	require.Equal(t, "reconciliation: ok", lastLine(rep))
	require.Contains(t, rep, "; replay; 4 instruments")
	require.Equal(t, positionsLine(t, rec), positionsLine(t, rep))
	recT, repT := table(t, rec), table(t, rep)
	compared := 0
	for k, v := range recT {
		stage, counter, _ := strings.Cut(k, " ")
		if _, err := strconv.ParseInt(counter, 10, 64); err == nil || counter == "book-checks" {
			continue // a thread row ("exchange <cycles>"), or the books' timed checks
		}
		switch stage {
		case "feed", "strategy", "risk", "exchange":
			require.Equal(t, v, repT[k], "%s", k)
			compared++
		}
	}
	require.Greater(t, compared, 30)
}

// TestReplayNoticesDivergence: a replay whose strategy is not the recorded
// one (another seed) sends other orders than risk recorded, and says so.
func TestReplayNoticesDivergence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	ok, rec := runIn(t, "-duration", "300ms", "-instruments", "4", "-rate", "20000", "-record", dir)
	require.True(t, ok, rec)
	path := filepath.Join(dir, fileRecordedRun)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var run recordedRun
	require.NoError(t, json.Unmarshal(data, &run))
	run.Seed++
	data, err = json.Marshal(&run)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, data, 0o644))

	ok, rep := runIn(t, "-replay", dir)
	require.False(t, ok, rep)
	require.Contains(t, lastLine(rep), "replay diverged: strategy's orders and cancels to risk")
}

// TestRecordReplayRefusals: -record into a recording, -replay of
// something else, and the flag combinations that make no sense are
// refused with a clear error.
func TestRecordReplayRefusals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	ok, rec := runIn(t, "-duration", "200ms", "-instruments", "2", "-rate", "10000", "-record", dir)
	require.True(t, ok, rec)

	cfg, err := parseFlags([]string{"-duration", "200ms", "-record", dir}, io.Discard)
	require.NoError(t, err)
	_, err = run(t.Context(), cfg, io.Discard, io.Discard)
	require.ErrorIs(t, err, errUsage)
	require.ErrorContains(t, err, "already holds a recording")

	cfg, err = parseFlags([]string{"-replay", t.TempDir()}, io.Discard)
	require.NoError(t, err)
	_, err = run(t.Context(), cfg, io.Discard, io.Discard)
	require.ErrorContains(t, err, "not a finished recording")

	for _, args := range [][]string{{"-record", dir, "-replay", dir}, {"-ipc", "-record", dir}} {
		_, err := parseFlags(args, io.Discard)
		require.ErrorIs(t, err, errUsage, "%q", args)
	}
}
