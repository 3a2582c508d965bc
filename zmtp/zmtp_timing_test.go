package zmtp

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"

	"github.com/go-zeromq/zmq4"
)

// Throughput of 32-byte messages over loopback TCP, one sender and one
// receiver in this process: this package at both ends, go-zeromq/zmq4 at
// both ends, and the floor, a net.Conn carrying a 4-byte length prefix
// through buffered I/O.
func BenchmarkThroughput(b *testing.B) {
	msg := make([]byte, 32)
	b.Run("duty", func(b *testing.B) {
		pull := newSocket(b, Pull, Options{HWM: 10000})
		push := newSocket(b, Push, Options{HWM: 10000})
		if err := push.Connect(bind(b, pull, "tcp://127.0.0.1:0")); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		b.ResetTimer()
		go func() {
			for range b.N {
				if push.SendContext(context.Background(), msg) != nil {
					return
				}
			}
		}()
		var m Message
		for range b.N {
			if err := pull.Recv(context.Background(), &m); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("zmq4", func(b *testing.B) {
		pull := zmq4.NewPull(context.Background())
		defer pull.Close()
		if err := pull.Listen("tcp://127.0.0.1:0"); err != nil {
			b.Fatal(err)
		}
		push := zmq4.NewPush(context.Background())
		defer push.Close()
		if err := push.Dial("tcp://" + pull.Addr().String()); err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		b.ResetTimer()
		go func() {
			for range b.N {
				if err := push.Send(zmq4.NewMsg(msg)); err != nil {
					return
				}
			}
		}()
		for range b.N {
			if _, err := pull.Recv(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("length-prefix", func(b *testing.B) {
		a, c := tcpPair(b)
		b.SetBytes(int64(len(msg)))
		b.ReportAllocs()
		b.ResetTimer()
		go func() {
			w := bufio.NewWriterSize(a, 64<<10)
			var hdr [4]byte
			binary.BigEndian.PutUint32(hdr[:], uint32(len(msg)))
			for range b.N {
				_, _ = w.Write(hdr[:])
				_, _ = w.Write(msg)
			}
			_ = w.Flush()
		}()
		r := bufio.NewReaderSize(c, 64<<10)
		buf := make([]byte, 64)
		var hdr [4]byte
		for range b.N {
			if _, err := io.ReadFull(r, hdr[:]); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(r, buf[:binary.BigEndian.Uint32(hdr[:])]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Round trips of a 32-byte message over loopback TCP: PUSH to PULL and
// back (SendContext, which writes inline when the socket is idle),
// against the same over a length-prefixed net.Conn pair.
func BenchmarkRoundTrip(b *testing.B) {
	msg := make([]byte, 32)
	b.Run("duty", func(b *testing.B) {
		pullA, pullB := newSocket(b, Pull, Options{}), newSocket(b, Pull, Options{})
		pushA, pushB := newSocket(b, Push, Options{}), newSocket(b, Push, Options{})
		if pushA.Connect(bind(b, pullB, "tcp://127.0.0.1:0")) != nil || pushB.Connect(bind(b, pullA, "tcp://127.0.0.1:0")) != nil {
			b.Fatal("connect")
		}
		ctx := context.Background()
		done := make(chan struct{})
		go func() {
			defer close(done)
			var m Message
			for range b.N + 1 {
				if pullB.Recv(ctx, &m) != nil || pushB.SendContext(ctx, m.Parts()...) != nil {
					return
				}
			}
		}()
		var m Message
		rt := func() {
			if err := pushA.SendContext(ctx, msg); err != nil {
				b.Fatal(err)
			}
			if err := pullA.Recv(ctx, &m); err != nil {
				b.Fatal(err)
			}
		}
		rt()
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			rt()
		}
		b.StopTimer()
		<-done
	})
	b.Run("length-prefix", func(b *testing.B) {
		a, c := tcpPair(b)
		go func() {
			buf := make([]byte, 4+64)
			for {
				if _, err := io.ReadFull(c, buf[:4]); err != nil {
					return
				}
				n := 4 + binary.BigEndian.Uint32(buf[:4])
				if _, err := io.ReadFull(c, buf[4:n]); err != nil {
					return
				}
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
		}()
		out := binary.BigEndian.AppendUint32(nil, uint32(len(msg)))
		out = append(out, msg...)
		in := make([]byte, len(out))
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			if _, err := a.Write(out); err != nil {
				b.Fatal(err)
			}
			if _, err := io.ReadFull(a, in); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(b *testing.B) (net.Conn, net.Conn) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	a, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	c, err := l.Accept()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = a.Close(); _ = c.Close() })
	return a, c
}
