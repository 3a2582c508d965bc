package ipc

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/errlog"
)

// errlogOwnerRole is the child role of the cross-process error log test,
// dispatched by this init function (before TestMain), as
// countersOwnerRole is.
const errlogOwnerRole = "errlog-owner"

func init() {
	if os.Getenv(childEnv) != errlogOwnerRole {
		return
	}
	if err := childErrlogOwner(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "child", errlogOwnerRole, "failed:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// childErrlogOwner creates the error log file DUTY_IPC_DIR/DUTY_IPC_NAME
// and obeys commands one line at a time:
//
//	record <n> <message...>  -> records errors.New(message) n times from one site; "recorded <ok>"
//	crash                    -> exits with status 3 without closing anything
func childErrlogOwner(in io.Reader, out io.Writer) error {
	ef, err := CreateErrorLog(os.Getenv("DUTY_IPC_DIR"), os.Getenv("DUTY_IPC_NAME"), 1<<16)
	if err != nil {
		return err
	}
	defer ef.Close()
	if err := ef.File.Heartbeat(time.Now().UnixMilli()); err != nil {
		return err
	}
	fmt.Fprintln(out, "ready", ef.File.Path())
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[0] == "record":
			var n int
			fmt.Sscan(f[1], &n)
			ok := true
			for range n {
				ok = ef.Log().Record(errors.New(strings.Join(f[2:], " "))) && ok
			}
			fmt.Fprintln(out, "recorded", ok)
		case len(f) == 1 && f[0] == "crash":
			os.Exit(3)
		default:
			return fmt.Errorf("unknown command %q", sc.Text())
		}
	}
	return sc.Err()
}

// errlogCounts reads every observation of a file as first line -> count.
func errlogCounts(t *testing.T, ef *ErrorLogFile) map[string]int64 {
	t.Helper()
	counts := map[string]int64{}
	_, err := ef.Read(0, func(o errlog.Observation) {
		line, _, _ := strings.Cut(o.Text, "\n")
		counts[line] = o.Count
	})
	require.NoError(t, err)
	return counts
}

// TestCrossProcessErrorLog: a child records errors; this process reads
// them through a read-only mapping while the child runs, and again after
// the child died without closing the file (the post-mortem use).
func TestCrossProcessErrorLog(t *testing.T) {
	dir := testDir(t)
	p := startChild(t, "", errlogOwnerRole, "DUTY_IPC_DIR="+dir, "DUTY_IPC_NAME=errors").Start(t)
	ready := p.Line(t)
	require.True(t, strings.HasPrefix(ready, "ready "), ready)
	path := filepath.Join(dir, "errors")

	require.Equal(t, "recorded true", ask(t, p, "record 1000 connection reset"))
	require.Equal(t, "recorded true", ask(t, p, "record 3 risk limit"))
	view, err := OpenErrorLog(ctxT(t), path)
	require.NoError(t, err)
	defer view.Close()
	require.True(t, view.isReadOnly())
	require.Nil(t, view.Log())
	require.Equal(t, map[string]int64{
		"*errors.errorString: connection reset": 1000,
		"*errors.errorString: risk limit":       3,
	}, errlogCounts(t, view))

	require.Equal(t, "recorded true", ask(t, p, "record 5 connection reset"))
	require.Equal(t, int64(1005), errlogCounts(t, view)["*errors.errorString: connection reset"], "read live")

	_, err = fmt.Fprintln(p.Stdin, "crash")
	require.NoError(t, err)
	require.Error(t, p.Cmd.Wait())
	require.Equal(t, 3, p.Cmd.ProcessState.ExitCode())

	after, err := OpenErrorLog(ctxT(t), path)
	require.NoError(t, err)
	defer after.Close()
	require.Equal(t, map[string]int64{
		"*errors.errorString: connection reset": 1005,
		"*errors.errorString: risk limit":       3,
	}, errlogCounts(t, after), "the log outlives its owner")
}

