package runner

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/dutyrt/duty/idle"
)

// idleOwners holds every idle strategy given to a runner that has not
// stopped, with that runner's role. Strategies keep state (Backoff's
// phase, counters) written on every idle step without synchronisation:
// two runners sharing one would race on it.
var idleOwners sync.Map

// claimIdle records that role's runner uses s, or refuses s with an error
// wrapping ErrBadOption if a runner that has not stopped uses it already.
// Only pointers are claimed: a strategy of another kind is copied into
// each runner's interface value, so two runners never share it (and two
// equal values are not the same strategy).
func claimIdle(s idle.Strategy, role string) error {
	if reflect.TypeOf(s).Kind() != reflect.Pointer {
		return nil
	}
	if owner, taken := idleOwners.LoadOrStore(s, role); taken {
		return fmt.Errorf("agent %s: %w: idle strategy %s is in use by runner %s; give each runner its own (idle.Parse(s.String()) makes one like it)",
			role, ErrBadOption, s, owner)
	}
	return nil
}

// releaseIdle makes s free for another runner, when its runner has
// stopped.
func releaseIdle(s idle.Strategy) {
	if reflect.TypeOf(s).Kind() == reflect.Pointer {
		idleOwners.Delete(s)
	}
}
