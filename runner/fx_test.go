package runner

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/dutyrt/duty/agent"
)

// journal records lifecycle events of several agents in one order.
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) add(e string) {
	j.mu.Lock()
	j.events = append(j.events, e)
	j.mu.Unlock()
}

func (j *journal) get() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.events...)
}

// fxAgent does one unit of work on each of its first 100 cycles.
type fxAgent struct {
	fakeAgent
	j *journal
}

func newFxAgent(role string, j *journal) *fxAgent {
	a := &fxAgent{fakeAgent: fakeAgent{role: role}, j: j}
	a.start = func() error { j.add("start " + role); return nil }
	a.close = func() error { j.add("close " + role); return nil }
	a.work = func(cycle int64) (int, error) {
		if cycle <= 100 {
			return 1, nil
		}
		return 0, nil
	}
	return a
}

func TestFxModuleStartsInOrderAndStopsInReverse(t *testing.T) {
	j := &journal{}
	var g *Group
	app := fx.New(
		fx.NopLogger,
		Module,
		fx.Supply(j),
		fx.Supply(Config{Order: []string{"receiver", "conductor"}, DefaultIdle: "sleep-ns:1000", Idle: map[string]string{"sender": "yield"}}),
		fx.Provide(
			AsAgent(func(j *journal) *fxAgent { return newFxAgent("sender", j) }),
			fx.Annotate(func(j *journal) agent.Agent { return newFxAgent("conductor", j) }, fx.ResultTags(`group:"duty.agents"`)),
			AsAgent(func(j *journal) (*fxAgent, error) { return newFxAgent("receiver", j), nil }),
		),
		fx.Populate(&g),
	)
	require.NoError(t, app.Err())
	ctx := context.Background()
	require.NoError(t, app.Start(ctx))

	roles := []string{}
	for _, r := range g.Runners() {
		roles = append(roles, r.RoleName())
	}
	require.Equal(t, []string{"receiver", "conductor", "sender"}, roles, "Order first, then by role name")
	for _, r := range g.Runners() {
		waitFor(t, func() bool { return r.Stats().DutyCycles > 200 })
		require.True(t, r.Stats().Running)
	}
	require.NoError(t, app.Stop(ctx))

	require.Equal(t, []string{
		"start receiver", "start conductor", "start sender",
		"close sender", "close conductor", "close receiver",
	}, j.get())
	for _, r := range g.Runners() {
		st := r.Stats()
		require.False(t, st.Running, st.Role)
		require.Equal(t, int64(100), st.TotalWork, st.Role)
		require.Equal(t, st.DutyCycles-100, st.IdleCycles, st.Role)
		require.Zero(t, st.Errors, st.Role)
	}
	require.Equal(t, "yield", g.Runner("sender").cfg.idle.Alias())
	require.Equal(t, "sleep-ns:1000", g.Runner("receiver").cfg.idle.String())
	require.Nil(t, g.Runner("nobody"))
}

func TestFxModuleRollsBackAFailedStart(t *testing.T) {
	j := &journal{}
	app := fx.New(
		fx.NopLogger,
		Module,
		fx.Supply(j),
		fx.Supply(Config{Order: []string{"a", "b", "c"}}),
		fx.Provide(
			AsAgent(func(j *journal) *fxAgent { return newFxAgent("a", j) }),
			AsAgent(func(j *journal) *fxAgent {
				a := newFxAgent("b", j)
				a.start = func() error { j.add("start b"); return errors.New("b cannot start") }
				return a
			}),
			AsAgent(func(j *journal) *fxAgent { return newFxAgent("c", j) }),
		),
	)
	require.NoError(t, app.Err())
	err := app.Start(context.Background())
	require.ErrorContains(t, err, "b cannot start")
	require.NotContains(t, j.get(), "start c", "c never starts")
	require.Equal(t, []string{"start a", "start b", "close b", "close c", "close a"}, j.get(),
		"b closed by its failed start, then the others in reverse order; c is closed without starting")
}