// TestErrorLogFileLayout: the section is the log, at headerLength, with the
// records at Agrona's offsets, timestamped by the file's clock.
func TestErrorLogFileLayout(t *testing.T) {
	dir := testDir(t)
	at := time.UnixMilli(1_700_000_000_123)
	ef, err := CreateErrorLog(dir, "errors", 10_000, WithClock(clock.Func(func() time.Time { return at })))
	require.NoError(t, err)
	defer ef.Close()
	require.False(t, ef.isReadOnly())
	require.True(t, ef.File.IsOwner())
	require.Equal(t, KindErrorLog, ef.File.Kind())
	require.Equal(t, int64(headerLength+3*sectionAlignment), ef.File.Len())
	for range 2 {
		require.True(t, ef.Log().Record(errors.New("boom")))
	}

	raw, err := os.ReadFile(ef.File.Path())
	require.NoError(t, err)
	le := binary.LittleEndian
	require.Equal(t, uint32(4), le.Uint32(raw[kindOffset:]))
	rec := raw[headerLength:]
	length := int(le.Uint32(rec[errlogLengthOffset:]))
	require.Equal(t, uint32(2), le.Uint32(rec[errlogObservationCountOffset:]))
	require.Equal(t, uint64(1_700_000_000_123), le.Uint64(rec[errlogFirstObservationTimestampOffset:]))
	require.Equal(t, uint64(1_700_000_000_123), le.Uint64(rec[errlogLastObservationTimestampOffset:]))
	require.True(t, strings.HasPrefix(string(rec[errlogEncodedErrorOffset:length]), "*errors.errorString: boom\n\tat "))
	require.True(t, errlog.HasErrors(rec[:10_000]))
}

// TestErrorLogFileBadArguments covers CreateErrorLog's argument checks and
// OpenErrorLog on files that are not error log files or hold corrupt
// records.
func TestErrorLogFileBadArguments(t *testing.T) {
	dir := testDir(t)
	for _, n := range []int{-1, 0, minErrorLogLength - 1, math.MaxInt32 + 1} {
		_, err := CreateErrorLog(dir, "bad", n)
		require.ErrorIs(t, err, ErrArgument, n)
	}
	_, err := CreateErrorLog(dir, "a/b", 4096)
	require.ErrorIs(t, err, errName)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing left behind")

	ef, err := CreateErrorLog(dir, "dup", minErrorLogLength)
	require.NoError(t, err)
	defer ef.Close()
	_, err = CreateErrorLog(dir, "dup", 4096)
	require.ErrorIs(t, err, errExists)
	require.False(t, ef.Log().Record(errors.New("no room in 24 bytes")))

	cf, err := CreateCounters(dir, "counters", 4, nil)
	require.NoError(t, err)
	defer cf.Close()
	_, err = OpenErrorLog(ctxT(t), cf.File.Path())
	require.ErrorIs(t, err, ErrKind)
	_, err = OpenErrorLog(ctxT(t), filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)

	// Records damaged by the owner (or anyone with write access): the
	// reader reports them, after the good ones.
	bad, err := CreateErrorLog(dir, "damaged", 4096)
	require.NoError(t, err)
	defer bad.Close()
	require.True(t, bad.Log().Record(errors.New("fine")))
	sec, err := bad.File.Section(0)
	require.NoError(t, err)
	next := (int(binary.LittleEndian.Uint32(sec)) + 7) &^ 7
	binary.LittleEndian.PutUint32(sec[next:], 9)
	view, err := OpenErrorLog(ctxT(t), bad.File.Path())
	require.NoError(t, err)
	defer view.Close()
	n, err := view.Read(0, func(errlog.Observation) {})
	require.Equal(t, 1, n)
	require.ErrorIs(t, err, errlog.ErrCorrupt)

	require.NoError(t, view.Close())
	_, err = view.Read(0, func(errlog.Observation) {})
	require.ErrorIs(t, err, ErrClosed)
}

// ExampleCreateErrorLog: the owner records errors in an error log file;
// another process (here the same one) reads them through a read-only
// mapping.
func ExampleCreateErrorLog() {
	dir, _ := os.MkdirTemp("", "duty-example-")
	defer os.RemoveAll(dir)

	ef, err := CreateErrorLog(dir, "errors", 1<<20) // Aeron's default size
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ef.Close()
	handler := errlog.Handler(ef.Log(), nil) // runner.WithErrorHandler(handler)
	for range 3 {
		handler(errors.New("connection reset"))
	}
	_ = ef.File.Heartbeat(time.Now().UnixMilli()) // from the owner's duty cycle

	view, err := OpenErrorLog(context.Background(), ef.File.Path())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer view.Close()
	_, _ = view.Read(0, func(o errlog.Observation) {
		first, _, _ := strings.Cut(o.Text, "\n")
		fmt.Println(o.Count, first)
	})
	// Output:
	// 3 *errors.errorString: connection reset
}

// The error log record's layout, from docs/layouts.md (the errlog package
// keeps its offsets unexported).
const (
	errlogLengthOffset                    = 0
	errlogObservationCountOffset          = 4
	errlogLastObservationTimestampOffset  = 8
	errlogFirstObservationTimestampOffset = 16
	errlogEncodedErrorOffset              = 24
)
