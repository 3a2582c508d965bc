// Command dutyjournal lists a journal (package journal) and prints its
// records, for operators and for debugging, read-only: it opens the
// journal as a reader (journal.Options.ReadOnly), beside its writer if one
// is running, and never writes to it.
//
// Usage:
//
//	dutyjournal -dir DIR                      # segments, positions, streams
//	dutyjournal -dir DIR -records [-from POS | -stream S -seq N | -since 10m] [-n 20] [-body 32] [-json]
//
// The listing gives every segment (start position, size, creation time)
// and, per stream, the number of records and the last sequence number,
// counted by reading the log. -records prints records from the start, a
// position, a stream's sequence number or a time: position, stream,
// sequence, type, timestamp, length and the first -body bytes in hex. A
// corrupt record stops the listing with an error naming its position.
// The exit status is 0, 1 if the journal cannot be read, 2 for bad flags.
package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/dutyrt/duty/journal"
)

func main() { os.Exit(run(os.Stdout, os.Stderr, os.Args[1:])) }

const (
	exitOK    = 0
	exitRead  = 1
	exitUsage = 2
)

type options struct {
	dir     string
	records bool
	from    int64
	stream  int64
	seq     int64
	since   time.Duration
	n       int
	body    int
	json    bool
}

func parse(stderr io.Writer, args []string) (options, error) {
	fs := flag.NewFlagSet("dutyjournal", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	fs.StringVar(&o.dir, "dir", "", "the journal's directory")
	fs.BoolVar(&o.records, "records", false, "print records instead of the listing")
	fs.Int64Var(&o.from, "from", -1, "with -records: the position of the first record")
	fs.Int64Var(&o.stream, "stream", -1, "with -records and -seq: the stream")
	fs.Int64Var(&o.seq, "seq", -1, "with -records and -stream: the first record's sequence number")
	fs.DurationVar(&o.since, "since", 0, "with -records: the records of the last D")
	fs.IntVar(&o.n, "n", 20, "with -records: at most this many (0: all)")
	fs.IntVar(&o.body, "body", 32, "with -records: body bytes shown in hex")
	fs.BoolVar(&o.json, "json", false, "JSON, one object per line")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	switch {
	case fs.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	case o.dir == "":
		return o, errors.New("-dir is required")
	case (o.stream >= 0) != (o.seq >= 0):
		return o, errors.New("-stream and -seq go together")
	case o.n < 0 || o.body < 0 || o.since < 0:
		return o, errors.New("-n, -body and -since must not be negative")
	}
	return o, nil
}

func run(stdout, stderr io.Writer, args []string) int {
	o, err := parse(stderr, args)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "dutyjournal:", err)
		}
		return exitUsage
	}
	j, err := journal.Open(o.dir, journal.Options{ReadOnly: true})
	if err != nil {
		fmt.Fprintln(stderr, "dutyjournal:", err)
		return exitRead
	}
	defer j.Close()
	if o.records {
		err = printRecords(stdout, j, o)
	} else {
		err = list(stdout, j, o.dir, o.json)
	}
	if err != nil {
		fmt.Fprintln(stderr, "dutyjournal:", err)
		return exitRead
	}
	return exitOK
}

// streamInfo is what the listing says of one stream.
type streamInfo struct {
	Stream  uint32 `json:"stream"`
	Records int64  `json:"records"`
	LastSeq int64  `json:"last_seq"`
	LastAt  int64  `json:"last_ns"` // the last record's timestamp
}

type listing struct {
	Dir      string                `json:"dir"`
	Segments []journal.SegmentInfo `json:"segments"`
	First    int64                 `json:"first_position"`
	End      int64                 `json:"end_position"` // after the last record read
	Records  int64                 `json:"records"`
	Streams  []streamInfo          `json:"streams"`
}

