package nanosleep

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Sleep sleeps about as long as asked (a signal may cut one sleep short,
// so the bound is half the total), and not at all for a period <= 0.
func TestSleepSleeps(t *testing.T) {
	const d, n = 30 * time.Microsecond, 100
	start := time.Now()
	for range n {
		Sleep(d)
	}
	require.GreaterOrEqual(t, time.Since(start), n*d/2)
	Sleep(0)
	Sleep(-time.Hour) // returns
}

// A garbage collection completes while goroutines locked to their threads
// sleep in a loop on every P: a sleeper holds its P, but the runtime's
// preemption reaches it at its next call (the collector's goroutine waits
// for a P until then: the cost docs/idle.md states).
func TestSleepersDoNotBlockTheCollector(t *testing.T) {
	stop := make(chan struct{})
	done := make(chan struct{})
	for range runtime.GOMAXPROCS(0) {
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			defer func() { done <- struct{}{} }()
			for {
				select {
				case <-stop:
					return
				default:
					Sleep(20 * time.Microsecond)
				}
			}
		}()
	}
	collected := make(chan struct{})
	go func() {
		defer close(collected)
		for range 5 {
			runtime.GC()
		}
	}()
	select {
	case <-collected:
	case <-time.After(time.Minute): // a hang guard, not a timing assertion
		t.Error("the collections did not complete while sleepers held every P")
	}
	close(stop)
	for range runtime.GOMAXPROCS(0) {
		<-done
	}
}

func ExampleSleep() {
	Sleep(20 * time.Microsecond) // a pause that keeps the thread's P
}

// A sleep allocates nothing: idle strategies park on hot idle paths.
func TestSleepAllocatesNothing(t *testing.T) {
	require.Zero(t, testing.AllocsPerRun(100, func() { Sleep(time.Microsecond) }))
}
