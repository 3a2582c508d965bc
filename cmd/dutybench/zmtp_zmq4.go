//go:build zmq4

package main

// WZ and WZL with go-zeromq/zmq4 at both ends (a PUSH to a PULL; for WZL
// a pair each way); only with -tags zmq4.

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"time"

	"github.com/go-zeromq/zmq4"
)

func zmq4Variants(w string) []variant {
	switch w {
	case "wz":
		return []variant{blocking(std("zmq4", zmq4Stream))}
	case "wzl":
		return []variant{blocking(std("zmq4", zmq4PingPong))}
	}
	return nil
}

// zmq4Push returns a PUSH socket connected to a new PULL socket, with a
// message through.
func zmq4Push() (push, pull zmq4.Socket, err error) {
	ctx := context.Background()
	pull = zmq4.NewPull(ctx)
	if err := pull.Listen("tcp://127.0.0.1:0"); err != nil {
		pull.Close()
		return nil, nil, err
	}
	push = zmq4.NewPush(ctx)
	err = push.Dial("tcp://" + pull.Addr().String())
	if err == nil {
		err = push.Send(zmq4.NewMsg([]byte("hello")))
	}
	if err == nil {
		_, err = pull.Recv()
	}
	if err != nil {
		push.Close()
		pull.Close()
		return nil, nil, fmt.Errorf("dutybench: zmq4: %w", err)
	}
	return push, pull, nil
}

func zmq4Recv(pull zmq4.Socket, c *checker) (zmq4.Msg, error) {
	m, err := pull.Recv()
	if err != nil {
		return m, err
	}
	checkParts(c, m.Frames)
	return m, nil
}

// zmq4End is the transport of a PUSH and a PULL. zmq4's Send keeps the
// slice until written: a copy each.
func zmq4End(push, pull zmq4.Socket) transport {
	return transport{
		send: func(p []byte) error { return push.Send(zmq4.NewMsg(append([]byte(nil), p...))) },
		recv: func(c *checker) (int, error) { _, err := zmq4Recv(pull, c); return 1, err },
	}
}

// settle waits, up to a second, until the goroutines are back to before:
// zmq4's sockets end theirs after Close returns.
func settle(before int) {
	for deadline := time.Now().Add(time.Second); runtime.NumGoroutine() > before && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
}

// zmq4Pairs opens k connected PUSH/PULL pairs for using.
func zmq4Pairs(k int) func() ([][2]zmq4.Socket, func(), error) {
	return func() ([][2]zmq4.Socket, func(), error) {
		before := runtime.NumGoroutine()
		var pairs [][2]zmq4.Socket
		release := func() {
			for _, p := range pairs {
				p[0].Close()
				p[1].Close()
			}
			settle(before)
		}
		for range k {
			push, pull, err := zmq4Push()
			if err != nil {
				release()
				return nil, nil, err
			}
			pairs = append(pairs, [2]zmq4.Socket{push, pull})
		}
		return pairs, release, nil
	}
}

func zmq4Stream(cfg *runConfig) (time.Duration, error) {
	return using(zmq4Pairs(1), func(p [][2]zmq4.Socket) (time.Duration, error) {
		push, pull := p[0][0], p[0][1]
		return transportStream(cfg, zmq4End(push, nil), zmq4End(nil, pull), func() error { return nil }, push, pull)
	})
}

// zmq4PingPong pings on the first pair and echoes on the second.
func zmq4PingPong(cfg *runConfig) (time.Duration, error) {
	return using(zmq4Pairs(2), func(p [][2]zmq4.Socket) (time.Duration, error) {
		pushA, pullB, pushB, pullA := p[0][0], p[0][1], p[1][0], p[1][1]
		return transportPingPong(cfg, zmq4End(pushA, pullA), func(c *checker) error {
			m, err := zmq4Recv(pullB, c)
			if err != nil {
				return err
			}
			return pushB.Send(m)
		}, []io.Closer{pushA, pullA, pushB, pullB}...)
	})
}
