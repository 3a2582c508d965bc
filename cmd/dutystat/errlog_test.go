package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/errlog"
	"github.com/dutyrt/duty/ipc"
)

// TestErrorLogs: an error log file's distinct errors are listed with their
// counts and times (text: first line; JSON: the whole text), and an error
// log with a corrupt record shows the records before it and the error.
func TestErrorLogs(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 30, 8, 43, 35, 123e6, time.UTC)
	nowFn := func() time.Time { return at }
	ef, err := ipc.CreateErrorLog(dir, "errors", 1<<16, ipc.WithClock(clock.Func(nowFn)))
	require.NoError(t, err)
	defer ef.Close()
	require.NoError(t, ef.File.Heartbeat(time.Now().UnixMilli()))
	for i := range 1001 {
		if i == 1000 {
			at = at.Add(1500 * time.Millisecond)
		}
		err := fmt.Errorf("send order: %w", errors.New("connection reset"))
		if i%500 == 0 {
			err = errors.New("risk limit reached")
		}
		require.True(t, ef.Log().Record(err))
	}

	bad, err := ipc.CreateErrorLog(dir, "damaged", 4096)
	require.NoError(t, err)
	defer bad.Close()
	require.True(t, bad.Log().Record(errors.New("before the damage")))
	sec, err := bad.File.Section(0)
	require.NoError(t, err)
	binary.LittleEndian.PutUint32(sec[(binary.LittleEndian.Uint32(sec)+7)&^7:], 5)

	empty, err := ipc.CreateErrorLog(dir, "quiet", 4096)
	require.NoError(t, err)
	defer empty.Close()

	fe := &fakeEnv{t: time.Now()}
	out := runOK(t, fe.env(), "-dir", dir, "-window", "0")
	t.Log("\n" + out)
	require.Regexp(t, `(?m)^errors\s+errorlog\s+69632\s+\d+\s+alive\s+-?\d+ms ago\s+ok$`, out)
	require.Regexp(t, `(?m)^damaged\s+errorlog\s+.*errlog: corrupt record: record at \d+: length 5 below the header's 24$`, out)
	require.Contains(t, out, "\nerrors: 2 distinct errors\n")
	require.Regexp(t, `(?m)^\s+COUNT\s+FIRST\s+LAST\s+ERROR$`, out)
	require.Regexp(t, `(?m)^\s+998\s+2026-11-30T08:43:35\.123Z\s+2026-11-30T08:43:35\.123Z\s+\*fmt\.wrapError: send order: connection reset$`, out)
	require.Regexp(t, `(?m)^\s+3\s+2026-11-30T08:43:35\.123Z\s+2026-11-30T08:43:36\.623Z\s+\*errors\.errorString: risk limit reached$`, out)
	require.Contains(t, out, "\ndamaged: 1 distinct errors\n")
	require.Regexp(t, `(?m)^\s+1\s+\S+\s+\S+\s+\*errors\.errorString: before the damage$`, out)
	require.Contains(t, out, "\nquiet: 0 distinct errors\n")
	require.NotContains(t, out, "\tat ", "text output shows first lines only")

	line := runOK(t, fe.env(), "-dir", dir, "-window", "0", "-json")
	var f frame
	require.NoError(t, json.Unmarshal([]byte(line), &f))
	byName := map[string]fileSample{}
	for _, s := range f.Files {
		byName[s.Name] = s
	}
	errs := byName["errors"].Errors
	require.Len(t, errs, 2)
	require.Equal(t, int32(ipc.KindErrorLog), byName["errors"].KindID)
	require.Equal(t, "errorlog", byName["errors"].Kind)
	require.Equal(t, int64(3), errs[0].Count)
	require.True(t, errs[0].First.Equal(at.Add(-1500*time.Millisecond)))
	require.True(t, errs[0].Last.Equal(at))
	require.True(t, strings.HasPrefix(errs[0].Text, "*errors.errorString: risk limit reached\n\tat "), errs[0].Text)
	require.Equal(t, int64(998), errs[1].Count)
	require.True(t, strings.HasPrefix(errs[1].Text, "*fmt.wrapError: send order: connection reset\n\tat "), errs[1].Text)
	require.Contains(t, errs[1].Text, "\ncaused by: *errors.errorString: connection reset\n")
	require.Len(t, byName["damaged"].Errors, 1)
	require.Contains(t, byName["damaged"].Error, errlog.ErrCorrupt.Error())
	require.Empty(t, byName["quiet"].Errors)
}

