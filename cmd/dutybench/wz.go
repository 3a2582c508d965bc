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

// WZ and WZL: messages over loopback TCP, both ends in this process
// (docs/workloads.md, "WZ and WZL: ZMTP over TCP"). WZ times n messages
// of the standard 32-byte payload from a producer goroutine to a consumer
// goroutine that checks every one (exactly once, in order); WZL times n
// round trips of one such message, the pinger recording each. The
// baseline is the floor: a plain net.Conn carrying each message behind a
// 4-byte big-endian length, through 64 KiB bufio buffers for WZ and with
// one write and one read per message for WZL. The variant zmtp is duty's
// zmtp package (PUSH to PULL; for WZL two DEALER sockets, one connection
// carrying both directions as the floor's does); its WZ consumer takes
// what has arrived with Drain (one lock per batch) and waits with Recv
// when nothing has, the extra variant zmtp-recv with Recv alone (one lock
// per message). The extra WZL variant zmtp-pushpull is a PUSH/PULL pair
// each way: two connections, each direction's acknowledgements sent on
// their own. Built
// with -tags zmq4, both workloads also run go-zeromq/zmq4 at both ends
// (wz_zmq4.go). Every variant runs as plain goroutines: the sockets' own
// goroutines block on the network, and a thread locked to a goroutine
// would turn every wake-up into a hand-off between OS threads.
var (
	wz = &workload{
		name:        "wz",
		kind:        kindThroughput,
		defaultN:    1_000_000,
		defaultReps: 5,
		variants: []variant{
			{name: "length-prefix", run: wzFloor, goroutines: true},
			{name: "zmtp", run: func(cfg *runConfig) (time.Duration, error) { return wzZmtp(cfg, true) }, goroutines: true},
			{name: "zmtp-recv", run: func(cfg *runConfig) (time.Duration, error) { return wzZmtp(cfg, false) }, goroutines: true, extra: true},
		},
	}
	wzl = &workload{
		name:        "wzl",
		kind:        kindLatency,
		defaultN:    100_000,
		defaultReps: 5,
		variants: []variant{
			{name: "length-prefix", run: wzlFloor, goroutines: true},
			{name: "zmtp", run: func(cfg *runConfig) (time.Duration, error) { return wzlZmtp(cfg, true) }, goroutines: true},
			{name: "zmtp-pushpull", run: func(cfg *runConfig) (time.Duration, error) { return wzlZmtp(cfg, false) }, goroutines: true, extra: true},
		},
	}
)

func init() { registry = append(registry, wz, wzl) }

// wzHWM is the high-water mark of the zmtp sockets: deep enough that the
// producer rarely waits for room.
const wzHWM = 10_000

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair() (a, b net.Conn, err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	defer l.Close()
	a, err = net.Dial("tcp", l.Addr().String())
	if err != nil {
		return nil, nil, err
	}
	if b, err = l.Accept(); err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, b, nil
}

