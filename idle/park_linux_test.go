//go:build linux

package idle

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestParkGivesThePBackForLongParks: parks of parkGivesP or more go
// through time.Sleep (which hands the thread's P to other goroutines at
// once), shorter ones through nanosleep.
func TestParkGivesThePBackForLongParks(t *testing.T) {
	var slept []time.Duration
	sleepFn = func(d time.Duration) { slept = append(slept, d) }
	t.Cleanup(func() { sleepFn = time.Sleep })

	park(parkGivesP)
	park(3 * parkGivesP)
	park(parkGivesP / 4) // nanosleep
	park(0)
	park(-time.Second)
	require.Equal(t, []time.Duration{parkGivesP, 3 * parkGivesP}, slept)
}
