package errlog

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

func TestNewRejectsMisalignedBuffer(t *testing.T) {
	buf := newBuf(256)
	for off := 1; off < 8; off++ {
		_, err := New(buf[off:])
		require.ErrorIs(t, err, errMisaligned, "offset %d", off)
		require.ErrorIs(t, err, atomicbuf.ErrMisaligned)
		_, err = Read(buf[off:], 0, func(Observation) { t.Fatal("delivered") })
		require.ErrorIs(t, err, errMisaligned)
		require.False(t, HasErrors(buf[off:]))
	}
	for _, b := range [][]byte{nil, {}, buf[8:]} {
		l, err := New(b)
		require.NoError(t, err)
		require.Equal(t, len(b), l.buf.Len())
	}
}

// New never writes: over a buffer holding a previous writer's records and,
// after them, the remains of a record whose writer died before publishing
// it, it changes no byte. The Log then appends after the old records, and
// its first record is followed by a zero length word although the bytes
// there were not zero.
func TestNewDoesNotWriteAndAppendsAfterExistingRecords(t *testing.T) {
	buf := newBuf(4096)
	clock := newClock(10)
	old := mustLog(t, buf, WithClock(clock))
	recordAll(old, clock, step{10, errors.New("old one"), nil}, step{11, errors.New("old two"), nil}, step{12, errors.New("old one"), nil})
	end := old.next
	for i := end; i < len(buf); i++ {
		buf[i] = 0x55 // a dead writer's unpublished text, not a length of 0
	}
	put32(buf, end, 0) // but its length was never stored
	before := bytes.Clone(buf)

	l := mustLog(t, buf, WithClock(clock))
	require.Equal(t, before, buf, "New wrote to the buffer")
	require.Equal(t, end, l.next)

	require.Equal(t, []bool{true}, recordAll(l, clock, step{20, errors.New("old one"), nil}))
	obs := readAll(t, buf)
	require.Len(t, obs, 3, "the old records are kept; the new observation is a new record")
	require.Equal(t, int64(2), obs[0].Count)
	require.Equal(t, int64(1), obs[2].Count)
	require.True(t, strings.HasPrefix(obs[2].Text, "*errors.errorString: old one\n"))
	require.Zero(t, le32(buf, l.next), "the record is followed by the end of the log")
}

