package journal_test

import (
	"fmt"
	"log"
	"log/slog"
	"os"

	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/runner"
)

// A writer appends records to two streams, zero copy; a Tailer reads them
// back; reopening after Close finds the log intact and continues each
// stream's sequence.
func Example() {
	dir, err := os.MkdirTemp("", "journal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	j, err := journal.Open(dir, journal.Options{SegmentSize: journal.MinSegmentSize, Flush: journal.FlushEveryCommit})
	if err != nil {
		log.Fatal(err)
	}
	for i, text := range []string{"buy 10", "sell 5", "buy 3"} {
		c, err := j.Claim(uint32(1+i%2), 100, len(text)) // stream 1 or 2, type 100
		if err != nil {
			log.Fatal(err)
		}
		copy(c.Body(), text) // in place, in the mapping
		if err := j.Commit(); err != nil {
			log.Fatal(err)
		}
	}
	tl, err := j.NewTailer()
	if err != nil {
		log.Fatal(err)
	}
	for {
		r, ok, err := tl.Next()
		if err != nil {
			log.Fatal(err)
		}
		if !ok {
			break // the live tail
		}
		fmt.Printf("stream %d #%d at %d: %s\n", r.StreamID, r.Sequence, r.Position, r.Body)
	}
	tl.Close()
	j.Close()

	j, err = journal.Open(dir, journal.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer j.Close()
	s, err := j.Stream(1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("end", j.Recovery().End, "next on stream 1:", s.NextSequence())
	// Output:
	// stream 1 #0 at 64: buy 10
	// stream 2 #0 at 112: sell 5
	// stream 1 #1 at 160: buy 3
	// end 208 next on stream 1: 2
}

// A reader in another process opens the journal read-only; its Tailer
// takes a slot in the journal's reader registry, so the writer's
// retention keeps what it has yet to read, and tools see it
// (cmd/dutystat). Here both sides run in one process.
func Example_registeredReader() {
	dir, err := os.MkdirTemp("", "journal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	w, err := journal.Open(dir, journal.Options{SegmentSize: journal.MinSegmentSize, RetainBytes: journal.MinSegmentSize,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		log.Fatal(err)
	}
	defer w.Close()
	body := make([]byte, 1000)
	if _, _, err := w.Append(1, 1, body); err != nil {
		log.Fatal(err)
	}

	r, err := journal.Open(dir, journal.Options{ReadOnly: true, ReaderName: "audit"}) // the other process
	if err != nil {
		log.Fatal(err)
	}
	defer r.Close()
	tl, err := r.NewTailer()
	if err != nil {
		log.Fatal(err)
	}
	for range 200 { // about three segments
		if _, _, err := w.Append(1, 1, body); err != nil {
			log.Fatal(err)
		}
	}
	res, err := w.ApplyRetention()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted while the reader is at the start:", res.Deleted)

	tl.Close() // frees its slot
	res, err = w.ApplyRetention()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("deleted once it closed:", res.Deleted)
	// Output:
	// deleted while the reader is at the start: 0
	// deleted once it closed: 3
}

// The writing side as docs describe it: claim, fill in place, commit, with
// the Flusher (an agent) on a runner of its own.
func Example_flusher() {
	dir, err := os.MkdirTemp("", "journal-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	j, err := journal.Open(dir, journal.Options{Flush: journal.FlushPeriodic})
	if err != nil {
		log.Fatal(err)
	}
	f, err := runner.New(j.Flusher())
	if err != nil {
		log.Fatal(err)
	}
	f.Start()
	c, err := j.Claim(1, 100, 6)
	if err != nil {
		log.Fatal(err)
	}
	copy(c.Body(), "buy 10")
	if err := j.Commit(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	if err := j.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Println("committed and flushed")
	// Output: committed and flushed
}
