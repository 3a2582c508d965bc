//go:build !amd64

package ticks

// Without an x86 time-stamp counter, Now reads the monotonic clock.
const useTSC = false

func rdtsc() int64 { panic("ticks: no TSC") }
