package agent_test

import (
	"context"
	"fmt"

	"github.com/dutyrt/duty/agent"
)

// counter counts to a limit, one per duty cycle, then asks to stop.
type counter struct {
	role  string
	n     int
	limit int
}

func (c *counter) RoleName() string { return c.role }
func (c *counter) OnStart() error   { fmt.Println("start", c.role); return nil }
func (c *counter) OnClose() error   { fmt.Println("close", c.role, c.n); return nil }
func (c *counter) DoWork() (int, error) {
	if c.n == c.limit {
		return 0, agent.ErrDone // expected: stop silently
	}
	c.n++
	return 1, nil
}

// An Invoker drives an agent from the caller's own loop: here a test-like
// deterministic loop that stops when the agent terminates.
func ExampleInvoker() {
	inv, err := agent.NewInvoker(&counter{role: "count", limit: 3})
	if err != nil {
		panic(err)
	}
	if err := inv.Start(); err != nil {
		panic(err)
	}
	total := 0
	for inv.IsRunning() {
		n, _ := inv.Invoke()
		total += n
		// A real loop would idle here, for example with an idle.Strategy.
	}
	fmt.Println("work", total, "running", inv.IsRunning())
	// Output:
	// start count
	// close count 3
	// work 3 running false
}

func ExampleNewComposite() {
	c, err := agent.NewComposite(&counter{role: "a", limit: 5}, &counter{role: "b", limit: 5})
	if err != nil {
		panic(err)
	}
	fmt.Println(c.RoleName())
	_ = c.OnStart()
	n, _ := c.DoWork()
	fmt.Println("work", n)
	_ = c.OnClose()
	// Output:
	// [a,b]
	// start a
	// start b
	// work 2
	// close a 1
	// close b 1
}

// Members are added from any goroutine; the change is applied on the
// agent's thread at the start of its next cycle, and the Request tells
// when it is done and what error it met.
func ExampleDynamicComposite() {
	d, err := agent.NewDynamicComposite("workers")
	if err != nil {
		panic(err)
	}
	_ = d.OnStart()
	req, _ := d.Add(&counter{role: "late", limit: 10})
	n, _ := d.DoWork() // normally on the runner's thread
	fmt.Println("added:", req.Wait(context.Background()), "work", n)
	_ = d.OnClose()
	// Output:
	// start late
	// added: <nil> work 1
	// close late 1
}

func ExampleIsTermination() {
	for _, err := range []error{agent.ErrDone, agent.ErrTerminated, fmt.Errorf("read: %w", agent.Terminate(context.Canceled)), context.Canceled} {
		term, expected := agent.IsTermination(err)
		fmt.Println(term, expected)
	}
	// Output:
	// true true
	// true false
	// true false
	// false false
}
