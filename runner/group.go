package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/dutyrt/duty/agent"
	ipccounters "github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/internal/countertype"
)

// Member is one agent of a Group: either a fixed Agent, or a New function
// that makes it, which a member with a RestartPolicy needs (a restart runs
// a fresh agent: one that panicked may have left its state broken).
type Member struct {
	Agent   agent.Agent
	New     func() (agent.Agent, error)
	Options []Option // for every runner of the member
	Restart RestartPolicy
}

// RestartPolicy says when a Group restarts a member whose agent stopped
// by itself with an error (Runner.Err: a panic, or an error under
// WithStopOnError, an unexpected termination). A member that completes
// (agent.ErrDone), or that someone closed, is not restarted. The zero
// value never restarts.
//
// A policy with Max > 0 applies to the errors DoWork returns as well as to
// panics: the member's runners get WithStopOnError(true) unless its
// Options set it. An explicit WithStopOnError(false) keeps the agent
// running through returned errors (reported and counted, never
// restarted); panics under WithStopOnPanic(true) (the default) and
// unexpected terminations (agent.ErrTerminated, agent.Terminate) still
// stop it and are restarted, so the combination is allowed.
//
// Every restart is logged when it is decided, before its back-off, with
// slog.Default at level Warn, "duty: restarting agent", with the member's role, the cause (the error that
// stopped it, or that made the previous restart fail), restart (its
// number, counting from the group's start) and backoff (the wait before
// it). It is counted in Group.Restarts and, for a member whose Options
// include WithCounters(m), in a counter of m labelled "restarts: <role>"
// (countertype.Restarts), allocated by NewGroup and freed when the group
// has stopped.
type RestartPolicy struct {
	// Max is the number of restarts allowed within Window; one more
	// failure in that window ends the group (ErrGaveUp).
	Max int
	// Window is the span Max counts over (default one minute).
	Window time.Duration
	// MinBackoff and MaxBackoff bound the wait before a restart: it starts
	// at MinBackoff (default 10 ms) and doubles with every restart that
	// follows within Window, up to MaxBackoff (default 1 s).
	MinBackoff, MaxBackoff time.Duration
}

// GroupOption configures a Group.
type GroupOption func(*groupConfig)

type groupConfig struct {
	stopWhenDone bool
}

// StopWhenDone makes the group end, closing every member, as soon as one
// member completes (its agent returned agent.ErrDone): for a group whose
// work is over when one of its agents is. By default the others go on.
func StopWhenDone() GroupOption { return func(c *groupConfig) { c.stopWhenDone = true } }

// memberError is why a Group ended by itself: which member, its error, and
// how many times it had been restarted. It wraps ErrGaveUp and the member's
// error.
type memberError struct {
	Role     string
	Restarts int
	Err      error
}

func (e *memberError) Error() string {
	if e.Restarts > 0 {
		return fmt.Sprintf("runner: group ended by agent %s after %d restarts: %v", e.Role, e.Restarts, e.Err)
	}
	return fmt.Sprintf("runner: group ended by agent %s: %v", e.Role, e.Err)
}

func (e *memberError) Unwrap() []error { return []error{ErrGaveUp, e.Err} }

// ErrGaveUp is wrapped by Group.Err when a member failed with no restart
// left; the error also wraps the member's own error and names its role.
var ErrGaveUp = errors.New("runner: member failed, no restart left")

// Group runs agents together: it starts them in the order given, closes
// them in the reverse order, restarts failed members by their policies,
// and ends (closing every member) when a member fails with no restart
// left, reporting which one and why (Err). It is what runs the agents of
// an fx application (package dutyfx), and works as well without fx.
//
// Start and Close may be called from any goroutine; Close any number of
// times.
type Group struct {
	cfg     groupConfig
	members []*member

	mu      sync.Mutex
	started bool
	err     error

	stopOnce sync.Once
	stop     chan struct{} // closed when the group stops: by Close or by itself
	doneOnce sync.Once
	done     chan struct{} // closed when every member has stopped
	watchers sync.WaitGroup
}

