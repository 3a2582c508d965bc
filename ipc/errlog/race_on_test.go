//go:build race

package errlog

// raceEnabled: under -race, sync.Pool drops items at random, so fmt's
// Sprintf allocates a varying number of times.
const raceEnabled = true
