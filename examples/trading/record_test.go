package main

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// positionsOf returns the "position" table's rows of out.
func positionsOf(out string) []string {
	var rows []string
	in := false
	for line := range strings.SplitSeq(out, "\n") {
		switch {
		case strings.HasPrefix(line, "position "):
			in = true
		case in && line != "" && line[0] >= '0' && line[0] <= '9':
			rows = append(rows, line)
		default:
			in = false
		}
	}
	return rows
}

// A recorded run, replayed from its journals, reaches the same final
// positions and the same reconciliation, every message each agent sends
// matching what its receiver recorded; with back-pressure (small
// mailboxes, flat out) so that thread timing decides the interleaving.
func TestRecordThenReplay(t *testing.T) {
	for _, args := range [][]string{
		{"-rate", "50000"},
		{"-rate", "0", "-mailbox", "4096", "-threads", "4"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "rec")
			ok, rec := runIn(t, append([]string{"-duration", "500ms", "-instruments", "3", "-record", dir}, args...)...)
			require.True(t, ok)
			require.Equal(t, "reconciliation: ok", lastLine(rec))
			require.Contains(t, rec, "recorded to "+dir)

			ok, rep := runIn(t, "-replay", dir)
			require.True(t, ok)
			require.Equal(t, "reconciliation: ok", lastLine(rep))
			require.Contains(t, rep, " 0 differ from the recording")
			require.Contains(t, rep, "positions: as in the recorded run")
			require.Len(t, positionsOf(rec), 3)
			require.Equal(t, positionsOf(rec), positionsOf(rep))
		})
	}
}

// With -ipc or -nats the exchange process records the exchange's input
// into the same directory, and the recording replays in one process to
// the same positions and reconciliation.
func TestRecordAcrossProcessesThenReplay(t *testing.T) {
	for _, mode := range []string{"-ipc", "-nats"} {
		t.Run(mode, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "rec")
			ok, rec := runIn(t, "-duration", "500ms", "-instruments", "3", "-rate", "30000", mode, "-record", dir)
			require.True(t, ok, rec)
			require.Equal(t, "reconciliation: ok", lastLine(rec))
			require.Regexp(t, `recorded to .*: strategy [1-9]\d*, risk [1-9]\d*, exchange [1-9]\d* messages consumed`, rec)
			for _, role := range recRoles {
				require.DirExists(t, filepath.Join(dir, role))
			}

			ok, rep := runIn(t, "-replay", dir)
			require.True(t, ok, rep)
			require.Equal(t, "reconciliation: ok", lastLine(rep))
			require.Contains(t, rep, " 0 differ from the recording")
			require.Contains(t, rep, "positions: as in the recorded run")
			require.Len(t, positionsOf(rec), 3)
			require.Equal(t, positionsOf(rec), positionsOf(rep))
		})
	}
}

// The replay reproduces a failed run too (a lost report), and notices a
// replay that does not reproduce the recording (the strategy's seed
// changed after the fact).
func TestReplayReproducesAndChecks(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rec")
	ok, rec := runIn(t, "-duration", "400ms", "-instruments", "2", "-rate", "20000", "-lose-report", "20", "-record", dir)
	require.False(t, ok)
	requireReconciliationFails(t, rec, "strategy received")
	ok, rep := runIn(t, "-replay", dir)
	require.False(t, ok)
	require.Equal(t, lastLine(rec), lastLine(rep), "the same failure")
	require.Equal(t, positionsOf(rec), positionsOf(rep))

	path := filepath.Join(dir, recRunFile)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var run recordedRun
	require.NoError(t, json.Unmarshal(b, &run))
	run.Seed++
	b, err = json.Marshal(run)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))
	ok, rep = runIn(t, "-replay", dir)
	require.False(t, ok)
	require.Contains(t, lastLine(rep), "replayed strategy->risk differs from the recording")
}

func TestRecordFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-record", "a", "-replay", "b"},
		{"-replay", "b", "-ipc"},
		{"-replay", "b", "-nats"},
		{"-replay", "b", "-role", "exchange", "-dir", "x"},
	} {
		_, err := parseFlags(args, io.Discard)
		require.ErrorIs(t, err, errUsage, "%q", args)
	}
	for _, args := range [][]string{{}, {"-ipc"}} {
		for _, role := range recRoles {
			dir := t.TempDir()
			require.NoError(t, os.Mkdir(filepath.Join(dir, role), 0o755))
			cfg, err := parseFlags(append([]string{"-duration", "100ms", "-record", dir}, args...), io.Discard)
			require.NoError(t, err)
			_, err = run(t.Context(), cfg, io.Discard, io.Discard)
			require.ErrorIs(t, err, errUsage, "%q: a directory that holds a recording already (%s)", args, role)
		}
	}
	dir := t.TempDir()
	cfg, err := parseFlags([]string{"-replay", filepath.Join(dir, "none")}, io.Discard)
	require.NoError(t, err)
	_, err = run(t.Context(), cfg, io.Discard, io.Discard)
	require.ErrorIs(t, err, os.ErrNotExist)
}