type member struct {
	spec     Member
	role     string
	r        *Runner // the current runner; guarded by Group.mu
	restarts int     // guarded by Group.mu
	recent   []time.Time

	// restartsCounter, if the member restarts and its runners have
	// WithCounters: "restarts: <role>". Written and freed under Group.mu;
	// nil once freed.
	restartsCounter *ipccounters.Counter
}

// NewGroup makes a runner for every member (making the agents of members
// with a New function), without starting them, and allocates the restart
// counters of members with a RestartPolicy and WithCounters. An error
// wraps ErrBadOption for a member with neither or both of Agent and New, a
// RestartPolicy without New, two members with one role, or a runner
// option New refuses; or it is the counters manager's (counters.ErrFull).
func NewGroup(members []Member, opts ...GroupOption) (*Group, error) {
	g := &Group{stop: make(chan struct{}), done: make(chan struct{})}
	for _, o := range opts {
		o(&g.cfg)
	}
	var errs []error
	for i, spec := range members {
		m, err := newMember(spec, i)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if slices.ContainsFunc(g.members, func(o *member) bool { return o.role == m.role }) {
			errs = append(errs, fmt.Errorf("%w: two members with role %q", ErrBadOption, m.role))
			m.r.closeUnstarted()
			continue
		}
		g.members = append(g.members, m)
		if err := m.allocateRestartsCounter(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		for _, m := range g.members {
			m.r.closeUnstarted()
		}
		g.freeCounters()
		return nil, err
	}
	return g, nil
}

// allocateRestartsCounter allocates m's restart counter from the counters
// manager of its runners' WithCounters option, if it has a restart policy
// and that option.
func (m *member) allocateRestartsCounter() error {
	if m.spec.Restart.Max == 0 {
		return nil
	}
	var probe config
	for _, o := range m.spec.Options {
		o(&probe)
	}
	if probe.liveCounters == nil {
		return nil
	}
	c, err := probe.liveCounters.Allocate("restarts: "+m.role, countertype.Restarts, nil)
	if err != nil {
		return fmt.Errorf("runner: agent %s: allocating its restarts counter: %w", m.role, err)
	}
	m.restartsCounter = c
	return nil
}

// freeCounters frees the members' restart counters, once the group has
// stopped (or was never made).
func (g *Group) freeCounters() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range g.members {
		if m.restartsCounter != nil {
			_ = m.restartsCounter.Close()
			m.restartsCounter = nil
		}
	}
}

// finish marks the group stopped: its counters are freed and Done closed.
func (g *Group) finish() {
	g.doneOnce.Do(func() {
		g.freeCounters()
		close(g.done)
	})
}

func newMember(spec Member, i int) (*member, error) {
	switch {
	case (spec.Agent == nil) == (spec.New == nil):
		return nil, fmt.Errorf("%w: member %d: give exactly one of Agent and New", ErrBadOption, i)
	case spec.Restart.Max > 0 && spec.New == nil:
		return nil, fmt.Errorf("%w: member %d (%s): a restart policy needs New, to make a fresh agent", ErrBadOption, i, spec.Agent.RoleName())
	case spec.Restart.Max < 0 || spec.Restart.Window < 0 || spec.Restart.MinBackoff < 0 || spec.Restart.MaxBackoff < 0:
		return nil, fmt.Errorf("%w: member %d: negative restart policy %+v", ErrBadOption, i, spec.Restart)
	}
	if spec.Restart.Max > 0 && !stopOnErrorGiven(spec.Options) {
		// A restart policy is meant for the errors DoWork returns too.
		spec.Options = append([]Option{WithStopOnError(true)}, spec.Options...)
	}
	if spec.Restart.Window == 0 {
		spec.Restart.Window = time.Minute
	}
	if spec.Restart.MinBackoff == 0 {
		spec.Restart.MinBackoff = 10 * time.Millisecond
	}
	if spec.Restart.MaxBackoff == 0 {
		spec.Restart.MaxBackoff = time.Second
	}
	spec.Restart.MaxBackoff = max(spec.Restart.MaxBackoff, spec.Restart.MinBackoff)
	m := &member{spec: spec}
	r, err := m.newRunner()
	if err != nil {
		return nil, fmt.Errorf("member %d: %w", i, err)
	}
	m.r, m.role = r, r.RoleName()
	return m, nil
}

