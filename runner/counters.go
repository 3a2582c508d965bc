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
