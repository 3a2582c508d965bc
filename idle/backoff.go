package idle

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/dutyrt/duty/internal/pad"
)

// BackoffConfig holds the limits of a back-off strategy (NewBackoff).
type BackoffConfig struct {
	MaxSpins  int64         // spin hints before yielding (>= 0)
	MaxYields int64         // yields before parking (>= 0)
	MinPark   time.Duration // first park period (> 0)
	MaxPark   time.Duration // park period cap (>= MinPark)
}

// defaultBackoffConfig returns Agrona's defaults: 10 spins, 5 yields, parks
// from 1 µs doubling to 1 ms.
func defaultBackoffConfig() BackoffConfig {
	return BackoffConfig{
		MaxSpins:  defaultMaxSpins,
		MaxYields: defaultMaxYields,
		MinPark:   defaultMinPark,
		MaxPark:   defaultMaxPark,
	}
}

// validate reports whether c is usable, with an error wrapping ErrBadSpec.
func (c BackoffConfig) validate() error {
	switch {
	case c.MaxSpins < 0:
		return fmt.Errorf("%w: backoff max spins %d < 0", ErrBadSpec, c.MaxSpins)
	case c.MaxYields < 0:
		return fmt.Errorf("%w: backoff max yields %d < 0", ErrBadSpec, c.MaxYields)
	case c.MinPark <= 0:
		return fmt.Errorf("%w: backoff min park %v <= 0", ErrBadSpec, c.MinPark)
	case c.MaxPark < c.MinPark:
		return fmt.Errorf("%w: backoff max park %v < min park %v", ErrBadSpec, c.MaxPark, c.MinPark)
	}
	return nil
}

// backoffStrategy spins, then yields, then parks with doubling periods
// (Agrona's BackoffIdleStrategy, alias "backoff").
//
// State machine, counting consecutive idle calls after a Reset (or a cycle
// with work), with the defaults:
//
//	call 1          NOT_IDLE -> SPINNING, no spin hint (transition only)
//	calls 2-11      10 spin hints; the 11th moves to YIELDING
//	calls 12-16     5 yields
//	call 17         YIELDING -> PARKING, no yield (transition only)
//	calls 18-27     park 1, 2, 4, ... 512 µs
//	calls 28-       park 1 ms each
//
// The two transition-only calls are Agrona's (its maintainers declined to
// remove them, PR #291): the strategy always passes through the SPINNING and
// YIELDING states. With MaxSpins 0 it still executes one spin hint; with
// MaxYields 0 it executes no yield (the first call in YIELDING moves on).
//
// The mutable state sits between cache-line pads so that a neighbouring
// object written by another core does not slow the idle loop.
//
// Built by Backoff or NewBackoff: a zero backoffStrategy has a zero park
// period, so it never sleeps (a busy loop), and its String does not parse.
type backoffStrategy struct {
	_ pad.Line

	state  State
	spins  int64
	yields int64
	period time.Duration

	cfg BackoffConfig

	_ pad.Line
}

// ErrBadSpec is wrapped by every error Parse and the validating constructors
// return.
var ErrBadSpec = errors.New("idle: bad strategy spec")

// Backoff returns a back-off strategy with Agrona's defaults: 10 spins,
// 5 yields, then parks from 1 µs doubling to 1 ms.
func Backoff() Strategy { return newBackoff(defaultBackoffConfig()) }

// NewBackoff returns a back-off strategy with the limits in cfg, or an error
// wrapping ErrBadSpec if cfg is invalid.
func NewBackoff(cfg BackoffConfig) (Strategy, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return newBackoff(cfg), nil
}

// newBackoff returns a backoffStrategy with the limits in cfg, valid.
func newBackoff(cfg BackoffConfig) *backoffStrategy {
	b := &backoffStrategy{cfg: cfg}
	b.Reset()
	return b
}

// config returns the strategy's limits.
func (b *backoffStrategy) config() BackoffConfig { return b.cfg }

// Idle resets on workCount > 0, otherwise takes one step (IdleOnce).
func (b *backoffStrategy) Idle(workCount int) {
	if workCount > 0 {
		b.Reset()
		return
	}
	b.IdleOnce()
}

// IdleOnce takes the next step of the state machine.
func (b *backoffStrategy) IdleOnce() {
	switch b.state {
	case StateNotIdle:
		b.state = StateSpinning
		b.spins++
	case StateSpinning:
		doSpin()
		b.spins++
		if b.spins > b.cfg.MaxSpins {
			b.state = StateYielding
			b.yields = 0
		}
	case StateYielding:
		b.yields++
		if b.yields > b.cfg.MaxYields {
			b.state = StateParking
			b.period = b.cfg.MinPark
		} else {
			doYield()
		}
	default: // StateParking
		doPark(b.period)
		if b.period > b.cfg.MaxPark/2 {
			b.period = b.cfg.MaxPark // also guards the doubling against overflow
		} else {
			b.period *= 2
		}
	}
}

// Reset returns to NOT_IDLE: no spins, no yields, park period back to MinPark.
func (b *backoffStrategy) Reset() {
	b.spins = 0
	b.yields = 0
	b.period = b.cfg.MinPark
	b.state = StateNotIdle
}

// State is the current state of the machine.
func (b *backoffStrategy) State() State { return b.state }

// parkPeriod is the period the next park will sleep.
func (b *backoffStrategy) parkPeriod() time.Duration { return b.period }

// Alias returns "backoff".
func (b *backoffStrategy) Alias() string { return aliasBackoff }

// String returns "backoff:<maxSpins>:<maxYields>:<minPark>:<maxPark>".
func (b *backoffStrategy) String() string {
	return aliasBackoff + ":" + strconv.FormatInt(b.cfg.MaxSpins, 10) + ":" +
		strconv.FormatInt(b.cfg.MaxYields, 10) + ":" + b.cfg.MinPark.String() + ":" +
		b.cfg.MaxPark.String()
}