func TestNewRejectsCorruptBuffer(t *testing.T) {
	buf := newBuf(256)
	put32(buf, 0, 5)
	_, err := New(buf)
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestNilRecordsNothing(t *testing.T) {
	buf := newBuf(256)
	l := mustLog(t, buf)
	require.True(t, l.Record(nil))
	require.True(t, bytes.Equal(buf, make([]byte, 256)))
	require.False(t, HasErrors(buf))
}

// Equal errors recorded from the same call site are one observation; its
// count, first and last times follow the calls.
func TestDedupeCountsAndTimestamps(t *testing.T) {
	buf := newBuf(4096)
	clock := newClock(0)
	l := mustLog(t, buf, WithClock(clock))
	var steps []step
	for i := range 10 {
		steps = append(steps, step{at: 1000 + int64(i)*10, err: fmt.Errorf("op: %w", errors.New("boom"))})
	}
	steps = append(steps, step{at: 500, err: fmt.Errorf("op: %w", errors.New("boom"))}) // a clock that went back
	for _, ok := range recordAll(l, clock, steps...) {
		require.True(t, ok)
	}
	obs := readAll(t, buf)
	require.Len(t, obs, 1)
	require.Equal(t, int64(11), obs[0].Count)
	require.Equal(t, int64(1000), obs[0].First.UnixMilli())
	require.Equal(t, int64(1090), obs[0].Last.UnixMilli(), "the last time never moves back")
}

// The same error recorded from two places is two observations.
func TestDistinctCallSites(t *testing.T) {
	buf := newBuf(4096)
	l := mustLog(t, buf)
	err := errors.New("boom")
	require.True(t, l.Record(err))
	require.True(t, l.Record(err))
	for range 3 {
		require.True(t, l.Record(err))
	}
	obs := readAll(t, buf)
	require.Len(t, obs, 3)
	require.Equal(t, []int64{1, 1, 3}, []int64{obs[0].Count, obs[1].Count, obs[2].Count})
	for _, o := range obs {
		require.Contains(t, o.Text, "\tat github.com/dutyrt/duty/errlog.TestDistinctCallSites(")
	}
	require.NotEqual(t, obs[0].Text, obs[1].Text, "the texts show different lines")
}

type constErr struct{ cause error }

func (e *constErr) Error() string { return "request failed" }
func (e *constErr) Unwrap() error { return e.cause }

type otherErr struct{ msg string }

func (e otherErr) Error() string { return e.msg }

// Errors that print the same but differ in type, in what they wrap, or in
// the message of a cause are distinct observations; equal trees are one.
func TestDistinctChains(t *testing.T) {
	buf := newBuf(1 << 16)
	clock := newClock(1)
	l := mustLog(t, buf, WithClock(clock))
	inner := errors.New("disk full")
	errs := []error{
		fmt.Errorf("write: %w", inner),                   // 0
		fmt.Errorf("write: %v", inner),                   // 1: same text, wraps nothing
		otherErr{"write: disk full"},                     // 2: same text, another type
		&constErr{errors.New("timeout")},                 // 3
		&constErr{errors.New("refused")},                 // 4: same text, another cause
		&constErr{otherErr{"timeout"}},                   // 5: same text, cause of another type
		errors.Join(errors.New("a"), errors.New("b")),    // 6
		errors.Join(errors.New("a\nb")),                  // 7: same text, another tree
		fmt.Errorf("write: %w", errors.New("disk full")), // = 0
		&constErr{errors.New("timeout")},                 // = 3
		errors.Join(errors.New("a"), errors.New("b")),    // = 6
	}
	var steps []step
	for _, e := range errs {
		steps = append(steps, step{1, e, nil})
	}
	recordAll(l, clock, steps...)
	obs := readAll(t, buf)
	require.Len(t, obs, 8)
	var counts []int64
	for _, o := range obs {
		counts = append(counts, o.Count)
	}
	require.Equal(t, []int64{2, 1, 1, 2, 1, 1, 2, 1}, counts)
	require.True(t, strings.HasPrefix(obs[0].Text, "*fmt.wrapError: write: disk full\n"))
	require.Contains(t, obs[0].Text, "\ncaused by: *errors.errorString: disk full\n")
	require.True(t, strings.HasPrefix(obs[1].Text, "*errors.errorString: write: disk full\n"))
	require.True(t, strings.HasPrefix(obs[2].Text, "errlog.otherErr: write: disk full\n"))
	require.Contains(t, obs[4].Text, "\ncaused by: *errors.errorString: refused\n")
	require.Contains(t, obs[6].Text, "\ncaused by: *errors.errorString: a\ncaused by: *errors.errorString: b\n")
}

// A tree that branches (errors.Join inside a wrap) is shown indented, and
// depth is part of the identity.
func TestTreeText(t *testing.T) {
	buf := newBuf(1 << 14)
	l := mustLog(t, buf)
	require.True(t, l.Record(fmt.Errorf("all: %w", errors.Join(fmt.Errorf("x: %w", fs.ErrNotExist), errors.New("y")))))
	obs := readAll(t, buf)
	require.Len(t, obs, 1)
	require.Contains(t, obs[0].Text, "\ncaused by: *errors.joinError: x: file does not exist\ny\n"+
		"  caused by: *fmt.wrapError: x: file does not exist\n"+
		"    caused by: *errors.errorString: file does not exist\n"+
		"  caused by: *errors.errorString: y\n")
}

// loop is an error that wraps itself: the walk stops at maxNodes.
type loop struct{}

func (l *loop) Error() string { return "loop" }
func (l *loop) Unwrap() error { return l }

type nilPtrErr struct{ msg string }

func (e *nilPtrErr) Error() string { return e.msg }

type panicUnwrap struct{}

func (panicUnwrap) Error() string { return "bad unwrap" }
func (panicUnwrap) Unwrap() error { panic("unwrap") }

func TestHostileErrors(t *testing.T) {
	buf := newBuf(1 << 16)
	l := mustLog(t, buf)
	var typedNil *nilPtrErr
	for range 2 {
		require.True(t, l.Record(&loop{}))
		require.True(t, l.Record(typedNil))
		require.True(t, l.Record(panicUnwrap{}))
	}
	obs := readAll(t, buf)
	require.Len(t, obs, 3)
	for _, o := range obs {
		require.Equal(t, int64(2), o.Count, o.Text)
	}
	require.Equal(t, maxNodes, strings.Count(obs[0].Text, "*errlog.loop: loop\n"))
	require.True(t, strings.HasSuffix(obs[0].Text, "caused by: ... (more errors not shown)\n"), obs[0].Text)
	require.True(t, strings.HasPrefix(obs[1].Text, "*errlog.nilPtrErr: %!v(PANIC=Error method: runtime error: invalid memory address"), obs[1].Text)
	require.True(t, strings.HasPrefix(obs[2].Text, "errlog.panicUnwrap: bad unwrap\n"))
	require.True(t, strings.HasSuffix(obs[2].Text, "caused by: ... (more errors not shown)\n"))
}

// panicked mimics runner.PanicError: its message embeds debug.Stack().
type panicked struct {
	value any
	stack []byte
}

func (e *panicked) Error() string { return fmt.Sprintf("agent x panicked: %v\n%s", e.value, e.stack) }

// stacked carries its stack behind a method (Stacker) and not in its text.
type stacked struct {
	msg   string
	stack []byte
}

func (e *stacked) Error() string { return e.msg }
func (e *stacked) Stack() []byte { return e.stack }

//go:noinline
func panicSiteA(v any) (stack []byte) {
	defer func() { recover(); stack = debug.Stack() }()
	panic(v)
}

//go:noinline
func panicSiteB(v any) (stack []byte) {
	defer func() { recover(); stack = debug.Stack() }()
	panic(v)
}

// A carried stack is normalised: the same panic site on other goroutines
// (other goroutine numbers, argument values) is one observation; another
// site is another.
func TestCarriedStacks(t *testing.T) {
	buf := newBuf(1 << 16)
	l := mustLog(t, buf)
	var errs []error
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			a, b := panicSiteA(i), panicSiteB(i)
			mu.Lock()
			defer mu.Unlock()
			errs = append(errs, &panicked{"boom", a}, &panicked{"boom", b}, &stacked{"s", a})
		})
	}
	wg.Wait()
	require.False(t, bytes.Equal(errs[0].(*panicked).stack, errs[3].(*panicked).stack), "raw stacks differ")
	for _, e := range errs {
		require.True(t, l.Record(e))
	}
	obs := readAll(t, buf)
	require.Len(t, obs, 3)
	for _, o := range obs {
		require.Equal(t, int64(4), o.Count, o.Text)
		require.NotContains(t, o.Text, "goroutine ")
		require.NotContains(t, o.Text, "+0x")
		require.Contains(t, o.Text, "\nrecorded at:\n\tat github.com/dutyrt/duty/errlog.TestCarriedStacks(")
	}
	require.True(t, strings.HasPrefix(obs[0].Text, "*errlog.panicked: agent x panicked: boom\n\tat runtime/debug.Stack("), obs[0].Text)
	require.Contains(t, obs[0].Text, "\tat github.com/dutyrt/duty/errlog.panicSiteA(")
	require.Contains(t, obs[1].Text, "\tat github.com/dutyrt/duty/errlog.panicSiteB(")
	require.True(t, strings.HasPrefix(obs[2].Text, "*errlog.stacked: s\n\tat runtime/debug.Stack("), obs[2].Text)
	require.Contains(t, obs[0].Text, "\tcreated by sync.(*WaitGroup).Go(")
}

