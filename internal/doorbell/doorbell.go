// Package doorbell is the sleeping side of package mailbox's wake idle
// strategy (mailbox.NewWakeIdle): an idle strategy that spins a while
// after the last work, then sleeps on the doorbells of the rings it
// drains (futex words in their shared memory, internal/futex) until a
// sender rings one, a deadline comes or a longest sleep passes. What a
// doorbell guards (the ring, its heartbeat, its state) is the caller's,
// through Ring; the protocol that loses no wake-up is written down at
// mailbox.NewWakeIdle.
package doorbell

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/internal/futex"
	"github.com/dutyrt/duty/internal/nanosleep"
)

// Ring is one ring a Sleeper sleeps on.
type Ring interface {
	// Doorbell returns the ring's doorbell word: 1 while its consumer
	// sleeps on it, else 0. Asked at each sleep: the word may move (a
	// mailbox whose Host took its memory away).
	Doorbell() *atomic.Uint32
	// Beat stores the consumer's heartbeat as a drain does: a sleeping
	// consumer still heartbeats.
	Beat()
	// Quiet reports, after the doorbell was set, whether there is nothing
	// for the consumer to see: the ring is empty and open. (A ring that
	// is not empty but has nothing to read, a claim being filled, and a
	// closed ring are never slept on.)
	Quiet() bool
	// Wake wakes a consumer that sleeps on the doorbell.
	Wake()
}

// Config configures a Sleeper; its fields are mailbox.WakeConfig's, with
// the defaults applied.
type Config struct {
	Spins    int
	MaxSleep time.Duration
	Deadline func() time.Time
}

// stallPause is the pause of a consumer whose ring holds a claim being
// filled, or is closed: too short to sleep on, long enough not to burn a
// core while a sender is descheduled. A raw nanosleep (package nanosleep):
// time.Sleep on a locked thread lasts about a millisecond whatever the
// period, and a message behind the claim would wait that long.
const stallPause = 20 * time.Microsecond

// Spinner is what the Sleeper spins with before it sleeps: one pause per
// idle cycle (idle.BusySpin's IdleOnce). The caller passes it, so that
// this package stays below package idle.
type Spinner interface{ IdleOnce() }

// Sleeper is the idle strategy: an idle.Strategy, and Wake for a runner
// that closes. Use it from the consumer's goroutine, one per agent.
type Sleeper struct {
	cfg   Config
	rings []Ring
	bells []*atomic.Uint32 // the doorbells, asked afresh at each sleep
	ones  []uint32
	spin  Spinner
	count int
}

// New returns a Sleeper over rings with cfg (its Spins and MaxSleep
// positive), spinning with spin.
func New(cfg Config, rings []Ring, spin Spinner) *Sleeper {
	s := &Sleeper{cfg: cfg, rings: rings, spin: spin}
	s.bells = make([]*atomic.Uint32, len(rings))
	s.ones = make([]uint32, len(rings))
	for i := range s.ones {
		s.ones[i] = 1
	}
	return s
}

// Idle is idle.Strategy's: work resets the spins; none idles once.
func (s *Sleeper) Idle(workCount int) {
	if workCount > 0 {
		s.count = 0
		return
	}
	s.IdleOnce()
}

// IdleOnce spins while the spins last, and then sleeps.
func (s *Sleeper) IdleOnce() {
	if s.count < s.cfg.Spins {
		s.count++
		s.spin.IdleOnce()
		return
	}
	s.sleep()
}

// sleep is one sleep of the consumer: the heartbeat, the doorbells set,
// the rings checked, and a futex wait on the doorbells if all are quiet.
func (s *Sleeper) sleep() {
	for i, r := range s.rings {
		r.Beat()
		s.bells[i] = r.Doorbell()
		s.bells[i].Store(1)
	}
	quiet := true
	for _, r := range s.rings {
		if !r.Quiet() {
			quiet = false
			break
		}
	}
	if quiet {
		d := s.cfg.MaxSleep
		if s.cfg.Deadline != nil {
			if at := s.cfg.Deadline(); !at.IsZero() {
				d = min(d, time.Until(at))
			}
		}
		futex.WaitAny(s.bells, s.ones, d)
	}
	for _, b := range s.bells {
		b.Store(0)
	}
	if !quiet {
		nanosleep.Sleep(stallPause)
	}
}

// Reset is idle.Strategy's: the spins start again.
func (s *Sleeper) Reset() { s.count = 0 }

// Wake ends a sleep now, from any goroutine: a runner that is closed wakes
// its agent's strategy this way (its duty loop then sees the close).
func (s *Sleeper) Wake() {
	for _, r := range s.rings {
		r.Wake()
	}
}

// Alias is idle.Strategy's: "wake".
func (s *Sleeper) Alias() string { return "wake" }

func (s *Sleeper) String() string { return fmt.Sprintf("wake:%d:%v", s.cfg.Spins, s.cfg.MaxSleep) }
