package idle

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Parking and yielding on a locked thread, with Linux's timer slack
// (prctl) and raw nanosleep(2): Linux only.

// onLockedThread runs f on a new goroutine locked to its own OS thread, with
// the given timer slack (0: leave the default), and waits for it. The
// thread is never unlocked, so it ends with the goroutine.
func onLockedThread(b *testing.B, slack time.Duration, f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		if slack > 0 {
			if err := unix.Prctl(unix.PR_SET_TIMERSLACK, uintptr(slack), 0, 0, 0); err != nil {
				b.Error(err)
				return
			}
		}
		f()
	}()
	<-done
}

// BenchmarkPark measures what parking really costs on a locked thread: the
// time per sleep (ns/op) of time.Sleep, of park (a raw nanosleep(2) below
// parkKeepsP) and of nanosleep(2) as a system call the runtime sees, for
// requested periods from 1 µs to 1 ms, under the default 50 µs timer slack
// and under a 1 ns slack. One thread alone: what the runtime's monitor
// does to the other threads of a busy process does not show here. Reproduce the figures in docs/idle.md with
//
//	go test -run '^$' -bench BenchmarkPark -benchtime 2000x -count 3 ./idle/
func BenchmarkPark(b *testing.B) {
	for _, slack := range []time.Duration{0, time.Nanosecond} {
		for _, d := range []time.Duration{time.Microsecond, 10 * time.Microsecond, 100 * time.Microsecond, time.Millisecond} {
			for _, m := range []struct {
				name string
				f    func(time.Duration)
			}{{"sleep", time.Sleep}, {"park", park}, {"syscallnanosleep", syscallNanosleep}} {
				sl := "default"
				if slack > 0 {
					sl = slack.String()
				}
				b.Run(fmt.Sprintf("slack=%s/d=%v/%s", sl, d, m.name), func(b *testing.B) {
					onLockedThread(b, slack, func() {
						b.ResetTimer()
						for range b.N {
							m.f(d)
						}
					})
				})
			}
		}
	}
}

// syscallNanosleep is nanosleep(2) as a system call the runtime sees
// (entersyscall): park's way from parkKeepsP to parkGivesP, here at every
// period for comparison.
func syscallNanosleep(d time.Duration) {
	ts := unix.NsecToTimespec(int64(d))
	_ = unix.Nanosleep(&ts, nil)
}

// BenchmarkYield compares runtime.Gosched with sched_yield(2) on a locked
// thread (the idle machine case: nothing else to run).
//
//	go test -run '^$' -bench BenchmarkYield -count 3 ./idle/
func BenchmarkYield(b *testing.B) {
	b.Run("gosched", func(b *testing.B) {
		onLockedThread(b, 0, func() {
			b.ResetTimer()
			for range b.N {
				runtime.Gosched()
			}
		})
	})
	b.Run("sched_yield", func(b *testing.B) {
		onLockedThread(b, 0, func() {
			b.ResetTimer()
			for range b.N {
				osYield()
			}
		})
	})
}
