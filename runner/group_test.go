package runner

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	ipccounters "github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/internal/countertype"
)

// journal records the lifecycle events of a group's agents, in order.
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) add(e string) {
	j.mu.Lock()
	j.events = append(j.events, e)
	j.mu.Unlock()
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.events...)
}

func (j *journal) agent(role string) *fakeAgent {
	return &fakeAgent{
		role:  role,
		start: func() error { j.add("start " + role); return nil },
		close: func() error { j.add("close " + role); return nil },
	}
}

var quiet = WithErrorHandler(func(error) {})

func TestGroupStartsInOrderAndClosesInReverse(t *testing.T) {
	var j journal
	g, err := NewGroup([]Member{{Agent: j.agent("a")}, {Agent: j.agent("b")}, {Agent: j.agent("c")}})
	require.NoError(t, err)
	require.NoError(t, g.Start(context.Background()))
	require.ErrorIs(t, g.Start(context.Background()), ErrAlreadyStarted)
	require.Equal(t, []string{"a", "b", "c"}, []string{g.Runners()[0].RoleName(), g.Runners()[1].RoleName(), g.Runners()[2].RoleName()})
	require.NoError(t, g.Close(context.Background()))
	require.NoError(t, g.Close(context.Background()))
	<-g.Done()
	require.NoError(t, g.Err())
	require.Equal(t, []string{"start a", "start b", "start c", "close c", "close b", "close a"}, j.list())
}

func TestGroupRollsBackAFailedStart(t *testing.T) {
	var j journal
	bad := j.agent("b")
	errBoom := errors.New("boom")
	bad.start = func() error { j.add("start b"); return errBoom }
	g, err := NewGroup([]Member{{Agent: j.agent("a")}, {Agent: bad}, {Agent: j.agent("c")}})
	require.NoError(t, err)
	require.ErrorIs(t, g.Start(context.Background()), errBoom)
	<-g.Done()
	// b's failed Start closed b; c never started, but its OnClose ran.
	require.Equal(t, []string{"start a", "start b", "close b", "close c", "close a"}, j.list())
}

func TestGroupStartHonoursItsContext(t *testing.T) {
	var j journal
	release := make(chan struct{})
	slow := j.agent("slow")
	slow.start = func() error { j.add("start slow"); <-release; return nil }
	g, err := NewGroup([]Member{{Agent: j.agent("a")}, {Agent: slow}, {Agent: j.agent("c")}})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for len(j.list()) < 2 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	err = g.Start(ctx)
	require.ErrorIs(t, err, context.Canceled)
	require.ErrorContains(t, err, "agent slow did not start")
	close(release)
	<-slow.closedCh(t, &j, "close slow")
	require.Equal(t, []string{"start a", "start slow", "close c", "close a", "close slow"}, j.list())
}

// closedCh returns a channel closed once the journal holds event e.
func (a *fakeAgent) closedCh(t *testing.T, j *journal, e string) <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		defer close(ch)
		deadline := time.Now().Add(hangGuard)
		for time.Now().Before(deadline) {
			for _, ev := range j.list() {
				if ev == e {
					return
				}
			}
			time.Sleep(time.Millisecond)
		}
		t.Errorf("no %q within the hang guard", e)
	}()
	return ch
}

func TestGroupRestartsAndGivesUp(t *testing.T) {
	captureLog(t) // the restart lines
	var j journal
	made := 0
	g, err := NewGroup([]Member{
		{Agent: j.agent("steady")},
		{
			New: func() (agent.Agent, error) {
				made++
				a := j.agent("crash")
				a.work = func(int64) (int, error) { panic("crash") }
				return a, nil
			},
			Options: []Option{quiet},
			Restart: RestartPolicy{Max: 3, Window: time.Hour, MinBackoff: time.Microsecond, MaxBackoff: time.Millisecond},
		},
	})
	require.NoError(t, err)
	require.Equal(t, 1, made, "the first agent is made by NewGroup")
	require.NoError(t, g.Start(context.Background()))
	select {
	case <-g.Done():
	case <-time.After(hangGuard):
		t.Fatal("the group did not end")
	}
	err = g.Err()
	require.ErrorIs(t, err, ErrGaveUp)
	var me *memberError
	require.ErrorAs(t, err, &me)
	require.Equal(t, "crash", me.Role)
	require.Equal(t, 3, me.Restarts)
	var pe *PanicError
	require.ErrorAs(t, err, &pe, "the member's own error is reachable")
	require.Equal(t, 4, made)
	require.Equal(t, 3, g.Restarts("crash"))
	require.Contains(t, j.list(), "close steady", "the group closed the others")
	require.NoError(t, g.Close(context.Background()))
	require.Equal(t, me, g.Err(), "Close keeps why the group ended")
}