func TestFxModuleShutsDownOnUnexpectedStop(t *testing.T) {
	j := &journal{}
	app := fx.New(
		fx.NopLogger,
		Module,
		fx.Supply(j),
		fx.Supply(Config{ShutdownOnUnexpectedStop: true, Options: func(string) []Option {
			return []Option{WithErrorHandler(func(error) {})}
		}}),
		fx.Provide(
			AsAgent(func(j *journal) *fxAgent { return newFxAgent("steady", j) }),
			AsAgent(func(j *journal) *fxAgent {
				a := newFxAgent("doomed", j)
				a.work = func(cycle int64) (int, error) {
					if cycle == 50 {
						return 0, agent.Terminate(errors.New("lost the log"))
					}
					return 0, nil
				}
				return a
			}),
		),
	)
	require.NoError(t, app.Err())
	require.NoError(t, app.Start(context.Background()))
	select {
	case sig := <-app.Wait():
		require.Equal(t, 1, sig.ExitCode)
	case <-time.After(hangGuard):
		t.Fatal("no shutdown signal")
	}
	require.NoError(t, app.Stop(context.Background()))
	require.Contains(t, j.get(), "close doomed")
	require.Contains(t, j.get(), "close steady")
}

func TestFxModuleRejectsBadConfig(t *testing.T) {
	j := &journal{}
	for name, opts := range map[string][]fx.Option{
		"bad idle spec": {fx.Supply(Config{DefaultIdle: "warp-speed"}),
			fx.Provide(AsAgent(func(j *journal) *fxAgent { return newFxAgent("x", j) }))},
		"duplicate roles": {fx.Provide(
			AsAgent(func(j *journal) *fxAgent { return newFxAgent("twin", j) }),
			fx.Annotate(func(j *journal) agent.Agent { return newFxAgent("twin", j) }, fx.ResultTags(`group:"duty.agents"`)))},
	} {
		app := fx.New(append([]fx.Option{fx.NopLogger, Module, fx.Supply(j)}, opts...)...)
		require.ErrorIs(t, app.Err(), ErrBadOption, name)
	}
}

// When one agent's OnStart fails, the agents ordered after it are never
// started, but they are closed (OnClose runs on the starting goroutine, and
// their runners release what they hold).
func TestFxModuleFailedStartClosesTheAgentsAfterIt(t *testing.T) {
	j := &journal{}
	app := fx.New(
		fx.NopLogger,
		Module,
		fx.Supply(j),
		fx.Supply(Config{Order: []string{"a", "b"}}),
		fx.Provide(
			AsAgent(func(j *journal) *fxAgent {
				a := newFxAgent("a", j)
				a.start = func() error { j.add("start a"); return errors.New("a cannot start") }
				return a
			}),
			AsAgent(func(j *journal) *fxAgent { return newFxAgent("b", j) }),
		),
	)
	require.NoError(t, app.Err())
	require.Error(t, app.Start(context.Background()))
	require.Contains(t, j.get(), "close b", "b's OnClose never ran: %v", j.get())
}

// TestFxModuleShutsDownOnStop: with ShutdownOnStop an agent that finishes
// its work (agent.ErrDone) ends the application with exit code 0, one that
// fails with 1; fx stop's own closes ask for nothing.
func TestFxModuleShutsDownOnStop(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code int
	}{{"done", agent.ErrDone, 0}, {"failed", agent.Terminate(errors.New("lost the log")), 1}} {
		t.Run(tc.name, func(t *testing.T) {
			j := &journal{}
			app := fx.New(fx.NopLogger, Module, fx.Supply(j),
				fx.Supply(Config{ShutdownOnStop: true, Options: func(string) []Option {
					return []Option{WithErrorHandler(func(error) {})}
				}}),
				fx.Provide(
					AsAgent(func(j *journal) *fxAgent { return newFxAgent("steady", j) }),
					AsAgent(func(j *journal) *fxAgent {
						a := newFxAgent("batch", j)
						a.work = func(cycle int64) (int, error) {
							if cycle == 50 {
								return 0, tc.err
							}
							return 1, nil
						}
						return a
					}),
				),
			)
			require.NoError(t, app.Err())
			require.NoError(t, app.Start(context.Background()))
			select {
			case sig := <-app.Wait():
				require.Equal(t, tc.code, sig.ExitCode)
			case <-time.After(hangGuard):
				t.Fatal("no shutdown signal")
			}
			require.NoError(t, app.Stop(context.Background()))
			require.Contains(t, j.get(), "close batch")
			require.Contains(t, j.get(), "close steady")
		})
	}
}

