package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ipc"
)

// TestControlCharactersAreEscaped: labels and error texts come from files
// any process may write; a tab, a carriage return or a terminal escape
// sequence in them is printed escaped, so it neither breaks the table nor
// reaches the terminal.
func TestControlCharactersAreEscaped(t *testing.T) {
	dir := t.TempDir()
	cf, err := ipc.CreateCounters(dir, "ctl", 4, nil)
	require.NoError(t, err)
	defer cf.Close()
	_, err = cf.Manager().Allocate("evil\x1b[2J\tlabel", 1001, nil)
	require.NoError(t, err)
	ef, err := ipc.CreateErrorLog(dir, "errs", 4096)
	require.NoError(t, err)
	defer ef.Close()
	require.True(t, ef.Log().Record(errors.New("bad\tthing\r\x07 \xff")))

	out := runOK(t, (&fakeEnv{t: time.Now()}).env(), "-dir", dir, "-window", "0")
	t.Log("\n" + out)
	require.NotContains(t, out, "\x1b")
	require.NotContains(t, out, "\r")
	require.NotContains(t, out, "\x07")
	require.Contains(t, out, `evil\x1b[2J\x09label`)
	require.Contains(t, out, `bad\x09thing\x0d\x07 `)
	for line := range strings.SplitSeq(out, "\n") {
		require.NotContains(t, line, "\tlabel", "a raw tab would shift the columns")
	}
	require.Equal(t, "ok", printable("ok"))
	require.Equal(t, `a\xffb\u0085`, printable("a\xffb\u0085"))
}

// TestErrorsPerFileAreBounded: dutystat keeps the first maxErrors distinct
// errors of a log and counts the rest, so a log full of tiny records
// (another process's file) cannot make it hold millions of strings.
func TestErrorsPerFileAreBounded(t *testing.T) {
	dir := t.TempDir()
	ef, err := ipc.CreateErrorLog(dir, "many", 1<<20)
	require.NoError(t, err)
	defer ef.Close()
	const n = maxErrors + 37
	for i := range n {
		require.True(t, ef.Log().Record(fmt.Errorf("error %d", i)))
	}

	out := runOK(t, (&fakeEnv{t: time.Now()}).env(), "-dir", dir, "-window", "0")
	require.Contains(t, out, fmt.Sprintf("\nmany: %d distinct errors\n", n))
	require.Contains(t, out, "(and 37 more distinct errors not shown: dutystat keeps the first 1000 of a file)")
	require.Contains(t, out, fmt.Sprintf("error %d\n", maxErrors-1))
	require.NotContains(t, out, fmt.Sprintf("error %d\n", maxErrors))

	js := runOK(t, (&fakeEnv{t: time.Now()}).env(), "-dir", dir, "-window", "0", "-json")
	var fr struct {
		Files []struct {
			Errors         []json.RawMessage `json:"errors"`
			ErrorsNotShown int               `json:"errors_not_shown"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal([]byte(js), &fr))
	require.Len(t, fr.Files, 1)
	require.Len(t, fr.Files[0].Errors, maxErrors)
	require.Equal(t, 37, fr.Files[0].ErrorsNotShown)
}
