package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"github.com/dutyrt/duty/zmtp"
)

// WZ and WZL (docs/workloads.md): loopback TCP, both ends in this process,
// plain goroutines (the sockets' own goroutines block on the network).

// transport is one end of a connection: send sends one payload, recv
// receives what has arrived (at least one message), checks it with c and
// returns how many it took.
type transport struct {
	send func(p []byte) error
	recv func(c *checker) (int, error)
}

// transportStream times WZ: a sends, b receives; closers are closed on a
// failure, so that the other side does not block.
func transportStream(cfg *runConfig, a, b transport, flush func() error, closers ...io.Closer) (time.Duration, error) {
	t := newTeam(placement{}, closers...)
	c := newChecker(1)
	return stream(cfg, t, c, func() error {
		return pollUntil(t, c, cfg.n, nil, pollFunc(func() (int, error) { return b.recv(c) }))
	}, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		for i := range cfg.n {
			putSeq(&p, seqFor(i, cfg.corruptAt))
			if err := a.send(p[:]); err != nil {
				return err
			}
		}
		return flush()
	})
}

// transportPingPong times WZL: a pings, b echoes what it receives.
func transportPingPong(cfg *runConfig, a transport, echo func(c *checker) error, closers ...io.Closer) (time.Duration, error) {
	t := newTeam(placement{}, closers...)
	pc, c := newChecker(1), newChecker(1)
	return roundTrips(cfg, t, pc, c, func(p []byte) error {
		if err := a.send(p); err != nil {
			return err
		}
		_, err := a.recv(pc)
		return err
	}, func() error {
		for range cfg.n {
			if err := echo(c); err != nil {
				return err
			}
		}
		return nil
	})
}

func tcpPair() (ends [2]net.Conn, close func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return ends, nil, err
	}
	defer l.Close()
	a, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		return ends, nil, err
	}
	b, err := l.Accept()
	if err != nil {
		a.Close()
		return ends, nil, err
	}
	return [2]net.Conn{a, b}, func() { a.Close(); b.Close() }, nil
}

// framed is length-prefix's transport: each message behind its 4-byte
// big-endian length.
//
//go:noinline // makes a variant's closures: see runFunc
func framed(w io.Writer, r io.Reader) transport {
	var out, in [4 + payloadLen]byte
	binary.BigEndian.PutUint32(out[:4], payloadLen)
	return transport{
		send: func(p []byte) error {
			copy(out[4:], p)
			_, err := w.Write(out[:])
			return err
		},
		recv: func(c *checker) (int, error) {
			if _, err := io.ReadFull(r, in[:]); err != nil {
				return 0, err
			}
			checkFramed(c, in[:])
			return 1, nil
		},
	}
}

func lengthPrefixStream(cfg *runConfig) (time.Duration, error) {
	return using(tcpPair, func(c [2]net.Conn) (time.Duration, error) {
		w := bufio.NewWriterSize(c[0], 64<<10)
		return transportStream(cfg, framed(w, nil), framed(nil, bufio.NewReaderSize(c[1], 64<<10)), w.Flush, c[0], c[1])
	})
}

func lengthPrefixPingPong(cfg *runConfig) (time.Duration, error) {
	return using(tcpPair, func(conn [2]net.Conn) (time.Duration, error) {
		a, b := conn[0], conn[1]
		var buf [4 + payloadLen]byte
		return transportPingPong(cfg, framed(a, a), func(c *checker) error {
			if _, err := io.ReadFull(b, buf[:]); err != nil {
				return err
			}
			checkFramed(c, buf[:])
			_, err := b.Write(buf[:])
			return err
		}, a, b)
	})
}

func checkFramed(c *checker, rec []byte) {
	if size := binary.BigEndian.Uint32(rec[:4]); size != payloadLen {
		c.mismatch(fmt.Sprintf("message %d: a frame of %d bytes, want %d", c.received+1, size, payloadLen))
		c.received++
		return
	}
	c.check(msgTypeID, rec[4:])
}

