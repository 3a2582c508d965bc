//go:build !linux

package runner

import "errors"

const maxCPU = 1024

// gettid is unavailable: Close from the agent's own goroutine (or from
// OnClose or the error handler while a never-started agent is closed) is
// not detected off Linux (it then waits for its timeout).
func gettid() int { return -1 }

func threadName(name string) string { return name }

func setupThread(c *config) error {
	if len(c.cpus) > 0 || c.timerSlack > 0 {
		return errors.ErrUnsupported
	}
	return nil
}