func wzFloor(cfg *runConfig) (time.Duration, error) {
	a, b, err := tcpPair()
	if err != nil {
		return 0, err
	}
	// Closing both ends after the run also ends a goroutine the hang
	// guard left blocked.
	defer a.Close()
	defer b.Close()
	t := newTeam(placement{})
	n, corruptAt := cfg.n, cfg.corruptAt
	closers := []io.Closer{a, b}
	spawnOrClose(t, 0, closers, func() error {
		w := bufio.NewWriterSize(a, 64<<10)
		var rec [4 + payloadLen]byte
		binary.BigEndian.PutUint32(rec[:4], payloadLen)
		putPayload(rec[4:], 0, 0)
		for i := range n {
			binary.LittleEndian.PutUint64(rec[4:12], seqFor(i, corruptAt))
			if _, err := w.Write(rec[:]); err != nil {
				return err
			}
		}
		return w.Flush()
	})
	c := newChecker(1)
	spawnOrClose(t, 1, closers, func() error {
		r := bufio.NewReaderSize(b, 64<<10)
		var hdr [4]byte
		buf := make([]byte, 64)
		for range n {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				return err
			}
			size := binary.BigEndian.Uint32(hdr[:])
			if size > uint32(len(buf)) {
				return fmt.Errorf("%w: a frame of %d bytes", errPayload, size)
			}
			if _, err := io.ReadFull(r, buf[:size]); err != nil {
				return err
			}
			c.check(msgTypeID, buf[:size])
		}
		t.finish()
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

func wzlFloor(cfg *runConfig) (time.Duration, error) {
	a, b, err := tcpPair()
	if err != nil {
		return 0, err
	}
	defer a.Close()
	defer b.Close()
	t := newTeam(placement{})
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	pc, c := newChecker(1), newChecker(1)
	closers := []io.Closer{a, b}
	spawnOrClose(t, 0, closers, func() error {
		var out, in [4 + payloadLen]byte
		binary.BigEndian.PutUint32(out[:4], payloadLen)
		putPayload(out[4:], 0, 0)
		clk := newClock()
		last := clk.now()
		for i := range n {
			binary.LittleEndian.PutUint64(out[4:12], seqFor(i, corruptAt))
			if _, err := a.Write(out[:]); err != nil {
				return err
			}
			if _, err := io.ReadFull(a, in[:]); err != nil {
				return err
			}
			checkFramed(pc, in[:])
			now := clk.now()
			lat[i] = now - last
			last = now
		}
		t.finish()
		return pc.finish([]int{n})
	})
	spawnOrClose(t, 1, closers, func() error {
		var buf [4 + payloadLen]byte
		for range n {
			if _, err := io.ReadFull(b, buf[:]); err != nil {
				return err
			}
			checkFramed(c, buf[:])
			if _, err := b.Write(buf[:]); err != nil {
				return err
			}
		}
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// wzLog discards the sockets' connection events.
var wzLog = slog.New(slog.DiscardHandler)

// zmtpConnected returns a socket of type connect connected to a new one of
// type bind, with a message through (both ways when back): the connection
// is up.
func zmtpConnected(connect, bind zmtp.Type, back bool) (c, b *zmtp.Socket, err error) {
	opt := zmtp.Options{HWM: wzHWM, Logger: wzLog}
	if b, err = zmtp.NewSocket(bind, opt); err != nil {
		return nil, nil, err
	}
	if c, err = zmtp.NewSocket(connect, opt); err != nil {
		b.Close()
		return nil, nil, err
	}
	fail := func(err error) (*zmtp.Socket, *zmtp.Socket, error) {
		c.Close()
		b.Close()
		return nil, nil, err
	}
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

// zmtpPush returns a PUSH socket connected to a new PULL socket.
func zmtpPush() (push, pull *zmtp.Socket, err error) {
	return zmtpConnected(zmtp.Push, zmtp.Pull, false)
}

// zmtpCheck checks a received zmtp message: one part, the payload.
func zmtpCheck(c *checker, m *zmtp.Message) { checkParts(c, m.Parts()) }

// checkParts checks a received message's parts: one, the payload.
func checkParts(c *checker, parts [][]byte) {
	if len(parts) != 1 {
		c.mismatch(fmt.Sprintf("message %d: %d parts, want 1", c.received+1, len(parts)))
		c.received++
		return
	}
	c.check(msgTypeID, parts[0])
}

func wzZmtp(cfg *runConfig, drain bool) (time.Duration, error) {
	push, pull, err := zmtpPush()
	if err != nil {
		return 0, err
	}
	defer pull.Close()
	defer push.Close()
	t := newTeam(placement{})
	n, corruptAt := cfg.n, cfg.corruptAt
	ctx := context.Background()
	closers := []io.Closer{push, pull}
	spawnOrClose(t, 0, closers, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		for i := range n {
			putSeq(&p, seqFor(i, corruptAt))
			// SendContext waits for room at the high-water mark, as the
			// floor's writer waits in write.
			if err := push.SendContext(ctx, p[:]); err != nil {
				return err
			}
		}
		return nil
	})
	c := newChecker(1)
	spawnOrClose(t, 1, closers, func() error {
		var m zmtp.Message
		h := func(parts [][]byte) { checkParts(c, parts) }
		for c.received < n {
			if drain {
				k, err := pull.Drain(h, min(n-c.received, 1024))
				if err != nil {
					return err
				}
				if k > 0 {
					continue
				}
			}
			if err := pull.Recv(ctx, &m); err != nil {
				return err
			}
			checkParts(c, m.Parts())
		}
		t.finish()
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// zmtpDealers returns two DEALER sockets connected to each other.
func zmtpDealers() (a, b *zmtp.Socket, err error) {
	return zmtpConnected(zmtp.Dealer, zmtp.Dealer, true)
}

// wzlZmtp times round trips between two DEALER sockets over one
// connection (dealers), or through a PUSH/PULL pair each way.
func wzlZmtp(cfg *runConfig, dealers bool) (time.Duration, error) {
	var pushA, pullA, pushB, pullB *zmtp.Socket
	if dealers {
		a, b, err := zmtpDealers()
		if err != nil {
			return 0, err
		}
		defer a.Close()
		defer b.Close()
		pushA, pullA, pushB, pullB = a, a, b, b
	} else {
		var err error
		pushA, pullB, err = zmtpPush()
		if err != nil {
			return 0, err
		}
		defer pullB.Close()
		defer pushA.Close()
		pushB, pullA, err = zmtpPush()
		if err != nil {
			return 0, err
		}
		defer pullA.Close()
		defer pushB.Close()
	}
	t := newTeam(placement{})
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	pc, c := newChecker(1), newChecker(1)
	ctx := context.Background()
	closers := []io.Closer{pushA, pullA, pushB, pullB}
	spawnOrClose(t, 0, closers, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		var m zmtp.Message
		clk := newClock()
		last := clk.now()
		for i := range n {
			putSeq(&p, seqFor(i, corruptAt))
			if err := pushA.SendContext(ctx, p[:]); err != nil {
				return err
			}
			if err := pullA.Recv(ctx, &m); err != nil {
				return err
			}
			zmtpCheck(pc, &m)
			now := clk.now()
			lat[i] = now - last
			last = now
		}
		t.finish()
		return pc.finish([]int{n})
	})
	spawnOrClose(t, 1, closers, func() error {
		var m zmtp.Message
		for range n {
			if err := pullB.Recv(ctx, &m); err != nil {
				return err
			}
			zmtpCheck(c, &m)
			if err := pushB.SendContext(ctx, m.Parts()...); err != nil {
				return err
			}
		}
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

// spawnOrClose spawns fn in t's slot; when fn fails it closes what the
// other goroutine may be blocked on, so that the failure ends the run at
// once rather than at the hang guard.
func spawnOrClose(t *team, slot int, closers []io.Closer, fn func() error) {
	t.spawn(slot, func() error {
		err := fn()
		if err != nil {
			for _, c := range closers {
				c.Close()
			}
		}
		return err
	})
}

// checkFramed checks a length-prefixed record of the floor.
func checkFramed(c *checker, rec []byte) {
	if size := binary.BigEndian.Uint32(rec[:4]); size != payloadLen {
		c.mismatch(fmt.Sprintf("message %d: a frame of %d bytes, want %d", c.received+1, size, payloadLen))
		c.received++
		return
	}
	c.check(msgTypeID, rec[4:])
}