// list reads the whole log once to count each stream's records.
func list(w io.Writer, j *journal.Journal, dir string, asJSON bool) error {
	l := listing{Dir: dir, Segments: j.Segments(), First: j.Stats().FirstPosition}
	t, err := j.NewTailer()
	if err != nil {
		return err
	}
	defer t.Close()
	if err := t.SeekStart(); err != nil {
		return err
	}
	streams := map[uint32]*streamInfo{}
	for {
		rec, ok, err := t.Next()
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		s := streams[rec.StreamID]
		if s == nil {
			s = &streamInfo{Stream: rec.StreamID}
			streams[rec.StreamID] = s
		}
		s.Records++
		s.LastSeq, s.LastAt = rec.Sequence, rec.Timestamp
		l.Records++
	}
	l.End = t.Position()
	for _, s := range streams {
		l.Streams = append(l.Streams, *s)
	}
	sort.Slice(l.Streams, func(a, b int) bool { return l.Streams[a].Stream < l.Streams[b].Stream })
	if asJSON {
		return json.NewEncoder(w).Encode(l)
	}
	fmt.Fprintf(w, "journal %s: %d records, positions %d..%d, %d segments\n", l.Dir, l.Records, l.First, l.End, len(l.Segments))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SEGMENT\tSTART\tSIZE\tCREATED")
	for _, s := range l.Segments {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", s.Path, s.Start, s.Size, time.Unix(0, s.Created).UTC().Format(time.RFC3339Nano))
	}
	fmt.Fprintln(tw, "\nSTREAM\tRECORDS\tLAST SEQ\tLAST")
	for _, s := range l.Streams {
		fmt.Fprintf(tw, "%d\t%d\t%d\t%s\n", s.Stream, s.Records, s.LastSeq, time.Unix(0, s.LastAt).UTC().Format(time.RFC3339Nano))
	}
	return tw.Flush()
}

// recordLine is one printed record.
type recordLine struct {
	Position  int64  `json:"position"`
	Stream    uint32 `json:"stream"`
	Sequence  int64  `json:"seq"`
	Type      int32  `json:"type"`
	Timestamp int64  `json:"ns"`
	Length    int    `json:"length"`
	Parts     int    `json:"parts"`    // 1 but for a multipart record
	Body      string `json:"body_hex"` // the first -body bytes (a multipart record's part table first)
}

func printRecords(w io.Writer, j *journal.Journal, o options) error {
	t, err := j.NewTailer()
	if err != nil {
		return err
	}
	defer t.Close()
	switch {
	case o.from >= 0:
		err = t.SeekPosition(o.from)
	case o.stream >= 0:
		err = t.SeekSequence(uint32(o.stream), o.seq)
	case o.since > 0:
		err = t.SeekTime(time.Now().Add(-o.since).UnixNano())
	default:
		err = t.SeekStart()
	}
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if !o.json {
		fmt.Fprintln(tw, "POSITION\tSTREAM\tSEQ\tTYPE\tTIME\tLENGTH\tPARTS\tBODY")
	}
	var parts [][]byte
	for n := 0; o.n == 0 || n < o.n; n++ {
		rec, ok, err := t.Next()
		if err == nil && ok {
			parts, err = rec.Parts(parts)
		}
		if err != nil {
			tw.Flush()
			return err
		}
		if !ok {
			break
		}
		l := recordLine{Position: rec.Position, Stream: rec.StreamID, Sequence: rec.Sequence, Type: rec.TypeID,
			Timestamp: rec.Timestamp, Length: len(rec.Body), Parts: len(parts), Body: hex.EncodeToString(rec.Body[:min(len(rec.Body), o.body)])}
		if o.json {
			if err := enc.Encode(l); err != nil {
				return err
			}
			continue
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%s\t%d\t%d\t%s\n", l.Position, l.Stream, l.Sequence, l.Type,
			time.Unix(0, l.Timestamp).UTC().Format(time.RFC3339Nano), l.Length, l.Parts, l.Body)
	}
	return tw.Flush()
}
