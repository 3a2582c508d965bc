package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
)

// AgentGroup is the fx value group Module reads agents from.
const AgentGroup = "duty.agents"

// Module runs every agent provided into the value group "duty.agents" (use
// AsAgent) on its own Runner. On fx start it starts them in order (see
// Config.Order); if one fails to start, every other one is closed, in
// reverse order (those not started yet are closed without being started,
// so their OnClose runs all the same), and fx start fails. On fx stop it
// closes them in reverse order within the stop hook's deadline. It provides
// a *Group to read the runners and their statistics. Configuration is an
// optional Config supplied into the graph (fx.Supply(runner.Config{...})).
var Module = fx.Module("duty.runner",
	fx.Provide(newGroup),
	fx.Invoke(func(*Group) {}),
)

// AsAgent annotates a constructor whose first result implements
// agent.Agent so that its agent joins the group Module runs, as an
// agent.Agent only (to keep a value of its own type in the graph, provide
// the constructor plainly and add the value with Include):
//
//	fx.Provide(runner.AsAgent(NewConductor))
func AsAgent(constructor any) any {
	return fx.Annotate(constructor, fx.As(new(agent.Agent)), fx.ResultTags(`group:"`+AgentGroup+`"`))
}

// Include adds the value of type T that the graph provides (by a plain
// fx.Provide) to the group Module runs, leaving it available as a T:
//
//	fx.Provide(NewPinger),             // *Pinger, for whoever needs it
//	runner.Include[*Pinger](),         // and run by Module
func Include[T agent.Agent]() fx.Option {
	return fx.Provide(AsAgent(func(a T) T { return a }))
}

// Config configures Module. Every field is optional.
type Config struct {
	// Idle maps a role name to an idle spec for idle.Parse ("spin",
	// "backoff:10:5:1us:1ms", ...). Roles not listed use DefaultIdle.
	Idle map[string]string
	// DefaultIdle is the idle spec of roles not in Idle ("" = "backoff").
	DefaultIdle string
	// CPUs maps a role name to the CPUs its thread is pinned to.
	CPUs map[string][]int
	// TimerSlack, if > 0, is set on every agent thread (WithTimerSlack).
	TimerSlack time.Duration
	// Order lists roles to start first, in this order; the other agents
	// follow sorted by role name. (fx value groups have no order.)
	Order []string
	// ShutdownOnUnexpectedStop asks fx to shut the application down (exit
	// code 1) when an agent stops by itself with an error (Runner.Err):
	// an unexpected termination, or an error or panic under a Stop policy.
	ShutdownOnUnexpectedStop bool
	// ShutdownOnStop asks fx to shut the application down when any agent
	// stops by itself: with exit code 0 when it terminated as expected
	// (agent.ErrDone, say: its work is complete), 1 when it stopped with
	// an error (Runner.Err), as ShutdownOnUnexpectedStop. An agent closed
	// by fx stop or by a call to Close does not count.
	ShutdownOnStop bool
	// Options returns extra options for a role (error handler, policies,
	// ...); applied after the ones above.
	Options func(role string) []Option
}

type groupParams struct {
	fx.In
	Agents     []agent.Agent `group:"duty.agents"`
	Config     Config        `optional:"true"`
	Lifecycle  fx.Lifecycle
	Shutdowner fx.Shutdowner
}

// Group is the set of runners Module manages, in start order.
type Group struct {
	runners    []*Runner
	cfg        Config
	shutdowner fx.Shutdowner
	stop       chan struct{}
	watchers   sync.WaitGroup
}

// Runners returns the runners in start order.
func (g *Group) Runners() []*Runner { return slices.Clone(g.runners) }

// Runner returns the runner of role, or nil.
func (g *Group) Runner(role string) *Runner {
	for _, r := range g.runners {
		if r.RoleName() == role {
			return r
		}
	}
	return nil
}

func newGroup(p groupParams) (*Group, error) {
	agents := slices.Clone(p.Agents)
	rank := func(role string) int {
		if i := slices.Index(p.Config.Order, role); i >= 0 {
			return i
		}
		return len(p.Config.Order)
	}
	slices.SortStableFunc(agents, func(a, b agent.Agent) int {
		if ra, rb := rank(a.RoleName()), rank(b.RoleName()); ra != rb {
			return ra - rb
		}
		switch an, bn := a.RoleName(), b.RoleName(); {
		case an < bn:
			return -1
		case an > bn:
			return 1
		}
		return 0
	})
	g := &Group{cfg: p.Config, shutdowner: p.Shutdowner, stop: make(chan struct{})}
	for i, a := range agents {
		role := a.RoleName()
		if i > 0 && agents[i-1].RoleName() == role {
			return nil, fmt.Errorf("%w: two agents with role %q", ErrBadOption, role)
		}
		r, err := New(a, g.options(role)...)
		if err != nil {
			return nil, err
		}
		g.runners = append(g.runners, r)
	}
	p.Lifecycle.Append(fx.Hook{OnStart: g.start, OnStop: g.close})
	return g, nil
}

func (g *Group) options(role string) []Option {
	spec, ok := g.cfg.Idle[role]
	if !ok {
		spec = g.cfg.DefaultIdle
	}
	if spec == "" {
		spec = idle.AliasBackoff
	}
	s, err := idle.Parse(spec)
	var opts []Option
	if err != nil {
		opts = append(opts, func(c *config) { c.errs = append(c.errs, fmt.Errorf("%w: %w", ErrBadOption, err)) })
	} else {
		opts = append(opts, WithIdle(s))
	}
	if cpus, ok := g.cfg.CPUs[role]; ok {
		opts = append(opts, WithCPUs(cpus...))
	}
	if g.cfg.TimerSlack > 0 {
		opts = append(opts, WithTimerSlack(g.cfg.TimerSlack))
	}
	if g.cfg.Options != nil {
		opts = append(opts, g.cfg.Options(role)...)
	}
	return opts
}

func (g *Group) start(ctx context.Context) error {
	for i, r := range g.runners {
		if err := r.Start(); err != nil {
			// Roll back: close every other runner, in reverse order. The
			// ones before i stop; the ones after it are never started,
			// but closed all the same (OnClose runs here, and they release
			// their counters): every agent's OnClose runs once. Runner i
			// was closed by its failed Start.
			errs := []error{err}
			for j := len(g.runners) - 1; j >= 0; j-- {
				if j != i {
					errs = append(errs, g.runners[j].CloseContext(ctx))
				}
			}
			return errors.Join(errs...)
		}
	}
	if g.cfg.ShutdownOnUnexpectedStop || g.cfg.ShutdownOnStop {
		for _, r := range g.runners {
			g.watchers.Go(func() {
				select {
				case <-r.Done():
					switch {
					case r.Err() != nil:
						_ = g.shutdowner.Shutdown(fx.ExitCode(1))
					case g.cfg.ShutdownOnStop && !r.closeRequested():
						_ = g.shutdowner.Shutdown(fx.ExitCode(0))
					}
				case <-g.stop:
				}
			})
		}
	}
	return nil
}

func (g *Group) close(ctx context.Context) error {
	close(g.stop)
	g.watchers.Wait()
	var errs []error
	for i := len(g.runners) - 1; i >= 0; i-- {
		errs = append(errs, g.runners[i].CloseContext(ctx))
	}
	return errors.Join(errs...)
}
