package errlog

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/runner"
)

func TestHandlerFallsBackWhenFull(t *testing.T) {
	buf := newBuf(512)
	l := mustLog(t, buf)
	var overflow []error
	h := Handler(l, func(err error) { overflow = append(overflow, err) })
	for i := range 3 {
		h(fmt.Errorf("e%d", i))
	}
	h(nil)
	obs := readAll(t, buf)
	require.Len(t, obs, 1, "one record fits in 512 bytes")
	require.Len(t, overflow, 2)
	require.EqualError(t, overflow[0], "e1")
	require.NotContains(t, obs[0].Text, "errlog.Handler", "the handler's own frame is not part of the site")
}

func TestHandlerLogsToSlogWithoutNext(t *testing.T) {
	var out bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&out, nil)))
	defer slog.SetDefault(prev)

	h := Handler(mustLog(t, newBuf(16)), nil)
	h(errors.New("lost"))
	require.Contains(t, out.String(), "level=ERROR")
	require.Contains(t, out.String(), fullMessage)
	require.Contains(t, out.String(), "err=lost")
}

// panicky panics in DoWork until it has done so n times, then stops.
type panicky struct{ n, done int }

func (a *panicky) RoleName() string { return "panicky" }
func (a *panicky) OnStart() error   { return nil }
func (a *panicky) OnClose() error   { return nil }
func (a *panicky) DoWork() (int, error) {
	if a.done == a.n {
		return 0, agent.ErrDone
	}
	a.done++
	var target *int
	if a.done > a.n {
		target = new(int)
	}
	poke(target, a.done) // the same panic, with another argument, each time
	return 1, nil
}

//go:noinline
func poke(p *int, v int) { *p = v }

// A runner's panics, each a *runner.PanicError with its own stack dump,
// are one observation: the dump is normalised.
func TestHandlerWithRunnerPanics(t *testing.T) {
	buf := newBuf(1 << 16)
	l := mustLog(t, buf)
	a := &panicky{n: 5}
	r, err := runner.New(a, runner.WithIdle(idle.NoOp()), runner.WithStopOnPanic(false),
		runner.WithErrorHandler(Handler(l, func(err error) { t.Errorf("overflow: %v", err) })))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	select {
	case <-r.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("agent did not stop")
	}
	require.NoError(t, r.Close())
	obs := readAll(t, buf)
	require.Len(t, obs, 1)
	require.Equal(t, int64(5), obs[0].Count)
	text := obs[0].Text
	require.True(t, strings.HasPrefix(text, "*runner.PanicError: runner: agent panicky panicked: runtime error: invalid memory address or nil pointer dereference\n"), text)
	require.Contains(t, text, "\tat github.com/dutyrt/duty/errlog.(*panicky).DoWork(")
	require.Contains(t, text, "\nrecorded at:\n")
	require.Contains(t, text, "\tat github.com/dutyrt/duty/errlog.poke(")
	require.Contains(t, text, "\ncaused by: runtime.errorString: runtime error: invalid memory address or nil pointer dereference\n")
	require.NotContains(t, text, "goroutine ")
}

// TestHandlerWithoutLogForwards: a nil log (a read-only file's) records
// nothing and forwards every error instead of panicking.
func TestHandlerWithoutLogForwards(t *testing.T) {
	var got []error
	h := Handler(nil, func(err error) { got = append(got, err) })
	require.NotPanics(t, func() { h(errors.New("a")); h(nil); h(errors.New("b")) })
	require.Len(t, got, 2)
	require.EqualError(t, got[1], "b")
}
