package zmtpwire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// A DeadlineReader reads from C, with a read deadline of Timeout from
// each read when Timeout is positive: the heartbeat's dead-peer detection
// (ErrPeerTimeout). An Interrupt sets a deadline in the past, under mu,
// so that a read setting its own deadline cannot undo it; a read that
// fails on a deadline while an interrupt is set returns ErrInterrupted,
// not ErrPeerTimeout: the read side changes hands (package zmtp's
// handover.go), or a receiver's context ended, and a Decoder over it
// rewinds to the start of the message. C and Timeout are set before the
// first read.
type DeadlineReader struct {
	C       net.Conn
	Timeout time.Duration
	mu      sync.Mutex
	intr    atomic.Bool
}

func (r *DeadlineReader) Read(b []byte) (int, error) {
	if r.Timeout > 0 {
		r.mu.Lock()
		if r.intr.Load() {
			r.mu.Unlock()
			return 0, ErrInterrupted
		}
		_ = r.C.SetReadDeadline(time.Now().Add(r.Timeout))
		r.mu.Unlock()
	} else if r.intr.Load() {
		// Without heartbeats no read sets a deadline: the interrupt's
		// stays until Clear, and a read started after it fails at once.
		return 0, ErrInterrupted
	}
	n, err := r.C.Read(b)
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			if r.intr.Load() {
				return n, ErrInterrupted
			}
			err = fmt.Errorf("%w: nothing for %v", ErrPeerTimeout, r.Timeout)
		}
	}
	return n, err
}

// longAgo is a deadline in the past: it ends a blocked read or write at
// once.
var longAgo = time.Unix(1, 0)

// Interrupt makes the current or next read return ErrInterrupted.
func (r *DeadlineReader) Interrupt() {
	r.mu.Lock()
	if !r.intr.Load() {
		r.intr.Store(true)
		_ = r.C.SetReadDeadline(longAgo)
	}
	r.mu.Unlock()
}

// Clear undoes an Interrupt once its read returned ErrInterrupted.
func (r *DeadlineReader) Clear() {
	r.mu.Lock()
	if r.intr.Load() {
		r.intr.Store(false)
		_ = r.C.SetReadDeadline(time.Time{})
	}
	r.mu.Unlock()
}

// A WriteWatch ends a write to a connection when a context ends: a write
// deadline in the past, unless the write finished first.
type WriteWatch struct {
	c        net.Conn
	stop     func() bool
	mu       sync.Mutex
	finished bool
	fired    bool
}

// WatchWrite starts watching ctx for a write to c; the writer calls
// Finish when the write returns.
func WatchWrite(ctx context.Context, c net.Conn) *WriteWatch {
	w := &WriteWatch{c: c}
	w.stop = context.AfterFunc(ctx, w.interrupt)
	return w
}

func (w *WriteWatch) interrupt() {
	w.mu.Lock()
	if !w.finished {
		w.fired = true
		_ = w.c.SetWriteDeadline(longAgo)
	}
	w.mu.Unlock()
}

// Finish ends the watch; a deadline set after a write that succeeded (ok)
// is undone.
func (w *WriteWatch) Finish(ok bool) {
	w.stop()
	w.mu.Lock()
	w.finished = true
	if w.fired && ok {
		_ = w.c.SetWriteDeadline(time.Time{})
	}
	w.mu.Unlock()
}