func TestGroupBackoffDoublesWithinTheWindow(t *testing.T) {
	m := &member{spec: Member{Restart: RestartPolicy{Max: 4, Window: time.Second, MinBackoff: time.Millisecond, MaxBackoff: 3 * time.Millisecond}}}
	now := time.Unix(100, 0)
	var delays []time.Duration
	for range 4 {
		d, ok := m.mayRestart(now)
		require.True(t, ok)
		delays = append(delays, d)
	}
	require.Equal(t, []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond, 3 * time.Millisecond}, delays)
	_, ok := m.mayRestart(now)
	require.False(t, ok, "a fifth within the window")
	d, ok := m.mayRestart(now.Add(time.Second))
	require.True(t, ok, "the window moved on")
	require.Equal(t, time.Millisecond, d)
}

func TestGroupStopWhenDone(t *testing.T) {
	var j journal
	done := j.agent("done")
	done.work = func(int64) (int, error) { return 0, agent.ErrDone }
	g, err := NewGroup([]Member{{Agent: j.agent("other")}, {Agent: done}}, StopWhenDone())
	require.NoError(t, err)
	require.NoError(t, g.Start(context.Background()))
	<-g.Done()
	require.NoError(t, g.Err())
	require.Contains(t, j.list(), "close other")

	// Without the option the others go on.
	var j2 journal
	done2 := j2.agent("done")
	done2.work = func(int64) (int, error) { return 0, agent.ErrDone }
	g2, err := NewGroup([]Member{{Agent: j2.agent("other")}, {Agent: done2}})
	require.NoError(t, err)
	require.NoError(t, g2.Start(context.Background()))
	<-g2.Runner("done").Done()
	select {
	case <-g2.Done():
		t.Fatal("the group ended when one member completed")
	default:
	}
	require.NoError(t, g2.Close(context.Background()))
}

func TestGroupDoesNotRestartAMemberSomeoneClosed(t *testing.T) {
	made := 0
	g, err := NewGroup([]Member{{
		New:     func() (agent.Agent, error) { made++; return &fakeAgent{role: "x"}, nil },
		Restart: RestartPolicy{Max: 3},
	}})
	require.NoError(t, err)
	require.NoError(t, g.Start(context.Background()))
	require.NoError(t, g.Runner("x").Close())
	require.NoError(t, g.Close(context.Background()))
	require.Equal(t, 1, made)
	require.Zero(t, g.Restarts("x"))
}

func TestNewGroupValidates(t *testing.T) {
	mk := func() (agent.Agent, error) { return &fakeAgent{role: "x"}, nil }
	for name, ms := range map[string][]Member{
		"neither":           {{}},
		"both":              {{Agent: &fakeAgent{role: "x"}, New: mk}},
		"restart, no New":   {{Agent: &fakeAgent{role: "x"}, Restart: RestartPolicy{Max: 1}}},
		"negative":          {{New: mk, Restart: RestartPolicy{Max: -1}}},
		"two of one role":   {{Agent: &fakeAgent{role: "x"}}, {New: mk}},
		"bad runner option": {{Agent: &fakeAgent{role: "x"}, Options: []Option{WithTimerSlack(-1)}}},
	} {
		_, err := NewGroup(ms)
		require.ErrorIs(t, err, ErrBadOption, name)
	}
	errMake := errors.New("cannot make")
	_, err := NewGroup([]Member{{New: func() (agent.Agent, error) { return nil, errMake }}})
	require.ErrorIs(t, err, errMake)
}

// restartLines returns the group's restart log lines.
func restartLines(t *testing.T, buf *bytes.Buffer) []map[string]any {
	var out []map[string]any
	for _, m := range logLines(t, buf) {
		if m["msg"] == "duty: restarting agent" {
			out = append(out, m)
		}
	}
	return out
}

// waitGroupDone waits for g to end (a hang guard).
func waitGroupDone(t *testing.T, g *Group) {
	t.Helper()
	select {
	case <-g.Done():
	case <-time.After(hangGuard):
		t.Fatal("the group did not end")
	}
}

