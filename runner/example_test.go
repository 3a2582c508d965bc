package runner_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/runner"
)

// ticker does one unit of work per cycle until it reaches its limit.
type ticker struct {
	role  string
	n     int
	limit int
}

func (t *ticker) RoleName() string { return t.role }
func (t *ticker) OnStart() error   { return nil }
func (t *ticker) OnClose() error   { fmt.Println("closed", t.role); return nil }
func (t *ticker) DoWork() (int, error) {
	if t.n == t.limit {
		return 0, agent.ErrDone
	}
	t.n++
	return 1, nil
}

func Example() {
	r, err := runner.New(&ticker{role: "ticker", limit: 1000}, runner.WithIdle(idle.Backoff()))
	if err != nil {
		panic(err)
	}
	if err := r.Start(); err != nil {
		panic(err)
	}
	<-r.Done() // the agent stops itself with agent.ErrDone
	st := r.Stats()
	fmt.Println(st.Role, st.DutyCycles, st.TotalWork, st.IdleCycles, r.Err())
	fmt.Println(r.Close())
	// Output:
	// closed ticker
	// ticker 1001 1000 1 <nil>
	// <nil>
}

// An agent that panics is reported as a *runner.PanicError; with the
// default (WithStopOnPanic(true)) it is stopped, and its OnClose still runs.
func ExampleWithStopOnPanic() {
	a := &panicky{}
	r, _ := runner.New(a, runner.WithErrorHandler(func(err error) {
		var pe *runner.PanicError
		if errors.As(err, &pe) {
			fmt.Println("panic:", pe.Value)
		}
	}))
	_ = r.Start()
	<-r.Done()
	fmt.Println("closed:", a.closed)
	// Output:
	// panic: oops
	// closed: true
}

type panicky struct{ closed bool }

func (p *panicky) RoleName() string     { return "panicky" }
func (p *panicky) OnStart() error       { return nil }
func (p *panicky) OnClose() error       { p.closed = true; return nil }
func (p *panicky) DoWork() (int, error) { panic("oops") }

// A group starts its members in order, restarts one that fails by its
// policy, and closes them in reverse order.
func ExampleGroup() {
	attempts := 0
	g, err := runner.NewGroup([]runner.Member{
		{Agent: &ticker{role: "first", limit: -1}},
		{
			// Fails on its first two runs; a fresh agent each time.
			New: func() (agent.Agent, error) {
				attempts++
				return &flaky{fail: attempts <= 2}, nil
			},
			Options: []runner.Option{runner.WithErrorHandler(func(error) {})},
			Restart: runner.RestartPolicy{Max: 5, MinBackoff: time.Millisecond},
		},
	})
	if err != nil {
		panic(err)
	}
	if err := g.Start(context.Background()); err != nil {
		panic(err)
	}
	for g.Restarts("flaky") < 2 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("restarts:", g.Restarts("flaky"))
	fmt.Println(g.Close(context.Background()), g.Err())
	// Output:
	// restarts: 2
	// closed first
	// <nil> <nil>
}

type flaky struct{ fail bool }

func (f *flaky) RoleName() string { return "flaky" }
func (f *flaky) OnStart() error   { return nil }
func (f *flaky) OnClose() error   { return nil }
func (f *flaky) DoWork() (int, error) {
	if f.fail {
		return 0, agent.ErrTerminated
	}
	return 0, nil
}

// timeout is an agent that reads the time from a cached clock its runner
// keeps up to date, and stops itself once its deadline has passed.
type timeout struct {
	clk      *clock.Cached
	deadline int64
	cycles   int
}

func (a *timeout) RoleName() string { return "timeout" }
func (a *timeout) OnStart() error {
	a.deadline = a.clk.Nanos() + int64(5*time.Millisecond) // the clock is set before OnStart
	return nil
}
func (a *timeout) OnClose() error { return nil }
func (a *timeout) DoWork() (int, error) {
	a.cycles++
	if a.clk.Nanos() >= a.deadline { // one load, no system call
		return 0, agent.ErrDone
	}
	return 0, nil
}

// The runner sets the cached clock to clock.System's time before OnStart
// and before every DoWork.
func ExampleWithCachedClock() {
	c := new(clock.Cached)
	a := &timeout{clk: c}
	r, err := runner.New(a, runner.WithCachedClock(c), runner.WithIdle(idle.Sleeping(100*time.Microsecond)))
	if err != nil {
		panic(err)
	}
	start := clock.System.Nanos()
	if err := r.Start(); err != nil {
		panic(err)
	}
	<-r.Done()
	fmt.Println("stopped after 5 ms:", clock.System.Nanos()-start >= int64(5*time.Millisecond), "in several cycles:", a.cycles > 1)
	// Output: stopped after 5 ms: true in several cycles: true
}