// An error log record whose times are outside JSON's years 0-9999 (a
// corrupt or foreign writer) does not stop the JSON output: exit 0, the
// other files listed, the record's times null. The text output prints the
// times as they are.
func TestErrorLogTimesOutOfJSONRange(t *testing.T) {
	dir := t.TempDir()
	ef, err := ipc.CreateErrorLog(dir, "errors", 4096)
	require.NoError(t, err)
	defer ef.Close()
	require.True(t, ef.Log().Record(errors.New("far future")))
	require.True(t, ef.Log().Record(errors.New("far past")))
	sec, err := ef.File.Section(0)
	require.NoError(t, err)
	second := int((binary.LittleEndian.Uint32(sec) + 7) &^ 7)
	binary.LittleEndian.PutUint64(sec[errlogLastObservationTimestampOffset:], math.MaxInt64)
	binary.LittleEndian.PutUint64(sec[second+errlogFirstObservationTimestampOffset:], 1<<63) // math.MinInt64
	quiet, err := ipc.CreateErrorLog(dir, "quiet", 4096)
	require.NoError(t, err)
	defer quiet.Close()

	fe := &fakeEnv{t: time.Now()}
	line := runOK(t, fe.env(), "-dir", dir, "-window", "0", "-json")
	var f frame
	require.NoError(t, json.Unmarshal([]byte(line), &f))
	require.Len(t, f.Files, 2)
	errs := f.Files[0].Errors
	require.Len(t, errs, 2)
	require.Contains(t, line, `"last":null`)
	require.Contains(t, line, `"first":null`)
	require.True(t, strings.HasPrefix(errs[0].Text, "*errors.errorString: far future\n"))
	require.False(t, errs[0].First.IsZero())
	require.False(t, errs[1].Last.IsZero())

	out := runOK(t, fe.env(), "-dir", dir, "-window", "0")
	require.Contains(t, out, "far future")
	require.Contains(t, out, "far past")
}

// TestErrorLogsSince: -since keeps the errors last observed within it
// before the sample, in text and JSON, and says so.
func TestErrorLogsSince(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	ef, err := ipc.CreateErrorLog(dir, "errors", 1<<16, ipc.WithClock(clock.Func(func() time.Time { return at })))
	require.NoError(t, err)
	defer ef.Close()
	require.True(t, ef.Log().Record(errors.New("old trouble")))
	at = at.Add(10 * time.Minute)
	require.True(t, ef.Log().Record(errors.New("new trouble")))

	fe := &fakeEnv{t: at.Add(time.Minute)}
	out := runOK(t, fe.env(), "-dir", dir, "-window", "0", "-since", "5m")
	t.Log("\n" + out)
	require.Contains(t, out, "\nerrors: 1 distinct errors last observed since 2026-11-30T08:06:00.000Z\n")
	require.Contains(t, out, "new trouble")
	require.NotContains(t, out, "old trouble")

	out = runOK(t, fe.env(), "-dir", dir, "-window", "0", "-since", "20m")
	require.Contains(t, out, "\nerrors: 2 distinct errors last observed since 2026-11-30T07:51:00.000Z\n")
	require.Contains(t, out, "old trouble")

	out = runOK(t, fe.env(), "-dir", dir, "-window", "0") // 0: all, no filter stated
	require.Contains(t, out, "\nerrors: 2 distinct errors\n")

	line := runOK(t, fe.env(), "-dir", dir, "-window", "0", "-json", "-since", "5m")
	var f frame
	require.NoError(t, json.Unmarshal([]byte(line), &f))
	require.NotNil(t, f.ErrorsSince)
	require.True(t, f.ErrorsSince.Equal(at.Add(-4*time.Minute)), f.ErrorsSince)
	require.Len(t, f.Files, 1)
	require.Len(t, f.Files[0].Errors, 1)
	require.True(t, strings.HasPrefix(f.Files[0].Errors[0].Text, "*errors.errorString: new trouble"), f.Files[0].Errors[0].Text)

	line = runOK(t, fe.env(), "-dir", dir, "-window", "0", "-json")
	require.NotContains(t, line, "errors_since")
}

// The error log record's timestamps, from docs/layouts.md (the errlog
// package keeps its offsets unexported).
const (
	errlogLastObservationTimestampOffset  = 8
	errlogFirstObservationTimestampOffset = 16
)
