package dutyfx

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/fx"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/runner"
)

// hangGuard bounds every wait: a guard against a hang, not a timing
// assertion.
const hangGuard = 10 * time.Second

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, hangGuard, time.Millisecond)
}

// fakeAgent is scriptable: each hook is optional.
type fakeAgent struct {
	role  string
	start func() error
	work  func(cycle int64) (int, error)
	close func() error
	cycle int64
}

func (a *fakeAgent) RoleName() string { return a.role }

func (a *fakeAgent) OnStart() error {
	if a.start != nil {
		return a.start()
	}
	return nil
}

func (a *fakeAgent) DoWork() (int, error) {
	a.cycle++
	if a.work != nil {
		return a.work(a.cycle)
	}
	return 0, nil
}

func (a *fakeAgent) OnClose() error {
	if a.close != nil {
		return a.close()
	}
	return nil
}

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

func TestRunnersStartsInOrderAndStopsInReverse(t *testing.T) {
	j := &journal{}
	var g *runner.Group
	app := fx.New(
		fx.NopLogger,
		Runners,
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
	require.Nil(t, g.Runner("nobody"))
}

func TestRunnersRollsBackAFailedStart(t *testing.T) {
	j := &journal{}
	app := fx.New(
		fx.NopLogger,
		Runners,
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

func TestRunnersShutDownWhenAMemberFails(t *testing.T) {
	j := &journal{}
	app := fx.New(
		fx.NopLogger,
		Runners,
		fx.Supply(j),
		fx.Supply(Config{Options: func(string) []runner.Option {
			return []runner.Option{runner.WithErrorHandler(func(error) {})}
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

func TestRunnersRejectsBadConfig(t *testing.T) {
	j := &journal{}
	for name, opts := range map[string][]fx.Option{
		"bad idle spec": {fx.Supply(Config{DefaultIdle: "warp-speed"}),
			fx.Provide(AsAgent(func(j *journal) *fxAgent { return newFxAgent("x", j) }))},
		"duplicate roles": {fx.Provide(
			AsAgent(func(j *journal) *fxAgent { return newFxAgent("twin", j) }),
			fx.Annotate(func(j *journal) agent.Agent { return newFxAgent("twin", j) }, fx.ResultTags(`group:"duty.agents"`)))},
	} {
		app := fx.New(append([]fx.Option{fx.NopLogger, Runners, fx.Supply(j)}, opts...)...)
		require.ErrorIs(t, app.Err(), runner.ErrBadOption, name)
	}
}

// When one agent's OnStart fails, the agents ordered after it are never
// started, but they are closed (OnClose runs on the starting goroutine, and
// their runners release what they hold).
func TestRunnersFailedStartClosesTheAgentsAfterIt(t *testing.T) {
	j := &journal{}
	app := fx.New(
		fx.NopLogger,
		Runners,
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

// TestRunnersShutsDownOnStop: with ShutdownOnStop an agent that finishes
// its work (agent.ErrDone) ends the application with exit code 0, one that
// fails with 1; fx stop's own closes ask for nothing.
func TestRunnersShutsDownOnStop(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		code int
	}{{"done", agent.ErrDone, 0}, {"failed", agent.Terminate(errors.New("lost the log")), 1}} {
		t.Run(tc.name, func(t *testing.T) {
			j := &journal{}
			app := fx.New(fx.NopLogger, Runners, fx.Supply(j),
				fx.Supply(Config{ShutdownOnStop: true, Options: func(string) []runner.Option {
					return []runner.Option{runner.WithErrorHandler(func(error) {})}
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

// TestRunnersStopDoesNotSignalShutdown: agents closed by fx stop are not
// agents that stopped by themselves.
func TestRunnersStopDoesNotSignalShutdown(t *testing.T) {
	j := &journal{}
	app := fx.New(fx.NopLogger, Runners, fx.Supply(j), fx.Supply(Config{ShutdownOnStop: true}),
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

// TestInclude: Include runs a value the graph provides as its own type,
// which stays available (fx.Populate), unlike AsAgent's.
func TestInclude(t *testing.T) {
	j := &journal{}
	var a *fxAgent
	var g *runner.Group
	app := fx.New(fx.NopLogger, Runners, fx.Supply(j),
		fx.Provide(func(j *journal) *fxAgent { return newFxAgent("pinger", j) }),
		Include[*fxAgent](),
		fx.Populate(&a, &g))
	require.NoError(t, app.Err())
	require.NotNil(t, a)
	require.NotNil(t, g.Runner("pinger"), "the populated agent runs under its role")
	require.NoError(t, app.Start(context.Background()))
	require.NoError(t, app.Stop(context.Background()))
	require.Equal(t, []string{"start pinger", "close pinger"}, j.get())
}

// A member provided with AsMember is restarted by its policy; the role
// comes from its first agent, for Order.
func TestAsMemberRestarts(t *testing.T) {
	j := &journal{}
	made := 0
	var g *runner.Group
	app := fx.New(fx.NopLogger, Runners, fx.Supply(j),
		fx.Supply(Config{Order: []string{"flaky", "steady"}}),
		fx.Provide(
			AsAgent(func(j *journal) *fxAgent { return newFxAgent("steady", j) }),
			AsMember(func(j *journal) runner.Member {
				return runner.Member{
					New: func() (agent.Agent, error) {
						made++
						a := newFxAgent("flaky", j)
						if made <= 2 {
							a.work = func(int64) (int, error) { return 0, agent.ErrTerminated }
						}
						return a, nil
					},
					Options: []runner.Option{runner.WithErrorHandler(func(error) {})},
					Restart: runner.RestartPolicy{Max: 5, MinBackoff: time.Millisecond},
				}
			}),
		),
		fx.Populate(&g))
	require.NoError(t, app.Err())
	require.NoError(t, app.Start(context.Background()))
	require.Equal(t, "flaky", g.Runners()[0].RoleName())
	waitFor(t, func() bool { return g.Restarts("flaky") == 2 })
	require.NoError(t, app.Stop(context.Background()))
	require.NoError(t, g.Err())
	require.Equal(t, 3, made)
}

// TestThreads: Config.Threads runs the agents it lists on one thread, a
// composite named after the thread (what Idle, CPUs and Order name), in
// the order listed; the others keep threads of their own, and a role no
// agent has, or one on two threads, is refused.
func TestThreads(t *testing.T) {
	var mu sync.Mutex
	var worked []string
	agentOf := func(role string) func() agent.Agent {
		return func() agent.Agent {
			return &fakeAgent{role: role, work: func(int64) (int, error) {
				mu.Lock()
				defer mu.Unlock()
				if !slices.Contains(worked, role) {
					worked = append(worked, role)
				}
				return 0, nil
			}}
		}
	}
	var g *runner.Group
	app := fx.New(fx.NopLogger, Runners,
		fx.Supply(Config{Threads: map[string][]string{"pair": {"b", "a"}, "c": {"c"}}, Order: []string{"pair"}}),
		fx.Provide(AsAgent(agentOf("a")), AsAgent(agentOf("b")), AsAgent(agentOf("c"))),
		fx.Populate(&g))
	require.NoError(t, app.Err())
	var roles []string
	for _, r := range g.Runners() {
		roles = append(roles, r.RoleName())
	}
	require.Equal(t, []string{"pair", "c"}, roles)
	require.NoError(t, app.Start(context.Background()))
	waitFor(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(worked) == 3 })
	require.NoError(t, app.Stop(context.Background()))

	for _, ts := range []map[string][]string{{"pair": {"a", "nobody"}}, {"one": {"a"}, "two": {"a"}}} {
		app = fx.New(fx.NopLogger, Runners, fx.Supply(Config{Threads: ts}),
			fx.Provide(AsAgent(agentOf("a"))), fx.Populate(&g))
		require.ErrorIs(t, app.Err(), runner.ErrBadOption, "%v", ts)
	}
}
