package main

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/journal"
)

// Journals in the directory and its subdirectories are listed: segments,
// positions, flush lag, the registered readers of every process (count,
// and per reader pid, name, position, lag), the writer's pid, the indexed streams;
// a closed journal shows as closed, and a damaged status file as an error
// on its row, never a failure of the run.
func TestJournalsAreListed(t *testing.T) {
	dir := t.TempDir()
	jdir := filepath.Join(dir, "orders")
	j, err := journal.Open(jdir, journal.Options{SegmentSize: journal.MinSegmentSize, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer j.Close()
	for i := range 100 {
		_, _, err := j.Append(uint32(1+i%2), 1, make([]byte, 100))
		require.NoError(t, err)
	}
	tl, err := j.NewTailer()
	require.NoError(t, err)
	// A reader of its own (as another process would open it): registered
	// too, with its name and position.
	ro, err := journal.Open(jdir, journal.Options{ReadOnly: true, ReaderName: "audit"})
	require.NoError(t, err)
	rt, err := ro.NewTailer()
	require.NoError(t, err)
	first, _, err := rt.Next()
	require.NoError(t, err)
	// Two Flusher cycles: the first sees the writer's appends and keeps
	// its indexer behind them, the second finds the writer paused and
	// indexes to the end; each publishes the status.
	for range 2 {
		_, err = j.Flusher().DoWork()
		require.NoError(t, err)
	}

	fe := &fakeEnv{t: time.Now()}
	var frame struct {
		Journals []journalSample `json:"journals"`
	}
	require.NoError(t, json.Unmarshal([]byte(runOK(t, fe.env(), "-dir", dir, "-json", "-window", "0")), &frame))
	require.Len(t, frame.Journals, 1)
	s := frame.Journals[0]
	require.Equal(t, "orders", s.Name)
	require.Equal(t, 1, s.Segments)
	require.Equal(t, int64(journal.MinSegmentSize), s.SegmentSize)
	require.Equal(t, j.CommittedPosition(), *s.Committed)
	require.Equal(t, j.Stats().Committed-j.Stats().Flushed, *s.FlushLag)
	require.Positive(t, *s.FlushLag, "nothing flushed yet under FlushOS")
	require.Equal(t, int64(2), *s.Readers)
	require.Len(t, s.ReaderList, 2)
	audit := s.ReaderList[1]
	require.Equal(t, journalReader{PID: os.Getpid(), Name: "audit", Position: rt.Position(), Lag: j.CommittedPosition() - rt.Position(),
		Alive: true, UpdatedAgeMs: audit.UpdatedAgeMs}, audit)
	require.Greater(t, rt.Position(), first.Position)
	require.Equal(t, os.Getpid(), s.WriterPID)
	require.True(t, s.WriterAlive)
	require.Equal(t, []journalStream{{ID: 1, Indexed: 50}, {ID: 2, Indexed: 50}}, s.Streams)

	// The Prometheus exporter serves the same.
	fams := scrape(t, dir)
	for name, want := range map[string]float64{
		"duty_journal_up":                    1,
		"duty_journal_segments":              1,
		"duty_journal_committed_bytes_total": float64(j.CommittedPosition()),
		"duty_journal_flush_lag_bytes":       float64(*s.FlushLag),
		"duty_journal_readers":               2,
	} {
		v, ok := value(fams, name, map[string]string{"journal": "orders"})
		require.True(t, ok, name)
		require.Equal(t, want, v, name)
	}
	require.Equal(t, dto.MetricType_COUNTER, fams["duty_journal_committed_bytes_total"].GetType())
	v, ok := value(fams, "duty_journal_indexed_records", map[string]string{"journal": "orders", "stream": "2"})
	require.True(t, ok)
	require.Equal(t, 50.0, v)

	text := runOK(t, fe.env(), "-dir", dir, "-window", "0")
	require.Regexp(t, regexp.MustCompile(`(?m)^orders\s+1\s+64\s+`+strconv.FormatInt(j.CommittedPosition(), 10)+`\s+\d+\s+\d+\s+2\s+`+strconv.Itoa(os.Getpid())+`\s+\d+ms ago\s+1:50 2:50$`), text)

	require.Regexp(t, regexp.MustCompile(`(?m)^orders\s+`+strconv.Itoa(os.Getpid())+`\s+audit\s+`+strconv.FormatInt(rt.Position(), 10)+
		`\s+`+strconv.FormatInt(audit.Lag, 10)+`\s+\d+ms ago\s+alive$`), text)

	require.NoError(t, rt.Close())
	require.NoError(t, ro.Close())
	require.NoError(t, tl.Close())
	require.NoError(t, j.Close())
	text = runOK(t, fe.env(), "-dir", jdir, "-window", "0") // the journal's own directory
	require.Regexp(t, regexp.MustCompile(`(?m)^\.\s+1\s+64\s+(\d+)\s+(\d+)\s+0\s+0\s+closed\s`), text)

	require.NoError(t, os.WriteFile(filepath.Join(jdir, "status"), []byte("garbage"), 0o644))
	text = runOK(t, fe.env(), "-dir", dir, "-window", "0")
	require.Regexp(t, regexp.MustCompile(`(?m)^orders\s.*status file of 7 bytes`), text)
}