// stopOnErrorGiven reports whether opts include WithStopOnError.
func stopOnErrorGiven(opts []Option) bool {
	var probe config
	for _, o := range opts {
		o(&probe)
	}
	return probe.stopOnErrorSet
}

func (m *member) newRunner() (*Runner, error) {
	a := m.spec.Agent
	if m.spec.New != nil {
		var err error
		if a, err = m.spec.New(); err != nil {
			return nil, err
		}
		if a == nil {
			return nil, fmt.Errorf("%w: New returned a nil agent", ErrBadOption)
		}
		if m.role != "" && a.RoleName() != m.role {
			return nil, fmt.Errorf("%w: New made an agent of role %q for member %q", ErrBadOption, a.RoleName(), m.role)
		}
	}
	return New(a, m.spec.Options...)
}

// closeUnstarted closes a runner that never started (its OnClose runs, its
// idle strategy and counters are released).
func (r *Runner) closeUnstarted() { _ = r.CloseContext(context.Background()) }

// Start starts the members in order and returns when each one's OnStart
// has returned. If one fails to start, or ctx ends first, every other
// member is closed, in reverse order (those not started yet are closed
// without starting, so their OnClose runs all the same; one whose OnStart
// is still running is closed when it returns), and Start returns the
// failure; the others are closed each within Close's 5 s. A group starts once; a closed group does not start
// (ErrClosed).
func (g *Group) Start(ctx context.Context) error {
	g.mu.Lock()
	if g.started {
		g.mu.Unlock()
		return ErrAlreadyStarted
	}
	g.started = true
	g.mu.Unlock()
	select {
	case <-g.stop:
		return ErrClosed
	default:
	}
	for i, m := range g.members {
		errc := make(chan error, 1)
		go func() { errc <- m.r.Start() }()
		var err error
		select {
		case err = <-errc:
		case <-ctx.Done():
			go func() { <-errc; m.r.closeUnstarted() }() // closes it once OnStart returns
			err = fmt.Errorf("runner: group start: agent %s did not start in time: %w", m.role, ctx.Err())
		}
		if err != nil {
			// Each within its own close timeout: ctx may be what ended.
			errs := []error{err}
			for j := len(g.members) - 1; j >= 0; j-- {
				if j != i {
					errs = append(errs, g.members[j].r.Close())
				}
			}
			g.stopOnce.Do(func() { close(g.stop) })
			g.finish()
			return errors.Join(errs...)
		}
	}
	for _, m := range g.members {
		g.watchers.Go(func() { g.supervise(m) })
	}
	return nil
}

