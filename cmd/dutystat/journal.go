package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/dutyrt/duty/internal/journalfile"
	"golang.org/x/sys/unix"
)

// journalSample is one journal (package journal) found in the directory
// or in one of its subdirectories, described from its files
// (journalfile.Inspect: read only, no lock).
type journalSample struct {
	Name        string `json:"name"` // relative to the directory; "." for the directory itself
	Segments    int    `json:"segments"`
	SegmentSize int64  `json:"segment_size"`
	// FirstPosition is where the oldest segment's records start.
	FirstPosition int64 `json:"first_position"`
	// From the writer's status file (absent before a writer has run):
	// committed and flushed positions, the bytes committed but not yet
	// durable, the writer's pid (0 once it closed the journal) and
	// whether that process is alive, and the status's age. Readers is the
	// number of live registered readers, in every process (the reader
	// registry; without one, the status's count).
	Committed   *int64 `json:"committed,omitempty"`
	Flushed     *int64 `json:"flushed,omitempty"`
	FlushLag    *int64 `json:"flush_lag,omitempty"`
	Readers     *int64 `json:"readers,omitempty"`
	WriterPID   int    `json:"writer_pid,omitempty"`
	WriterAlive bool   `json:"writer_alive,omitempty"`
	StatusAgeMs *int64 `json:"status_age_ms,omitempty"`
	// Streams are the indexed streams: id, first sequence, records indexed.
	Streams []journalStream `json:"streams,omitempty"`
	// ReaderList are the registered readers, live or not yet reclaimed.
	ReaderList []journalReader `json:"reader_list,omitempty"`
	Error      string          `json:"error,omitempty"`
}

// journalReader is one slot of a journal's reader registry.
type journalReader struct {
	PID      int    `json:"pid"`
	Name     string `json:"name"`
	Position int64  `json:"position"`
	// Lag is the committed position minus Position (0 without a status).
	Lag   int64 `json:"lag"`
	Alive bool  `json:"alive"`
	// UpdatedAgeMs: since it registered, sought, or entered a segment.
	UpdatedAgeMs int64 `json:"updated_age_ms"`
}

type journalStream struct {
	ID      uint32 `json:"id"`
	First   int64  `json:"first"`
	Indexed int64  `json:"indexed"`
}

// sampleJournals describes the journals in dir and in its subdirectories,
// down to journalDepth levels (a -record directory of the trading demo
// holds one journal per agent, and may itself be in the directory
// watched).
func sampleJournals(dir string, now time.Time) []journalSample {
	var out []journalSample
	if journalfile.IsJournal(dir) {
		out = append(out, sampleJournal(dir, ".", now))
	}
	var walk func(path, name string, depth int)
	walk = func(path, name string, depth int) {
		ents, err := os.ReadDir(path)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			sub, subName := filepath.Join(path, e.Name()), e.Name()
			if name != "" {
				subName = name + "/" + e.Name()
			}
			if journalfile.IsJournal(sub) {
				out = append(out, sampleJournal(sub, subName, now))
			} else if depth < journalDepth {
				walk(sub, subName, depth+1)
			}
		}
	}
	walk(dir, "", 1)
	return out
}

// journalDepth is how many levels of subdirectories sampleJournals looks
// into.
const journalDepth = 2

// journalSegmentHeader is the length of a journal segment's header
// (docs/journal.md, "Segment"): a segment's first record follows it.
const journalSegmentHeader = 64

func sampleJournal(path, name string, now time.Time) journalSample {
	s := journalSample{Name: name}
	info, err := journalfile.Inspect(path)
	if err != nil {
		s.Error = err.Error()
	}
	s.Segments, s.SegmentSize = len(info.Segments), info.SegmentSize
	if len(info.Segments) > 0 {
		s.FirstPosition = info.Segments[0] + journalSegmentHeader
	}
	if info.HasStatus {
		st := info.Status
		lag, age := st.FlushLag(), now.UnixNano()-st.Updated
		s.Committed, s.Flushed, s.FlushLag, s.Readers = &st.Committed, &st.Flushed, &lag, &st.Tailers
		s.WriterPID = st.WriterPID
		if st.WriterPID > 0 {
			err := unix.Kill(st.WriterPID, 0)
			s.WriterAlive = err == nil || err == unix.EPERM
		}
		ms := max(age, 0) / int64(time.Millisecond)
		s.StatusAgeMs = &ms
	}
	for _, st := range info.Streams {
		s.Streams = append(s.Streams, journalStream{ID: st.ID, First: st.First, Indexed: st.Indexed})
	}
	if info.HasReaders {
		n := int64(info.LiveReaders())
		s.Readers = &n
	}
	for _, r := range info.Readers {
		if r.Pending {
			continue
		}
		s.ReaderList = append(s.ReaderList, journalReader{PID: r.PID, Name: r.Name, Position: r.Position, Lag: r.Lag,
			Alive: r.Alive, UpdatedAgeMs: max(now.UnixNano()-r.Updated, 0) / int64(time.Millisecond)})
	}
	return s
}

// printJournals writes the journals' table to b.
func printJournals(b *strings.Builder, js []journalSample) error {
	if len(js) == 0 {
		return nil
	}
	fmt.Fprintf(b, "\n%d journals\n", len(js))
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOURNAL\tSEGMENTS\tFIRST\tCOMMITTED\tFLUSHED\tFLUSH-LAG\tREADERS\tWRITER\tSTATUS\tSTREAMS (id:indexed)")
	num := func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	}
	for _, s := range js {
		writer := "-"
		switch {
		case s.WriterPID > 0 && s.WriterAlive:
			writer = strconv.Itoa(s.WriterPID)
		case s.WriterPID > 0:
			writer = strconv.Itoa(s.WriterPID) + " (gone)"
		case s.Committed != nil:
			writer = "closed"
		}
		status := "-"
		if s.StatusAgeMs != nil {
			status = strconv.FormatInt(*s.StatusAgeMs, 10) + "ms ago"
		}
		if s.Error != "" {
			status = s.Error
		}
		var streams []string
		for _, st := range s.Streams {
			streams = append(streams, fmt.Sprintf("%d:%d", st.ID, st.First+st.Indexed))
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", printable(s.Name), s.Segments, s.FirstPosition,
			num(s.Committed), num(s.Flushed), num(s.FlushLag), num(s.Readers), writer, printable(status), dash(strings.Join(streams, " ")))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	return printJournalReaders(b, js)
}

// printJournalReaders writes the journals' registered readers, one a line.
func printJournalReaders(b *strings.Builder, js []journalSample) error {
	n := 0
	for _, s := range js {
		n += len(s.ReaderList)
	}
	if n == 0 {
		return nil
	}
	fmt.Fprintf(b, "\n%d journal readers\n", n)
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "JOURNAL\tPID\tNAME\tPOSITION\tLAG\tUPDATED\tSTATE")
	for _, s := range js {
		for _, r := range s.ReaderList {
			state := "alive"
			if !r.Alive {
				state = "dead"
			}
			fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%dms ago\t%s\n", printable(s.Name), r.PID, dash(printable(r.Name)),
				r.Position, r.Lag, r.UpdatedAgeMs, state)
		}
	}
	return tw.Flush()
}