func TestNormaliseStack(t *testing.T) {
	raw := "goroutine 7 [running]:\n" +
		"main.(*T).m(0xc000010000, {0x1, 0x2})\n\t/src/main.go:12 +0x1d\n" +
		"panic({0x4a1b20?, 0xc000012345?})\n\t/go/src/runtime/panic.go:792 +0x132\n" +
		"main.f(...)\n\t/src/main.go:30\n" +
		"...additional frames elided...\n" +
		"created by main.main in goroutine 1\n\t/src/main.go:40 +0x25\n"
	want := "\tat main.(*T).m(/src/main.go:12)\n" +
		"\tat panic(/go/src/runtime/panic.go:792)\n" +
		"\tat main.f(/src/main.go:30)\n" +
		"\t...additional frames elided...\n" +
		"\tcreated by main.main(/src/main.go:40)\n"
	require.Equal(t, want, string(normaliseStack(nil, raw)))
	require.Equal(t, "\tat lonely()\n", string(normaliseStack(nil, "lonely()")))
	require.Equal(t, 0, dumpStart("goroutine 1 [running]:\n"))
	require.Equal(t, 4, dumpStart("msg\ngoroutine 12 [chan receive]:\n"))
	require.Equal(t, -1, dumpStart("the goroutine 1 [x]"))
	require.Equal(t, -1, dumpStart("goroutine leak"))
	require.Equal(t, -1, dumpStart("goroutine "))
}

