package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/journal"
)

// newJournal writes n records into a new journal, alternating streams 1
// and 2, and leaves it open for writing, as a running writer would.
func newJournal(t *testing.T, n int) (string, *journal.Journal) {
	dir := t.TempDir()
	j, err := journal.Open(dir, journal.Options{SegmentSize: journal.MinSegmentSize, Clock: func() int64 { return 1_700_000_000_000_000_000 }})
	require.NoError(t, err)
	t.Cleanup(func() { j.Close() })
	for i := range n {
		_, _, err := j.Append(uint32(1+i%2), 7, []byte(fmt.Sprintf("record %04d", i)))
		require.NoError(t, err)
	}
	return dir, j
}

func runOK(t *testing.T, args ...string) string {
	var out, errOut bytes.Buffer
	require.Equal(t, exitOK, run(&out, &errOut, args), errOut.String())
	return out.String()
}

func TestListing(t *testing.T) {
	dir, _ := newJournal(t, 5000) // several 64 KiB segments
	out := runOK(t, "-dir", dir)
	t.Log(out)
	require.Contains(t, out, "5000 records")
	require.Regexp(t, regexp.MustCompile(`(?m)^1\s+2500\s+2499\s`), out)
	require.Regexp(t, regexp.MustCompile(`(?m)^2\s+2500\s+2499\s`), out)
	require.GreaterOrEqual(t, strings.Count(out, ".seg"), 2)

	var l listing
	require.NoError(t, json.Unmarshal([]byte(runOK(t, "-dir", dir, "-json")), &l))
	require.Equal(t, int64(5000), l.Records)
	require.Len(t, l.Streams, 2)
}

func TestRecords(t *testing.T) {
	dir, _ := newJournal(t, 100)
	out := runOK(t, "-dir", dir, "-records", "-stream", "2", "-seq", "10", "-n", "3", "-body", "6")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 4, out)
	require.Regexp(t, regexp.MustCompile(`^\d+\s+2\s+10\s+7\s+2023-11-14T22:13:20Z\s+11\s+1\s+`+fmt.Sprintf("%x", "record")+`$`), lines[1])

	var first recordLine
	js := runOK(t, "-dir", dir, "-records", "-n", "1", "-json")
	require.NoError(t, json.Unmarshal([]byte(js), &first))
	require.Equal(t, recordLine{Position: first.Position, Stream: 1, Sequence: 0, Type: 7, Timestamp: 1_700_000_000_000_000_000, Length: 11,
		Parts: 1, Body: fmt.Sprintf("%x", "record 0000")}, first)
	from := runOK(t, "-dir", dir, "-records", "-from", fmt.Sprint(first.Position), "-n", "1")
	require.Contains(t, from, fmt.Sprintf("%x", "record 0000")[:20])
}

// A multipart record shows its part count; a bad part table stops the
// listing with an error naming the record.
func TestMultipartRecords(t *testing.T) {
	dir := t.TempDir()
	j, err := journal.Open(dir, journal.Options{SegmentSize: journal.MinSegmentSize})
	require.NoError(t, err)
	defer j.Close()
	_, _, err = j.AppendParts(3, 4, []byte("ab"), []byte("c"), []byte("de"))
	require.NoError(t, err)
	var rec recordLine
	require.NoError(t, json.Unmarshal([]byte(runOK(t, "-dir", dir, "-records", "-json")), &rec))
	require.Equal(t, 3, rec.Parts)
	require.Equal(t, 4+4*3+5, rec.Length)
}

func TestBadUse(t *testing.T) {
	var out, errOut bytes.Buffer
	require.Equal(t, exitUsage, run(&out, &errOut, nil))
	require.Equal(t, exitUsage, run(&out, &errOut, []string{"-dir", "x", "-stream", "1"}))
	require.Equal(t, exitRead, run(&out, &errOut, []string{"-dir", t.TempDir() + "/nothing"}))
}
