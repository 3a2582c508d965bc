package journal

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/dutyrt/duty/internal/childtest"
)

// Crash tests re-execute the test binary: TestMain runs a child role
// instead of the tests when childEnv is set; the role's parameters come in
// further DUTY_JOURNAL_* variables, its results on stdout, one line each.
const childEnv = "DUTY_JOURNAL_CHILD"

// childRoles are the roles a child runs (TestMain: childtest.Run).
var childRoles = map[string]func() error{
	"writer":     childWriter,
	"tear":       childTear,
	"reader":     childReader,
	"opener":     childOpener,
	"registered": childRegistered,
	"rollkill":   childRollKill,
}

// childRollKill appends to stream 1 until its first roll, and there, with
// the next segment file in place and no end-of-segment marker yet, says
// "rolling START" and waits to be killed.
func childRollKill() error {
	j, err := childOpen()
	if err != nil {
		return err
	}
	testHookInRoll = func() {
		fmt.Printf("rolling %d\n", j.cur.Start+j.segSize)
		time.Sleep(time.Hour)
	}
	appendN(nil, j, 1, 1<<20)
	return errors.New("not killed")
}

func childOpen() (*Journal, error) {
	policy, _ := strconv.Atoi(os.Getenv("DUTY_JOURNAL_POLICY"))
	return Open(os.Getenv("DUTY_JOURNAL_DIR"), Options{SegmentSize: testSegment, Flush: FlushPolicy(policy), FlushBytes: 4096})
}

// childWriter appends to streams 1..3 in turn until killed, printing
// "c STREAM SEQ" after each Commit returned. Under FlushPeriodic a
// Flusher runs on a goroutine of its own.
func childWriter() error {
	j, err := childOpen()
	if err != nil {
		return err
	}
	if j.opts.Flush == FlushPeriodic {
		go func() {
			f := j.Flusher()
			for {
				if _, err := f.DoWork(); err != nil {
					return
				}
				time.Sleep(100 * time.Microsecond)
			}
		}()
	}
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		stream := uint32(1 + i%3)
		seq := j.nextSequence(stream)
		c, err := j.Claim(stream, 7, bodyLen(seq))
		if err != nil {
			return err
		}
		testBody(c.Body(), stream, seq)
		if err := j.Commit(); err != nil {
			return err
		}
		fmt.Fprintf(w, "c %d %d\n", stream, seq)
		if err := w.Flush(); err != nil {
			return err
		}
	}
}

// childTear claims a record, fills its body, says where, and waits to be
// killed before committing it.
func childTear() error {
	j, err := childOpen()
	if err != nil {
		return err
	}
	appendN(nil, j, 1, 3)
	c, err := j.Claim(1, 7, 200)
	if err != nil {
		return err
	}
	for i := range c.Body() {
		c.Body()[i] = 0xAA
	}
	fmt.Printf("claimed %d\n", c.Position)
	time.Sleep(time.Hour)
	return errors.New("not killed")
}

// childReader opens the journal read-only and prints each record it reads
// as "r STREAM SEQ", checking bodies, until it has read DUTY_JOURNAL_COUNT.
func childReader() error {
	j, err := Open(os.Getenv("DUTY_JOURNAL_DIR"), Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer j.Close()
	tl, err := j.NewTailer()
	if err != nil {
		return err
	}
	defer tl.Close()
	want, _ := strconv.Atoi(os.Getenv("DUTY_JOURNAL_COUNT"))
	if err := readChecked(tl, want, map[uint32]int64{}, false); err != nil {
		return err
	}
	fmt.Println("read", want)
	return nil
}

// readChecked reads want records with tl, following the tail for up to a
// minute, and checks each body and that each stream's sequences follow
// on from next (updated), from 0 for a stream not in next unless
// anyStart.
func readChecked(tl *Tailer, want int, next map[uint32]int64, anyStart bool) error {
	deadline := time.Now().Add(time.Minute)
	for n := 0; n < want; {
		r, ok, err := tl.Next()
		if err != nil {
			return err
		}
		if !ok {
			if time.Now().After(deadline) {
				return fmt.Errorf("read %d of %d", n, want)
			}
			time.Sleep(50 * time.Microsecond)
			continue
		}
		if e, seen := next[r.StreamID]; (seen || !anyStart) && r.Sequence != e {
			return fmt.Errorf("stream %d: sequence %d, want %d", r.StreamID, r.Sequence, e)
		}
		if err := checkBody(r.Body, r.StreamID, r.Sequence); err != nil {
			return err
		}
		next[r.StreamID] = r.Sequence + 1
		n++
	}
	return nil
}

// childOpener tries to open the journal as a writer and prints which
// sentinel the error matched.
func childOpener() error {
	j, err := childOpen()
	switch {
	case err == nil:
		fmt.Println("opened")
		return j.Close()
	case errors.Is(err, ErrLocked):
		fmt.Println("locked")
		return nil
	}
	return err
}

// proc is a child process of this test.
type proc = childtest.Proc

// startChild starts the test binary in role with env added
// (childtest.Start).
func startChild(t *testing.T, role string, env ...string) *proc {
	t.Helper()
	return childtest.Start(t, childEnv, role, env...)
}
