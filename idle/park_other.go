//go:build !linux

package idle

import "time"

func park(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}
