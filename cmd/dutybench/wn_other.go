//go:build !linux

package main

import "time"

// lowTimerSlack does nothing where there is no per-thread timer slack.
func lowTimerSlack() {}

// sleepFor sleeps with the runtime's timer.
func sleepFor(d time.Duration) { time.Sleep(d) }