// TestFxModuleStopDoesNotSignalShutdown: agents closed by fx stop are not
// agents that stopped by themselves.
func TestFxModuleStopDoesNotSignalShutdown(t *testing.T) {
	j := &journal{}
	app := fx.New(fx.NopLogger, Module, fx.Supply(j), fx.Supply(Config{ShutdownOnStop: true}),
		fx.Provide(AsAgent(func(j *journal) *fxAgent { return newFxAgent("steady", j) })))
	require.NoError(t, app.Start(context.Background()))
	wait := app.Wait()
	require.NoError(t, app.Stop(context.Background()))
	select {
	case sig := <-wait:
		t.Fatalf("shutdown signalled: %+v", sig)
	default:
	}
}

// TestFxInclude: Include runs a value the graph provides as its own type,
// which stays available (fx.Populate), unlike AsAgent's.
func TestFxInclude(t *testing.T) {
	j := &journal{}
	var a *fxAgent
	var g *Group
	app := fx.New(fx.NopLogger, Module, fx.Supply(j),
		fx.Provide(func(j *journal) *fxAgent { return newFxAgent("pinger", j) }),
		Include[*fxAgent](),
		fx.Populate(&a, &g))
	require.NoError(t, app.Err())
	require.NotNil(t, a)
	require.Same(t, a, g.Runner("pinger").Agent())
	require.NoError(t, app.Start(context.Background()))
	require.NoError(t, app.Stop(context.Background()))
	require.Equal(t, []string{"start pinger", "close pinger"}, j.get())
}

// TestCloseRequested tells a Close from an agent stopping by itself, which
// ShutdownOnStop relies on (both set the stop flag).
func TestCloseRequested(t *testing.T) {
	done := &fakeAgent{role: "done", work: func(int64) (int, error) { return 0, agent.ErrDone }}
	r, err := New(done)
	require.NoError(t, err)
	require.NoError(t, r.Start())
	<-r.Done()
	require.False(t, r.closeRequested(), "stopped by itself")
	require.NoError(t, r.Close())
	require.True(t, r.closeRequested())

	busy := &fakeAgent{role: "busy", work: func(int64) (int, error) { return 1, nil }}
	r, err = New(busy)
	require.NoError(t, err)
	require.NoError(t, r.Start())
	require.NoError(t, r.Close())
	require.True(t, r.closeRequested())
}

// TestErrorsSayRunnerOnce: an error that wraps one of the package's
// sentinels names the package once (the sentinel's "runner:").
func TestErrorsSayRunnerOnce(t *testing.T) {
	_, err := New(&fakeAgent{role: "pinger"}, WithIdle(nil))
	require.ErrorIs(t, err, ErrBadOption)
	require.Equal(t, 1, strings.Count(err.Error(), "runner:"), err.Error())
	r, err := New(&fakeAgent{role: "pinger", work: func(int64) (int, error) { return 0, nil }})
	require.NoError(t, err)
	require.NoError(t, r.Close())
	err = r.Start()
	require.ErrorIs(t, err, ErrClosed)
	require.Equal(t, "agent pinger: runner: closed", err.Error())
}
