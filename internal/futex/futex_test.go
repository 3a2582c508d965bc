package futex

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// waitReturns runs wait on a goroutine and reports, within a hang guard,
// that it returned.
func waitReturns(t *testing.T, wait func(), then func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	if then != nil {
		then()
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second): // hang guard only
		t.Fatal("the wait never returned")
	}
}

func TestWaitReturnsAtOnceOnAChangedWord(t *testing.T) {
	var w atomic.Uint32
	w.Store(2)
	waitReturns(t, func() { Wait(&w, 1, time.Hour) }, nil)
	waitReturns(t, func() { WaitAny([]*atomic.Uint32{&w, new(atomic.Uint32)}, []uint32{2, 5}, time.Hour) }, nil)
	waitReturns(t, func() { Wait(&w, 2, 0) }, nil)
	waitReturns(t, func() { Wait(&w, 2, time.Millisecond) }, nil)
}

// A waiter is woken by a store and a wake, whichever word of WaitAny it is.
func TestWakeEndsAWait(t *testing.T) {
	for i := range 2 {
		var a, b atomic.Uint32
		a.Store(1)
		b.Store(1)
		words := []*atomic.Uint32{&a, &b}
		waitReturns(t, func() { WaitAny(words, []uint32{1, 1}, time.Hour) }, func() {
			runtime.Gosched()
			time.Sleep(time.Millisecond) // usually asleep by now; correct either way
			words[i].Store(0)
			Wake(words[i], 1)
		})
	}
	var w atomic.Uint32
	w.Store(1)
	waitReturns(t, func() { Wait(&w, 1, time.Hour) }, func() {
		time.Sleep(time.Millisecond)
		w.Store(0)
		Wake(&w, 1)
	})
}