// supervise waits for m's runner to stop by itself and restarts it, or
// ends the group, as m's policy and the group's options say.
func (g *Group) supervise(m *member) {
	g.mu.Lock()
	r := m.r
	g.mu.Unlock()
	for {
		select {
		case <-r.Done():
		case <-g.stop:
			return
		}
		if r.closeRequested() {
			return // closed by someone: not a failure, nothing to restart
		}
		err := r.Err()
		if err == nil {
			if g.cfg.stopWhenDone {
				g.end(nil)
			}
			return
		}
		for {
			delay, ok := m.mayRestart(time.Now())
			if !ok {
				g.mu.Lock()
				n := m.restarts
				g.mu.Unlock()
				g.end(&memberError{Role: m.role, Restarts: n, Err: err})
				return
			}
			g.mu.Lock()
			n := m.restarts + 1
			g.mu.Unlock()
			slog.Default().LogAttrs(context.Background(), slog.LevelWarn, "duty: restarting agent",
				slog.String("role", m.role), slog.Any("cause", err), slog.Int("restart", n), slog.Duration("backoff", delay))
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-g.stop:
				t.Stop()
				return
			}
			next, nerr := m.newRunner()
			if nerr == nil {
				nerr = next.Start()
			}
			g.mu.Lock()
			m.restarts++
			if m.restartsCounter != nil {
				// A release store (readers in other processes load it with
				// acquire); the supervisor is its single writer, under g.mu
				// so that it never writes a counter freeCounters has freed.
				m.restartsCounter.Set(int64(m.restarts))
			}
			if nerr == nil {
				m.r = next
			}
			g.mu.Unlock()
			if nerr == nil {
				r = next
				select {
				case <-g.stop: // Close or end may have read the old runner
					_ = next.Close()
					return
				default:
				}
				break
			}
			err = nerr // a restart that failed to start counts as a failure
		}
	}
}

// mayRestart records a restart at now if the policy allows one, and
// returns how long to wait before it.
func (m *member) mayRestart(now time.Time) (time.Duration, bool) {
	p := m.spec.Restart
	if p.Max == 0 {
		return 0, false
	}
	m.recent = slices.DeleteFunc(m.recent, func(t time.Time) bool { return now.Sub(t) >= p.Window })
	if len(m.recent) >= p.Max {
		return 0, false
	}
	delay := p.MinBackoff
	for range len(m.recent) {
		delay = min(2*delay, p.MaxBackoff)
	}
	m.recent = append(m.recent, now)
	return delay, true
}

// end stops the group by itself: records why (nil: a member completed),
// closes every member in reverse order and closes Done. Called by a
// supervisor.
func (g *Group) end(err error) {
	first := false
	g.stopOnce.Do(func() {
		first = true
		g.mu.Lock()
		g.err = err
		g.mu.Unlock()
		close(g.stop)
	})
	if !first {
		return
	}
	g.closeMembers(context.Background())
	g.finish()
}

func (g *Group) closeMembers(ctx context.Context) error {
	var errs []error
	for i := len(g.members) - 1; i >= 0; i-- {
		g.mu.Lock()
		r := g.members[i].r
		g.mu.Unlock()
		errs = append(errs, r.CloseContext(ctx))
	}
	return errors.Join(errs...)
}

// Close stops the group: no more restarts, every member closed in reverse
// order (each within ctx; see Runner.CloseContext), Done closed. Members
// never started are closed all the same. Err stays as it was: nil unless
// the group had ended by itself.
func (g *Group) Close(ctx context.Context) error {
	g.stopOnce.Do(func() { close(g.stop) })
	g.watchers.Wait()
	err := g.closeMembers(ctx)
	g.finish()
	return err
}

// Done is closed once the group has stopped: by Close, by itself (Err), or
// after a failed Start.
func (g *Group) Done() <-chan struct{} { return g.done }

// Err returns why the group ended by itself: for a member that failed with
// no restart left, an error naming the member and its restarts that wraps
// ErrGaveUp and the member's error. It is nil
// while the group runs, after Close, and when it ended because a member
// completed (StopWhenDone).
func (g *Group) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}

// Runners returns the members' current runners, in start order.
func (g *Group) Runners() []*Runner {
	g.mu.Lock()
	defer g.mu.Unlock()
	rs := make([]*Runner, len(g.members))
	for i, m := range g.members {
		rs[i] = m.r
	}
	return rs
}

// Runner returns the current runner of role, or nil.
func (g *Group) Runner(role string) *Runner {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range g.members {
		if m.role == role {
			return m.r
		}
	}
	return nil
}

// Restarts returns how many times the member of role was restarted.
func (g *Group) Restarts(role string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range g.members {
		if m.role == role {
			return m.restarts
		}
	}
	return 0
}
