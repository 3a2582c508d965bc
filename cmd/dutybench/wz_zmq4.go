//go:build zmq4

package main

// WZ and WZL with go-zeromq/zmq4 at both ends (a PUSH to a PULL; for WZL
// a pair each way), the independent pure-Go implementation of ZMTP that
// duty's zmtp package is compared with. Built only with -tags zmq4: zmq4
// is a dependency of tests, and the default build of dutybench does not
// link it.

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/go-zeromq/zmq4"
)

func init() {
	wz.variants = append(wz.variants, variant{name: "zmq4", run: wzZmq4, goroutines: true})
	wzl.variants = append(wzl.variants, variant{name: "zmq4", run: wzlZmq4, goroutines: true})
}

// zmq4Push returns a PUSH socket connected to a new PULL socket, with one
// message through.
func zmq4Push() (push, pull zmq4.Socket, err error) {
	ctx := context.Background()
	pull = zmq4.NewPull(ctx)
	if err := pull.Listen("tcp://127.0.0.1:0"); err != nil {
		pull.Close()
		return nil, nil, err
	}
	push = zmq4.NewPush(ctx)
	fail := func(err error) (zmq4.Socket, zmq4.Socket, error) {
		push.Close()
		pull.Close()
		return nil, nil, fmt.Errorf("dutybench: zmq4: %w", err)
	}
	if err := push.Dial("tcp://" + pull.Addr().String()); err != nil {
		return fail(err)
	}
	if err := push.Send(zmq4.NewMsg([]byte("hello"))); err != nil {
		return fail(err)
	}
	if _, err := pull.Recv(); err != nil {
		return fail(err)
	}
	return push, pull, nil
}

// zmq4Check checks a received zmq4 message: one frame, the payload.
func zmq4Check(c *checker, m zmq4.Msg) {
	if len(m.Frames) != 1 {
		c.mismatch(fmt.Sprintf("message %d: %d frames, want 1", c.received+1, len(m.Frames)))
		c.received++
		return
	}
	c.check(msgTypeID, m.Frames[0])
}

// settle waits, up to a second, until the goroutines are back to before:
// zmq4's sockets end theirs after Close returns, and those must not run
// into the next variant's repetition.
func settle(before int) {
	for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

func wzZmq4(cfg *runConfig) (time.Duration, error) {
	defer settle(runtime.NumGoroutine())
	push, pull, err := zmq4Push()
	if err != nil {
		return 0, err
	}
	defer pull.Close()
	defer push.Close()
	t := newTeam(placement{})
	n, corruptAt := cfg.n, cfg.corruptAt
	closers := []io.Closer{push, pull}
	spawnOrClose(t, 0, closers, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		for i := range n {
			putSeq(&p, seqFor(i, corruptAt))
			// zmq4's Send keeps the slice until written: a copy each.
			if err := push.Send(zmq4.NewMsg(append([]byte(nil), p[:]...))); err != nil {
				return err
			}
		}
		return nil
	})
	c := newChecker(1)
	spawnOrClose(t, 1, closers, func() error {
		for range n {
			m, err := pull.Recv()
			if err != nil {
				return err
			}
			zmq4Check(c, m)
		}
		t.finish()
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

func wzlZmq4(cfg *runConfig) (time.Duration, error) {
	defer settle(runtime.NumGoroutine())
	pushA, pullB, err := zmq4Push()
	if err != nil {
		return 0, err
	}
	defer pullB.Close()
	defer pushA.Close()
	pushB, pullA, err := zmq4Push()
	if err != nil {
		return 0, err
	}
	defer pullA.Close()
	defer pushB.Close()
	t := newTeam(placement{})
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	pc, c := newChecker(1), newChecker(1)
	closers := []io.Closer{pushA, pullA, pushB, pullB}
	spawnOrClose(t, 0, closers, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		clk := newClock()
		last := clk.now()
		for i := range n {
			putSeq(&p, seqFor(i, corruptAt))
			if err := pushA.Send(zmq4.NewMsg(append([]byte(nil), p[:]...))); err != nil {
				return err
			}
			m, err := pullA.Recv()
			if err != nil {
				return err
			}
			zmq4Check(pc, m)
			now := clk.now()
			lat[i] = now - last
			last = now
		}
		t.finish()
		return pc.finish([]int{n})
	})
	spawnOrClose(t, 1, closers, func() error {
		for range n {
			m, err := pullB.Recv()
			if err != nil {
				return err
			}
			zmq4Check(c, m)
			if err := pushB.Send(m); err != nil {
				return err
			}
		}
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}
