package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/dutyrt/duty/internal/sentinel"
)

// Errors of the composites and the invoker.
var (
	// ErrArgument: a constructor, option or request was given an argument
	// it refuses (no agents, a nil agent, a member value that is not
	// comparable, a nil clock, an agent added twice or removed while not
	// a member); the wrapping error says which.
	ErrArgument = errors.New("agent: invalid argument")
	ErrClosed   = sentinel.Closed("agent: closed")
	// ErrAborted completes a DynamicComposite request whose application a
	// member callback cut short by a panic or runtime.Goexit.
	ErrAborted = errors.New("agent: request aborted by a panicking member callback")
)

// composite is the agent NewComposite returns.
type composite struct {
	agents []Agent
	role   string
	next   int
}

// NewComposite runs a fixed group of agents as one agent, on one thread, in
// the order given (Agrona's CompositeAgent).
//
//   - RoleName is "[role1,role2,...]".
//   - OnStart and OnClose call every member in order even when some fail,
//     and return the failures joined with errors.Join. A member whose
//     OnClose panics (or calls runtime.Goexit) does not keep the members
//     after it from being closed: they are closed as the panic goes on to
//     the driver (their errors are then dropped). A panic in a member's
//     OnStart leaves the members after it unstarted; OnClose closes them
//     all the same, as the agent contract allows.
//   - DoWork calls each member's DoWork once and returns the sum of the
//     positive work counts. If member k fails, DoWork returns at once with
//     the sum so far and the error, and the next DoWork resumes at member
//     k+1: a member that keeps failing cannot starve those after it. A
//     termination error from any member stops the whole composite.
//
// The composite is driven from one goroutine, like any agent. It is also
// ContextAware: its BindContext passes the context to every member that
// is. NewComposite fails with an error wrapping ErrArgument for an empty
// list or a nil member.
func NewComposite(agents ...Agent) (Agent, error) {
	if len(agents) == 0 {
		return nil, fmt.Errorf("%w: a composite needs at least one agent", ErrArgument)
	}
	for i, a := range agents {
		if a == nil {
			return nil, fmt.Errorf("%w: nil agent at index %d", ErrArgument, i)
		}
	}
	return &composite{agents: append([]Agent(nil), agents...), role: compositeRole(agents)}, nil
}

func compositeRole(agents []Agent) string {
	var b strings.Builder
	b.WriteByte('[')
	for i, a := range agents {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(a.RoleName())
	}
	b.WriteByte(']')
	return b.String()
}

// RoleName returns "[role1,role2,...]".
func (c *composite) RoleName() string { return c.role }

// Agents returns the members, in order (a copy): for whoever configures
// the thread by what its agents are (dutyfx's "wake" idle strategy finds
// their mailboxes through it).
func (c *composite) Agents() []Agent { return append([]Agent(nil), c.agents...) }

// BindContext passes ctx to every member that is ContextAware.
func (c *composite) BindContext(ctx context.Context) { bindAll(ctx, c.agents) }

// OnStart starts every member, in order, and joins their errors.
func (c *composite) OnStart() error { return startAll(c.agents) }

// OnClose closes every member, in order, and joins their errors.
func (c *composite) OnClose() error { return closeAll(c.agents) }

// DoWork runs one duty cycle of every member (see NewComposite).
func (c *composite) DoWork() (int, error) { return doWorkFrom(c.agents, &c.next) }

func doWorkFrom(agents []Agent, next *int) (int, error) {
	sum := 0
	for *next < len(agents) {
		a := agents[*next]
		*next++
		n, err := a.DoWork()
		if n > 0 {
			sum += n
		}
		if err != nil {
			return sum, err
		}
	}
	*next = 0
	return sum, nil
}

func bindAll(ctx context.Context, agents []Agent) {
	for _, a := range agents {
		if ca, ok := a.(ContextAware); ok {
			ca.BindContext(ctx)
		}
	}
}

func startAll(agents []Agent) error {
	var errs []error
	for _, a := range agents {
		if err := a.OnStart(); err != nil {
			errs = append(errs, fmt.Errorf("%s: OnStart: %w", a.RoleName(), err))
		}
	}
	return errors.Join(errs...)
}

// closeAll closes every member, in order. A member whose OnClose panics (or
// calls runtime.Goexit) does not keep the ones after it from being closed:
// they are closed while the panic unwinds, their errors dropped, and the
// panic goes on to the driver.
func closeAll(agents []Agent) error {
	var errs []error
	i := 0
	defer func() {
		if i < len(agents) { // agents[i].OnClose did not return
			_ = closeAll(agents[i+1:])
		}
	}()
	for ; i < len(agents); i++ {
		a := agents[i]
		if err := a.OnClose(); err != nil {
			errs = append(errs, fmt.Errorf("%s: OnClose: %w", a.RoleName(), err))
		}
	}
	return errors.Join(errs...)
}
