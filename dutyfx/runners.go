package dutyfx

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/runner"
)

// AgentGroup is the fx value group Runners reads agents from; memberGroup
// the one it reads runner.Members from.
const (
	AgentGroup  = "duty.agents"
	memberGroup = "duty.members"
)

// Runners runs every agent provided into AgentGroup (AsAgent, Include) and
// every runner.Member provided with AsMember (members with a restart
// policy) as one runner.Group, which it provides. On fx start the
// group starts its members in order (Config.Order), within fx's start
// context; if one fails, the others are closed and fx start fails. On fx
// stop it closes them in reverse order within the stop hook's deadline.
// When the group ends by itself (a member failed with no restart left,
// or, with Config.ShutdownOnStop, a member completed), Runners asks fx to
// shut the application down: exit code 1 for a failure, 0 otherwise.
// Configuration is an optional Config supplied into the graph.
var Runners = fx.Module("duty.runners",
	fx.Provide(newGroup),
	fx.Invoke(func(*runner.Group) {}),
)

// AsAgent annotates a constructor whose first result implements
// agent.Agent so that its agent joins the group Runners runs, as an
// agent.Agent only (to keep a value of its own type in the graph, provide
// the constructor plainly and add the value with Include):
//
//	fx.Provide(dutyfx.AsAgent(NewConductor))
//	fx.Provide(dutyfx.AsAgent(NewEngine, fx.ParamTags(dutyfx.Named("orders"))))
//
// Annotations for the constructor's parameters (fx.ParamTags) go in anns.
func AsAgent(constructor any, anns ...fx.Annotation) any {
	return fx.Annotate(constructor, append(anns, fx.As(new(agent.Agent)), fx.ResultTags(`group:"`+AgentGroup+`"`))...)
}

// AsMember annotates a constructor of a runner.Member (an agent factory
// with its options and restart policy) so that the member joins the group
// Runners runs; anns as for AsAgent.
func AsMember(constructor any, anns ...fx.Annotation) any {
	return fx.Annotate(constructor, append(anns, fx.ResultTags(`group:"`+memberGroup+`"`))...)
}

// Include adds the value of type T that the graph provides (by a plain
// fx.Provide) to the group Runners runs, leaving it available as a T:
//
//	fx.Provide(NewPinger),             // *Pinger, for whoever needs it
//	dutyfx.Include[*Pinger](),         // and run by Runners
func Include[T agent.Agent]() fx.Option {
	return fx.Provide(AsAgent(func(a T) T { return a }))
}

// Config configures Runners. Every field is optional.
type Config struct {
	// Idle maps a role name to an idle spec for idle.Parse ("spin",
	// "backoff:10:5:1us:1ms", ...) or "wake" (parseIdle). Roles not
	// listed use DefaultIdle, except SharedFiles's keeper
	// ("duty-keeper"), which sleeps until its next beat ("wake:1")
	// whatever DefaultIdle says: it has work once per period, and a
	// latency setting meant for the pipeline would make it poll.
	Idle map[string]string
	// DefaultIdle is the idle spec of roles not in Idle ("" = "backoff").
	DefaultIdle string
	// CPUs maps a role name to the CPUs its thread is pinned to.
	CPUs map[string][]int
	// TimerSlack, if > 0, is set on every agent thread.
	TimerSlack time.Duration
	// Order lists roles to start first, in this order; the other members
	// follow sorted by role name. (fx value groups have no order.)
	Order []string
	// ShutdownOnStop ends the group, and the application with exit code
	// 0, as soon as one member completes (agent.ErrDone): for an
	// application whose work is done when one of its agents is.
	ShutdownOnStop bool
	// Options returns extra options for a role (error handler, policies,
	// ...); applied after the ones above.
	Options func(role string) []runner.Option
	// Threads runs several agents on one thread: it maps a thread's role
	// to the roles of the agents (AsAgent, Include) it runs, in this
	// order, as one agent.NewComposite whose role is the thread's (Idle,
	// CPUs, Order and Options then name the thread). Agents not listed
	// run on threads of their own, and so does an agent listed alone on
	// a thread of its own role; a role that no agent has, or listed
	// twice, is an error.
	Threads map[string][]string
	// OnStopped, if set, is called on fx stop once the group has stopped
	// (every agent closed), within the stop hook's context, and before
	// the files of SharedFiles are removed and closed: the place to read
	// the agents' final state and the files' final statistics. Its error
	// is fx stop's.
	OnStopped func(context.Context) error
}

