package ipc

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/agent"
)

// Keeper is an agent that keeps the heartbeats of files this process
// owns (counters files, error logs, mailbox files whose consumer does not
// drain often, any File), so that other processes see their owner alive
// without the application running a ticker of its own. Run it on a
// runner (a strategy that sleeps until NextDeadline suits it: it has work
// once per period) or in a composite.
//
// Add and Remove may be called from any goroutine; DoWork from the
// agent's one goroutine. A file closed while it is kept is dropped at the
// next beat.
type Keeper struct {
	role   string
	period time.Duration // 0: a quarter of the smallest liveness timeout
	cfg    config

	mu    sync.Mutex              // serialises Add and Remove
	files atomic.Pointer[[]*File] // copy on write: DoWork loads, never locks
	next  int64                   // the agent's: epoch ms of the next beat
}

var _ agent.Agent = (*Keeper)(nil)

// NewKeeper returns a keeper named role that heartbeats its files every
// period; 0 picks a quarter of the smallest liveness timeout of the files
// kept, which is always often enough. Of opts, only WithClock applies.
func NewKeeper(role string, period time.Duration, opts ...Option) (*Keeper, error) {
	if period < 0 {
		return nil, fmt.Errorf("%w: keeper period %v < 0", ErrArgument, period)
	}
	k := &Keeper{role: role, period: period, cfg: newConfig(opts)}
	k.files.Store(&[]*File{})
	return k, nil
}

// Add keeps f's heartbeat, from the next duty cycle on. f must be owned
// by this process (ErrNotOwner otherwise).
func (k *Keeper) Add(f *File) error {
	if !f.IsOwner() {
		return fmt.Errorf("%w: %s: a keeper beats only files this process owns", ErrNotOwner, f.Path())
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	cur := *k.files.Load()
	if !slices.Contains(cur, f) {
		next := append(slices.Clone(cur), f)
		k.files.Store(&next)
	}
	return nil
}

// Remove stops keeping f's heartbeat. Call it before closing a file the
// keeper's runner might beat concurrently; a file closed first is dropped
// at the next beat all the same.
func (k *Keeper) Remove(f *File) {
	k.mu.Lock()
	defer k.mu.Unlock()
	cur := *k.files.Load()
	if i := slices.Index(cur, f); i >= 0 {
		next := slices.Delete(slices.Clone(cur), i, i+1)
		k.files.Store(&next)
	}
}

// RoleName returns the keeper's role.
func (k *Keeper) RoleName() string { return k.role }

// OnStart beats every file at once.
func (k *Keeper) OnStart() error {
	_, err := k.beat(k.cfg.now().UnixMilli())
	return err
}

// DoWork beats every file once per period and returns the number of
// files it beat (0 between beats). The error joins those of the files
// that failed (a truncated file, say); a closed file is dropped without
// an error.
func (k *Keeper) DoWork() (int, error) {
	now := k.cfg.now().UnixMilli()
	if now < k.next {
		return 0, nil
	}
	return k.beat(now)
}

func (k *Keeper) beat(now int64) (int, error) {
	files := *k.files.Load()
	period := k.period
	if period == 0 {
		period = defaultLivenessTimeout / 4
		for _, f := range files {
			period = min(period, f.livenessTimeout()/4)
		}
	}
	var errs []error
	n := 0
	for _, f := range files {
		switch err := f.Heartbeat(now); {
		case err == nil:
			n++
		case errors.Is(err, ErrClosed):
			k.Remove(f)
		default:
			errs = append(errs, err)
		}
	}
	k.next = now + max(period.Milliseconds(), 1)
	return n, errors.Join(errs...)
}

// NextDeadline returns when the keeper beats next, by its clock
// (WithClock); the zero time before its first beat. A sleeping idle
// strategy that asks it (mailbox.WakeConfig.Deadline, dutyfx's "wake")
// sleeps until then instead of polling: the keeper has work once per
// period. Call it from the agent's goroutine, as DoWork.
func (k *Keeper) NextDeadline() time.Time {
	if k.next == 0 {
		return time.Time{}
	}
	return time.UnixMilli(k.next)
}

// OnClose does nothing: the files belong to whoever created them.
func (k *Keeper) OnClose() error { return nil }
