package runner

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	// Imported under another name: this package has a type counters.
	ipccounters "github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/internal/countertype"
)

// StatsCounters mirrors one Runner's statistics into five counters of a
// counters.Manager (normally the owner's Manager of an ipc counters file),
// so that other processes, cmd/dutystat among them, can watch the runner:
//
//	label                     type id                      value
//	duty-cycles: <role>       countertype.DutyCycles      Stats.DutyCycles
//	total-work: <role>        countertype.TotalWork       Stats.TotalWork
//	errors: <role>            countertype.Errors          Stats.Errors
//	longest-cycle-ns: <role>  countertype.LongestCycleNs  Stats.MaxCycle in ns
//	idle-cycles: <role>       countertype.IdleCycles      Stats.IdleCycles
//
// (the label conventions of docs/counters.md; no key).
//
// The duty cycle itself is not touched: Publish copies a Stats snapshot
// (lock-free atomic loads) into the counters with five release stores,
// from whichever goroutine calls it, so a running agent pays nothing for
// being watched. The counters therefore lag the runner by the publishing
// interval; call Publish from a housekeeping loop or agent (one that also
// beats heartbeats, say) every interval. After the runner's Done is closed, one more
// Publish (Close does it) makes the counters final and exact.
//
// Publish and Close are safe for concurrent use (a mutex makes the
// goroutine holding it the counters' single writer). Publish after Close
// does nothing: the freed ids may already belong to other counters.
type StatsCounters struct {
	r *Runner

	mu       sync.Mutex
	closed   bool
	cycles   *ipccounters.Counter
	work     *ipccounters.Counter
	errs     *ipccounters.Counter
	maxCycle *ipccounters.Counter
	idle     *ipccounters.Counter
}

// NewStatsCounters allocates the five counters of r's statistics from m,
// labelled with r's role, and publishes r's current statistics into them.
// It fails (wrapping ErrBadOption) for a nil manager or runner, and with
// the manager's error (counters.ErrFull, ...) if the five cannot be
// allocated, in which case none stays allocated.
func NewStatsCounters(m *ipccounters.Manager, r *Runner) (*StatsCounters, error) {
	if m == nil || r == nil {
		return nil, fmt.Errorf("%w: nil counters manager or runner", ErrBadOption)
	}
	c, err := allocateStats(m, r.RoleName())
	if err != nil {
		return nil, err
	}
	s := &StatsCounters{r: r, cycles: c[0], work: c[1], errs: c[2], maxCycle: c[3], idle: c[4]}
	s.Publish()
	return s, nil
}

// Publish stores the runner's current statistics in the counters, with
// release stores: a reader that loads a published value also sees every
// value published before it. It allocates nothing and takes an
// uncontended mutex; it never touches the runner's duty cycle.
func (s *StatsCounters) Publish() {
	st := s.r.Stats()
	s.mu.Lock()
	if !s.closed {
		s.cycles.Set(st.DutyCycles)
		s.work.Set(st.TotalWork)
		s.errs.Set(st.Errors)
		s.maxCycle.Set(int64(st.MaxCycle))
		s.idle.Set(st.IdleCycles)
	}
	s.mu.Unlock()
}

// Close publishes one last time and frees the five counters (readers keep
// seeing their last values until the ids are reused, after the manager's
// free-to-reuse timeout). Idempotent; it does not close the runner. Close
// the runner first for final, exact values.
func (s *StatsCounters) Close() error {
	s.Publish()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return errors.Join(s.cycles.Close(), s.work.Close(), s.errs.Close(), s.maxCycle.Close(), s.idle.Close())
}

// liveCounters are the shared words a runner built WithCounters keeps up to
// date from its duty cycle (the agent's thread is their single writer,
// except errors, which the loop adds to atomically as Stats does).
type liveCounters struct {
	cycles, work, errors, maxCycle, idle *atomic.Int64
	owned                                [5]*ipccounters.Counter
	once                                 sync.Once
}

func allocateLive(m *ipccounters.Manager, role string) (*liveCounters, error) {
	c, err := allocateStats(m, role)
	if err != nil {
		return nil, err
	}
	return &liveCounters{
		cycles: c[0].Word(), work: c[1].Word(), errors: c[2].Word(), maxCycle: c[3].Word(), idle: c[4].Word(),
		owned: c,
	}, nil
}

// statsCounters are the five counters of a runner's statistics, in the
// order allocateStats returns them, with their label prefixes and types.
var statsCounters = [5]struct {
	name   string
	typeID int32
}{
	{"duty-cycles", countertype.DutyCycles},
	{"total-work", countertype.TotalWork},
	{"errors", countertype.Errors},
	{"longest-cycle-ns", countertype.LongestCycleNs},
	{"idle-cycles", countertype.IdleCycles},
}

// allocateStats allocates the five statistics counters of the agent role
// from m: all of them, or (with the manager's error) none.
func allocateStats(m *ipccounters.Manager, role string) ([5]*ipccounters.Counter, error) {
	var out [5]*ipccounters.Counter
	for i, sc := range statsCounters {
		c, err := m.Allocate(sc.name+": "+role, sc.typeID, nil)
		if err != nil {
			errs := []error{fmt.Errorf("runner: agent %s: allocating its %s counter: %w", role, sc.name, err)}
			for _, done := range out[:i] {
				errs = append(errs, done.Close())
			}
			return out, errors.Join(errs...)
		}
		out[i] = c
	}
	return out, nil
}

// free releases the counters once; nil-safe.
func (l *liveCounters) free() {
	if l == nil {
		return
	}
	l.once.Do(func() {
		for _, c := range l.owned {
			_ = c.Close()
		}
	})
}