// TestGroupRestartsOnReturnedErrors: a member with a restart policy whose
// DoWork returns an error (no WithStopOnError given) is restarted by the
// policy, each restart logged with role, cause, count and back-off, and
// the group gives up after Max.
func TestGroupRestartsOnReturnedErrors(t *testing.T) {
	buf := captureLog(t)
	errBoom := errors.New("boom")
	var made atomic.Int32
	g, err := NewGroup([]Member{{
		New: func() (agent.Agent, error) {
			made.Add(1)
			return &fakeAgent{role: "failing", work: func(int64) (int, error) { return 0, errBoom }}, nil
		},
		Options: []Option{quiet},
		Restart: RestartPolicy{Max: 2, Window: time.Hour, MinBackoff: time.Microsecond, MaxBackoff: time.Millisecond},
	}})
	require.NoError(t, err)
	require.NoError(t, g.Start(context.Background()))
	t.Cleanup(func() { _ = g.Close(context.Background()) })
	waitGroupDone(t, g)
	err = g.Err()
	require.ErrorIs(t, err, ErrGaveUp)
	require.ErrorIs(t, err, errBoom)
	require.Equal(t, 2, g.Restarts("failing"))
	require.Equal(t, int32(3), made.Load())

	lines := restartLines(t, buf)
	require.Len(t, lines, 2)
	for i, m := range lines {
		require.Equal(t, "WARN", m["level"])
		require.Equal(t, "failing", m["role"])
		require.Equal(t, "boom", m["cause"])
		require.Equal(t, float64(i+1), m["restart"])
		require.Equal(t, float64(time.Duration(i+1)*time.Microsecond), m["backoff"], "slog's JSON: nanoseconds")
	}
}

// TestGroupExplicitContinueRestartsOnPanics: an explicit
// WithStopOnError(false) beside a restart policy keeps the agent running
// through returned errors; a panic (stopping by default) still restarts it.
func TestGroupExplicitContinueRestartsOnPanics(t *testing.T) {
	buf := captureLog(t)
	errBoom := errors.New("boom")
	var made atomic.Int32
	g, err := NewGroup([]Member{{
		New: func() (agent.Agent, error) {
			if made.Add(1) > 1 {
				return &fakeAgent{role: "flaky"}, nil
			}
			return &fakeAgent{role: "flaky", work: func(c int64) (int, error) {
				if c > 100 {
					panic("at last")
				}
				return 0, errBoom
			}}, nil
		},
		Options: []Option{quiet, WithStopOnError(false)},
		Restart: RestartPolicy{Max: 1, MinBackoff: time.Microsecond},
	}})
	require.NoError(t, err)
	first := g.Runner("flaky")
	require.NoError(t, g.Start(context.Background()))
	waitFor(t, func() bool { return g.Restarts("flaky") == 1 })
	require.NoError(t, g.Close(context.Background()))
	require.NoError(t, g.Err())
	require.Equal(t, int64(101), first.Stats().Errors, "100 errors and the panic, all counted")
	lines := restartLines(t, buf)
	require.Len(t, lines, 1)
	require.Contains(t, lines[0]["cause"], "runner: agent flaky panicked: at last")
}

// TestGroupCountsRestartsInItsCounters: a member whose runners have
// WithCounters gets a "restarts: <role>" counter, up to date with
// Group.Restarts, freed when the group has stopped.
func TestGroupCountsRestartsInItsCounters(t *testing.T) {
	m, rd := newCountersManager(t, 6, 0)
	var made atomic.Int32
	g, err := NewGroup([]Member{{
		New: func() (agent.Agent, error) {
			if made.Add(1) > 2 {
				return &fakeAgent{role: "flaky"}, nil
			}
			return &fakeAgent{role: "flaky", work: func(int64) (int, error) { return 0, errors.New("boom") }}, nil
		},
		Options: []Option{quiet, WithCounters(m)},
		Restart: RestartPolicy{Max: 5, MinBackoff: time.Microsecond},
	}})
	require.NoError(t, err)
	require.NoError(t, g.Start(context.Background()))
	waitFor(t, func() bool { return g.Restarts("flaky") == 2 })
	restarts := func() []shown {
		var out []shown
		for _, c := range readAll(t, rd) {
			if c.typeID == countertype.Restarts {
				out = append(out, c)
			}
		}
		return out
	}
	require.Equal(t, []shown{{countertype.Restarts, "restarts: flaky", 2}}, restarts())
	require.Equal(t, "restarts", ipccounters.TypeName(countertype.Restarts))
	require.NoError(t, g.Close(context.Background()))
	require.Empty(t, restarts(), "freed with the group")
	require.Equal(t, 6, available(t, m), "every counter freed")

	// No room for the restarts counter: NewGroup fails, and frees what it took.
	m5, _ := newCountersManager(t, 5, 0)
	_, err = NewGroup([]Member{{
		New:     func() (agent.Agent, error) { return &fakeAgent{role: "flaky"}, nil },
		Options: []Option{quiet, WithCounters(m5)},
		Restart: RestartPolicy{Max: 1},
	}})
	require.ErrorIs(t, err, ipccounters.ErrFull)
	require.Equal(t, 5, available(t, m5))
}