// A full log refuses new records (false) and keeps everything recorded
// before: existing observations are still counted.
func TestFullLogKeepsWhatItHas(t *testing.T) {
	buf := newBuf(2048)
	clock := newClock(7)
	l := mustLog(t, buf, WithClock(clock))
	var steps []step
	for i := range 40 {
		steps = append(steps, step{int64(i), fmt.Errorf("error number %d", i), nil})
	}
	for i := range 40 {
		steps = append(steps, step{100 + int64(i), fmt.Errorf("error number %d", i), nil})
	}
	oks := recordAll(l, clock, steps...)
	fitted := 0
	for fitted < 40 && oks[fitted] {
		fitted++
	}
	require.Greater(t, fitted, 0)
	require.Less(t, fitted, 40, "the buffer is too small for 40")
	for i := range 40 {
		require.Equal(t, i < fitted, oks[i], "first round, error %d", i)
		require.Equal(t, i < fitted, oks[40+i], "second round, error %d", i)
	}
	obs := readAll(t, buf)
	require.Len(t, obs, fitted)
	for i, o := range obs {
		require.True(t, strings.HasPrefix(o.Text, fmt.Sprintf("*errors.errorString: error number %d\n", i)))
		require.Equal(t, int64(2), o.Count)
		require.Equal(t, int64(i), o.First.UnixMilli())
		require.Equal(t, int64(100+i), o.Last.UnixMilli())
	}
	require.LessOrEqual(t, l.next, len(buf))
	require.Greater(t, l.next+headerLength+len(obs[0].Text), len(buf), "the next record did not fit")
}

// Exact fits, off by one, and sizes that would overflow a naive check.
func TestRecordSizesAtTheEdges(t *testing.T) {
	err := errors.New("edge")
	// The first case measures the encoded text of err recorded from this
	// loop (the call stack is part of the text).
	var text string
	var need int
	for i, c := range []struct {
		capacity func() int
		ok       bool
	}{
		{func() int { return 1 << 12 }, true},
		{func() int { return 0 }, false},
		{func() int { return 4 }, false},
		{func() int { return headerLength }, false},
		{func() int { return need - 1 }, false},
		{func() int { return need }, true},
		{func() int { return need + 1 }, true},
		{func() int { return alignRecord(need) + headerLength }, true},
	} {
		capacity := c.capacity()
		buf := newBuf(capacity)
		l := mustLog(t, buf)
		var oks []bool
		for j, e := range []error{err, err, errors.New("another")} {
			oks = append(oks, recordEdge(l, e))
			if j == 0 {
				require.Equal(t, c.ok, HasErrors(buf))
			}
		}
		if i == 0 {
			text = readAll(t, buf)[0].Text
			need = headerLength + len(text)
		}
		require.Equal(t, []bool{c.ok, c.ok, i == 0}, oks, "capacity %d, need %d", capacity, need)
		if c.ok {
			obs := readAll(t, buf)
			require.Equal(t, text, obs[0].Text)
			require.Equal(t, int64(2), obs[0].Count)
		}
	}

	// A log whose next offset is near the end, and texts near the limits.
	buf := newBuf(64)
	l := mustLog(t, buf)
	l.next = 64 - 8
	require.False(t, recordEdge(l, err))
	l.next = 64
	require.False(t, recordEdge(l, err))
	l.next = 0
	require.False(t, recordEdge(l, errors.New(strings.Repeat("x", 1<<20))))
	require.False(t, HasErrors(buf))
}