type groupParams struct {
	fx.In
	Agents     []agent.Agent   `group:"duty.agents"`
	Members    []runner.Member `group:"duty.members"`
	Config     Config          `optional:"true"`
	Lifecycle  fx.Lifecycle
	Shutdowner fx.Shutdowner
}

func newGroup(p groupParams) (*runner.Group, error) {
	if len(p.Config.Threads) > 0 {
		var err error
		if p.Agents, err = threads(p.Agents, p.Config.Threads); err != nil {
			return nil, err
		}
	}
	members := make([]runner.Member, 0, len(p.Agents)+len(p.Members))
	for _, a := range p.Agents {
		members = append(members, runner.Member{Agent: a})
	}
	// A member made by New has its role only once its agent is made:
	// NewGroup makes it, so order by the role of a first agent made here.
	roles := make([]string, len(members), len(members)+len(p.Members))
	firsts := slices.Clone(p.Agents)
	for i, a := range p.Agents {
		roles[i] = a.RoleName()
	}
	for _, m := range p.Members {
		role, a, m, err := firstAgent(m)
		if err != nil {
			return nil, err
		}
		members = append(members, m)
		roles = append(roles, role)
		firsts = append(firsts, a)
	}
	rank := func(role string) int {
		if i := slices.Index(p.Config.Order, role); i >= 0 {
			return i
		}
		return len(p.Config.Order)
	}
	idx := make([]int, len(members))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if ra, rb := rank(roles[a]), rank(roles[b]); ra != rb {
			return ra - rb
		}
		switch {
		case roles[a] < roles[b]:
			return -1
		case roles[a] > roles[b]:
			return 1
		}
		return 0
	})
	sorted := make([]runner.Member, len(members))
	for i, j := range idx {
		m := members[j]
		opts, err := options(p.Config, roles[j], firsts[j])
		if err != nil {
			return nil, err
		}
		m.Options = append(opts, m.Options...)
		sorted[i] = m
	}
	var opts []runner.GroupOption
	if p.Config.ShutdownOnStop {
		opts = append(opts, runner.StopWhenDone())
	}
	g, err := runner.NewGroup(sorted, opts...)
	if err != nil {
		return nil, err
	}
	w := &watcher{g: g, shutdowner: p.Shutdowner, stop: make(chan struct{}), stopped: p.Config.OnStopped}
	p.Lifecycle.Append(fx.Hook{OnStart: w.start, OnStop: w.close})
	return g, nil
}

// firstAgent makes a New member's first agent, to learn its role, and
// returns it and a member whose New hands out that agent first.
func firstAgent(m runner.Member) (string, agent.Agent, runner.Member, error) {
	if m.New == nil {
		if m.Agent == nil {
			return "", nil, m, fmt.Errorf("%w: a member with neither Agent nor New", runner.ErrBadOption)
		}
		return m.Agent.RoleName(), m.Agent, m, nil
	}
	a, err := m.New()
	if err != nil {
		return "", nil, m, err
	}
	if a == nil {
		return "", nil, m, fmt.Errorf("%w: New returned a nil agent", runner.ErrBadOption)
	}
	next := m.New
	var once sync.Once
	m.New = func() (agent.Agent, error) {
		first := false
		once.Do(func() { first = true })
		if first {
			return a, nil
		}
		return next()
	}
	return a.RoleName(), a, m, nil
}

