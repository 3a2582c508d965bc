package idle

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Parse builds a fresh strategy from a spec:
//
//	noop                      NoOp()
//	spin[:HINTS]              BusySpin(), or NewBusySpin(HINTS)
//	yield                     Yielding()
//	sleep-ns[:PERIOD]         Sleeping(PERIOD), default 1µs
//	sleep-ms[:MS]             Sleeping(MS milliseconds), default 1
//	backoff                   Backoff() (Agrona's defaults)
//	backoff:S:Y:MIN:MAX       NewBackoff(S spins, Y yields, parks MIN..MAX)
//
// PERIOD, MIN and MAX are a Go duration ("2us", "1µs", "1ms") or an integer
// number of nanoseconds ("2000"). MS is an integer number of milliseconds.
// Surrounding white space is ignored. Any other spec, including
// "controllable" (its status word has no textual form; use Controllable),
// gives an error wrapping ErrBadSpec that quotes the spec.
//
// Every call returns a new instance, so one spec can configure many agents.
// The String method of each returned strategy yields a spec that Parse maps
// back to an equivalent strategy.
func Parse(spec string) (Strategy, error) {
	s := strings.TrimSpace(spec)
	name, args, hasArgs := strings.Cut(s, ":")
	var parts []string
	if hasArgs {
		parts = strings.Split(args, ":")
	}
	bad := func(why string) error {
		return fmt.Errorf("%w %q: %s", ErrBadSpec, spec, why)
	}
	noArgs := func(st Strategy) (Strategy, error) {
		if hasArgs {
			return nil, bad(name + " takes no parameters")
		}
		return st, nil
	}
	switch name {
	case aliasNoOp:
		return noArgs(NoOp())
	case aliasBusySpin:
		if !hasArgs {
			return BusySpin(), nil
		}
		if len(parts) != 1 {
			return nil, bad("want spin:HINTS")
		}
		n, err := strconv.Atoi(parts[0])
		if err != nil {
			return nil, bad("want an integer number of spin hints")
		}
		st, err := NewBusySpin(n)
		if err != nil {
			return nil, fmt.Errorf("%w (spec %q)", err, spec)
		}
		return st, nil
	case aliasYielding:
		return noArgs(Yielding())
	case aliasSleepingNs:
		if !hasArgs {
			return Sleeping(defaultSleepPeriod), nil
		}
		if len(parts) != 1 {
			return nil, bad("want sleep-ns:PERIOD")
		}
		d, err := parseDuration(parts[0])
		if err != nil {
			return nil, bad(err.Error())
		}
		if d < 0 {
			return nil, bad("negative period")
		}
		return Sleeping(d), nil
	case aliasSleepingMs:
		if !hasArgs {
			return sleepingMillis(1), nil
		}
		if len(parts) != 1 {
			return nil, bad("want sleep-ms:MILLISECONDS")
		}
		ms, err := strconv.ParseInt(parts[0], 10, 64)
		if err != nil || ms < 0 || ms > maxMillis {
			return nil, bad("want a non-negative integer number of milliseconds")
		}
		return sleepingMillis(int(ms)), nil
	case aliasBackoff:
		if !hasArgs {
			return Backoff(), nil
		}
		if len(parts) != 4 {
			return nil, bad("want backoff:MAXSPINS:MAXYIELDS:MINPARK:MAXPARK")
		}
		spins, err1 := strconv.ParseInt(parts[0], 10, 64)
		yields, err2 := strconv.ParseInt(parts[1], 10, 64)
		if err1 != nil || err2 != nil {
			return nil, bad("spins and yields must be integers")
		}
		minPark, err := parseDuration(parts[2])
		if err != nil {
			return nil, bad(err.Error())
		}
		maxPark, err := parseDuration(parts[3])
		if err != nil {
			return nil, bad(err.Error())
		}
		b, err := NewBackoff(BackoffConfig{MaxSpins: spins, MaxYields: yields, MinPark: minPark, MaxPark: maxPark})
		if err != nil {
			return nil, fmt.Errorf("%w (spec %q)", err, spec)
		}
		return b, nil
	case aliasControllable:
		return nil, bad("controllable needs a status word: use idle.Controllable")
	}
	return nil, bad("unknown strategy; want one of noop, spin, yield, sleep-ns, sleep-ms, backoff")
}

// parseDuration accepts a Go duration or an integer number of nanoseconds.
func parseDuration(s string) (time.Duration, error) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Duration(n), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("bad duration %q", s)
	}
	return d, nil
}