// zmtpConnected returns a socket of type connect connected to a new one of
// type bind, with a message through (both ways when back). The high-water
// mark is deep enough that the producer rarely waits for room.
func zmtpConnected(connect, bind zmtp.Type, back bool) (c, b *zmtp.Socket, err error) {
	opt := zmtp.Options{HWM: 10_000, Logger: slog.New(slog.DiscardHandler)}
	if b, err = zmtp.NewSocket(bind, opt); err != nil {
		return nil, nil, err
	}
	if c, err = zmtp.NewSocket(connect, opt); err != nil {
		b.Close()
		return nil, nil, err
	}
	fail := func(err error) (*zmtp.Socket, *zmtp.Socket, error) { c.Close(); b.Close(); return nil, nil, err }
	ep, err := b.Bind("tcp://127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	if err := c.Connect(ep); err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ways := [][2]*zmtp.Socket{{c, b}}
	if back {
		ways = append(ways, [2]*zmtp.Socket{b, c})
	}
	var m zmtp.Message
	for _, w := range ways {
		if err := w[0].Send([]byte("hello")); err != nil {
			return fail(err)
		}
		if err := w[1].Recv(ctx, &m); err != nil {
			return fail(fmt.Errorf("dutybench: zmtp connection: %w", err))
		}
	}
	return c, b, nil
}

// checkParts checks a message's parts: one, the payload.
func checkParts(c *checker, parts [][]byte) {
	if len(parts) != 1 {
		c.mismatch(fmt.Sprintf("message %d: %d parts, want 1", c.received+1, len(parts)))
		c.received++
		return
	}
	c.check(msgTypeID, parts[0])
}

// zmtpEnd is the transport of push and pull (one socket for a DEALER);
// with drain, recv takes what has arrived with Drain (up to what is left
// of n) before waiting with Recv. SendContext waits for room, as the
// floor's writer does.
//
//go:noinline // makes a variant's closures: see runFunc
func zmtpEnd(push, pull *zmtp.Socket, m *zmtp.Message, drain bool, n int) transport {
	ctx := context.Background()
	return transport{
		send: func(p []byte) error { return push.SendContext(ctx, p) },
		recv: func(c *checker) (int, error) {
			if drain {
				if k, err := pull.Drain(func(parts [][]byte) { checkParts(c, parts) }, min(n-c.received, 1024)); k > 0 || err != nil {
					return k, err
				}
			}
			if err := pull.Recv(ctx, m); err != nil {
				return 0, err
			}
			checkParts(c, m.Parts())
			return 1, nil
		},
	}
}

// zmtpStream is WZ's zmtp (drain) and zmtp-recv.
//
//go:noinline // a variant factory: see runFunc
func zmtpStream(drain bool) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		push, pull, err := zmtpConnected(zmtp.Push, zmtp.Pull, false)
		if err != nil {
			return 0, err
		}
		defer pull.Close()
		defer push.Close()
		var m zmtp.Message
		return transportStream(cfg, zmtpEnd(push, nil, nil, false, 0), zmtpEnd(nil, pull, &m, drain, cfg.n),
			func() error { return nil }, push, pull)
	}
}

// zmtpPingPong is WZL's zmtp (two DEALER sockets over one connection) and
// zmtp-pushpull (a PUSH/PULL pair each way).
//
//go:noinline // a variant factory: see runFunc
func zmtpPingPong(dealers bool) runFunc {
	return func(cfg *runConfig) (time.Duration, error) {
		var pushA, pullA, pushB, pullB *zmtp.Socket
		var err error
		if dealers {
			pushA, pushB, err = zmtpConnected(zmtp.Dealer, zmtp.Dealer, true)
			pullA, pullB = pushA, pushB
		} else if pushA, pullB, err = zmtpConnected(zmtp.Push, zmtp.Pull, false); err == nil {
			if pushB, pullA, err = zmtpConnected(zmtp.Push, zmtp.Pull, false); err != nil {
				pushA.Close()
				pullB.Close()
			}
		}
		if err != nil {
			return 0, err
		}
		sockets := []io.Closer{pushA, pullA, pushB, pullB}
		defer func() {
			for _, s := range sockets {
				s.Close()
			}
		}()
		var ma, mb zmtp.Message
		ctx := context.Background()
		return transportPingPong(cfg, zmtpEnd(pushA, pullA, &ma, false, 0), func(c *checker) error {
			if err := pullB.Recv(ctx, &mb); err != nil {
				return err
			}
			checkParts(c, mb.Parts())
			return pushB.SendContext(ctx, mb.Parts()...)
		}, sockets...)
	}
}