func recordEdge(l *Log, err error) bool { return l.Record(err) }

// The count stops at MaxInt32 instead of wrapping negative.
func TestCountSaturates(t *testing.T) {
	buf := newBuf(4096)
	l := mustLog(t, buf)
	for i := range 3 {
		require.True(t, l.Record(errors.New("many")))
		if i == 0 {
			put32(buf, observationCountOffset, math.MaxInt32-1)
		}
	}
	require.Equal(t, int64(math.MaxInt32), readAll(t, buf)[0].Count)
}

// A carried stack that normalises to nothing (a Stacker returning blank
// lines, a message ending in a bare "goroutine N [...]:" line) is still the
// same observation each time: the same error from one place is one record
// with a count, not a new record per call that fills the log.
func TestEmptyCarriedStackIsOneObservation(t *testing.T) {
	buf := newBuf(1 << 16)
	l := mustLog(t, buf)
	blank := &stacked{"s", []byte("\n \n")}
	bare := errors.New("boom\ngoroutine 5 [running]:")
	for range 3 {
		require.True(t, l.Record(blank))
		require.True(t, l.Record(bare))
	}
	obs := readAll(t, buf)
	require.Len(t, obs, 2)
	for _, o := range obs {
		require.Equal(t, int64(3), o.Count, o.Text)
	}
}

// stackPanics is a Stacker whose Stack method panics.
type stackPanics struct{ msg string }

func (e *stackPanics) Error() string { return e.msg }
func (e *stackPanics) Stack() []byte { panic("no stack") }

// A panicking Stack method does not lose the message: two such errors with
// different messages are two observations, each text has its message, and
// the errors around it are walked as usual.
func TestPanickingStackKeepsTheMessage(t *testing.T) {
	buf := newBuf(1 << 16)
	l := mustLog(t, buf)
	for range 2 {
		for _, e := range []error{&stackPanics{"disk a failed"}, &stackPanics{"disk b failed"}} {
			require.True(t, l.Record(e))
		}
	}
	require.True(t, l.Record(fmt.Errorf("outer: %w", &stackPanics{"disk c failed"})))
	obs := readAll(t, buf)
	require.Len(t, obs, 3)
	for i, m := range []string{"disk a failed", "disk b failed"} {
		require.Equal(t, int64(2), obs[i].Count)
		require.True(t, strings.HasPrefix(obs[i].Text, "*errlog.stackPanics: "+m+"\n\tat "), obs[i].Text)
	}
	require.True(t, strings.HasSuffix(obs[2].Text, "\ncaused by: *errlog.stackPanics: disk c failed\n"), obs[2].Text)
}

// The encoded text is valid UTF-8 (as the layout, and a Java reader that
// decodes it, assume) whatever bytes an error's message holds: invalid
// sequences become U+FFFD. The identity still uses the raw message.
func TestEncodedTextIsValidUTF8(t *testing.T) {
	buf := newBuf(1 << 16)
	l := mustLog(t, buf)
	for range 2 {
		require.True(t, l.Record(fmt.Errorf("open %s: %w", "caf\xe9.toml", errors.New("bad \xff\xfe bytes"))))
	}
	require.True(t, l.Record(errors.New("bad \xfe\xff bytes")))
	obs := readAll(t, buf)
	require.Len(t, obs, 2)
	require.Equal(t, int64(2), obs[0].Count)
	for _, o := range obs {
		require.True(t, utf8.ValidString(o.Text), "%q", o.Text)
	}
	require.True(t, strings.HasPrefix(obs[0].Text, "*fmt.wrapError: open caf\uFFFD.toml: bad \uFFFD bytes\n"), obs[0].Text)
}