// options turns the Config's entries for role into runner options; a,
// the role's (first) agent, is what a "wake" strategy sleeps for.
func options(cfg Config, role string, a agent.Agent) ([]runner.Option, error) {
	spec, ok := cfg.Idle[role]
	switch {
	case ok:
	case role == keeperRole:
		spec = keeperIdle
	default:
		spec = cfg.DefaultIdle
	}
	if spec == "" {
		spec = "backoff"
	}
	s, err := parseIdle(spec, a)
	if err != nil {
		return nil, fmt.Errorf("agent %s: %w: %w", role, runner.ErrBadOption, err)
	}
	opts := []runner.Option{runner.WithIdle(s)}
	if cpus, ok := cfg.CPUs[role]; ok {
		opts = append(opts, runner.WithCPUs(cpus...))
	}
	if cfg.TimerSlack > 0 {
		opts = append(opts, runner.WithTimerSlack(cfg.TimerSlack))
	}
	if cfg.Options != nil {
		opts = append(opts, cfg.Options(role)...)
	}
	return opts, nil
}

// watcher starts and stops the group with the application and shuts the
// application down when the group ends by itself.
type watcher struct {
	g          *runner.Group
	shutdowner fx.Shutdowner
	stop       chan struct{}
	done       sync.WaitGroup
	stopped    func(context.Context) error // Config.OnStopped
}

func (w *watcher) start(ctx context.Context) error {
	if err := w.g.Start(ctx); err != nil {
		return err
	}
	w.done.Go(func() {
		select {
		case <-w.g.Done():
			code := 0
			if err := w.g.Err(); err != nil {
				// Which agent ended the application, and why: fx's own
				// shutdown signal carries only the exit code.
				slog.Default().Error("duty: a group member failed; shutting down", "err", err)
				code = 1
			}
			_ = w.shutdowner.Shutdown(fx.ExitCode(code))
		case <-w.stop:
		}
	})
	return nil
}

func (w *watcher) close(ctx context.Context) error {
	close(w.stop)
	w.done.Wait()
	err := w.g.Close(ctx)
	if w.stopped != nil {
		err = errors.Join(err, w.stopped(ctx))
	}
	return err
}

// threads replaces the agents Config.Threads lists by the composites of
// their threads.
func threads(agents []agent.Agent, ts map[string][]string) ([]agent.Agent, error) {
	index := map[string]int{}
	for i, a := range agents {
		index[a.RoleName()] = i
	}
	taken := make([]bool, len(agents))
	var out []agent.Agent
	for _, thread := range slices.Sorted(maps.Keys(ts)) {
		var members []agent.Agent
		for _, role := range ts[thread] {
			i, ok := index[role]
			if !ok || taken[i] {
				return nil, fmt.Errorf("%w: thread %s: no agent %q, or one on another thread", runner.ErrBadOption, thread, role)
			}
			taken[i] = true
			members = append(members, agents[i])
		}
		if len(members) == 1 && members[0].RoleName() == thread {
			out = append(out, members[0])
			continue
		}
		c, err := agent.NewComposite(members...)
		if err != nil {
			return nil, fmt.Errorf("thread %s: %w", thread, err)
		}
		out = append(out, namedThread{c, thread})
	}
	for i, a := range agents {
		if !taken[i] {
			out = append(out, a)
		}
	}
	return out, nil
}

// namedThread is a composite named after its thread; it keeps the composite's
// Agents (what "wake" sleeps for) and BindContext.
type namedThread struct {
	agent.Agent
	role string
}

func (t namedThread) RoleName() string { return t.role }

func (t namedThread) Agents() []agent.Agent {
	return t.Agent.(interface{ Agents() []agent.Agent }).Agents()
}

func (t namedThread) BindContext(ctx context.Context) { t.Agent.(agent.ContextAware).BindContext(ctx) }
