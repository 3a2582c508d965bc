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
// positions, flush lag, the writer's readers and pid, the indexed streams;
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
	_, err = j.Flusher().DoWork() // indexes, publishes the status
	require.NoError(t, err)

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
	require.Equal(t, j.CommittedPosition()-j.FlushedPosition(), *s.FlushLag)
	require.Positive(t, *s.FlushLag, "nothing flushed yet under FlushOS")
	require.Equal(t, int64(1), *s.Readers)
	require.Equal(t, os.Getpid(), s.WriterPID)
	require.True(t, s.WriterAlive)
	require.Equal(t, []journalStream{{ID: 1, Indexed: 50}, {ID: 2, Indexed: 50}}, s.Streams)

	// The Prometheus exporter serves the same.
	fams := scrape(t, dir)
	for name, want := range map[string]float64{
		"duty_journal_up":              1,
		"duty_journal_segments":        1,
		"duty_journal_committed_bytes": float64(j.CommittedPosition()),
		"duty_journal_flush_lag_bytes": float64(*s.FlushLag),
		"duty_journal_readers":         1,
	} {
		v, ok := value(fams, name, map[string]string{"journal": "orders"})
		require.True(t, ok, name)
		require.Equal(t, want, v, name)
	}
	require.Equal(t, dto.MetricType_COUNTER, fams["duty_journal_committed_bytes"].GetType())
	v, ok := value(fams, "duty_journal_indexed_records", map[string]string{"journal": "orders", "stream": "2"})
	require.True(t, ok)
	require.Equal(t, 50.0, v)

	text := runOK(t, fe.env(), "-dir", dir, "-window", "0")
	require.Regexp(t, regexp.MustCompile(`(?m)^orders\s+1\s+64\s+`+strconv.FormatInt(j.CommittedPosition(), 10)+`\s+\d+\s+\d+\s+1\s+`+strconv.Itoa(os.Getpid())+`\s+\d+ms ago\s+1:50 2:50$`), text)

	require.NoError(t, tl.Close())
	require.NoError(t, j.Close())
	text = runOK(t, fe.env(), "-dir", jdir, "-window", "0") // the journal's own directory
	require.Regexp(t, regexp.MustCompile(`(?m)^\.\s+1\s+64\s+(\d+)\s+(\d+)\s+0\s+0\s+closed\s`), text)

	require.NoError(t, os.WriteFile(filepath.Join(jdir, "status"), []byte("garbage"), 0o644))
	text = runOK(t, fe.env(), "-dir", dir, "-window", "0")
	require.Regexp(t, regexp.MustCompile(`(?m)^orders\s.*status file of 7 bytes`), text)
}
