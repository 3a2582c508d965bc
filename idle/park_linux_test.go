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

// TestShortParksKeepTheP: parks shorter than parkKeepsP are raw
// nanosleeps, those up to parkGivesP system calls the runtime sees, the
// rest time.Sleep; and a raw park sleeps about as long as asked.
func TestShortParksKeepTheP(t *testing.T) {
	for _, c := range []struct {
		d   time.Duration
		way parkWay
	}{
		{-time.Second, parkNot}, {0, parkNot},
		{time.Nanosecond, parkKeepingP}, {time.Microsecond, parkKeepingP}, {parkKeepsP - 1, parkKeepingP},
		{parkKeepsP, parkInSyscall}, {parkGivesP - 1, parkInSyscall},
		{parkGivesP, parkGivingP}, {time.Hour, parkGivingP},
	} {
		require.Equal(t, c.way, wayOf(c.d), "park(%v)", c.d)
	}
	start := time.Now()
	for range 100 {
		park(parkKeepsP / 2)
	}
	require.GreaterOrEqual(t, time.Since(start), 50*(parkKeepsP/2), "a raw park slept less than asked")
}
