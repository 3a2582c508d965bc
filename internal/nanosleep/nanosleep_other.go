//go:build !linux

package nanosleep

import "time"

// Sleep is time.Sleep off Linux.
func Sleep(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}
