package runner

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hangGuard bounds every wait in these tests: a guard against a hang, never
// a timing assertion.
const hangGuard = 10 * time.Second

// fakeAgent is scriptable: each hook is optional.
type fakeAgent struct {
	role   string
	start  func() error
	work   func(cycle int64) (int, error)
	close  func() error
	starts atomic.Int32
	closes atomic.Int32
	cycles atomic.Int64
	mu     sync.Mutex
	events []string
}

func (a *fakeAgent) RoleName() string { return a.role }

func (a *fakeAgent) OnStart() error {
	a.starts.Add(1)
	a.event("start")
	if a.start != nil {
		return a.start()
	}
	return nil
}

func (a *fakeAgent) DoWork() (int, error) {
	c := a.cycles.Add(1)
	if a.work != nil {
		return a.work(c)
	}
	return 0, nil
}

func (a *fakeAgent) OnClose() error {
	a.closes.Add(1)
	a.event("close")
	if a.close != nil {
		return a.close()
	}
	return nil
}

func (a *fakeAgent) event(e string) {
	a.mu.Lock()
	a.events = append(a.events, e)
	a.mu.Unlock()
}

func (a *fakeAgent) Events() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.events...)
}

// errs collects what an error handler receives.
type errs struct {
	mu   sync.Mutex
	list []error
}

func (e *errs) handle(err error) {
	e.mu.Lock()
	e.list = append(e.list, err)
	e.mu.Unlock()
}

func (e *errs) get() []error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]error(nil), e.list...)
}

func waitDone(t *testing.T, r *Runner) {
	t.Helper()
	select {
	case <-r.Done():
	case <-time.After(hangGuard):
		t.Fatalf("agent %s did not stop", r.RoleName())
	}
}

// waitFor polls cond (a hang guard, not a timing assertion).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, hangGuard, time.Millisecond)
}
