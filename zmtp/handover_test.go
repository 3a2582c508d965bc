package zmtp

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/zmtpqueue"
	"github.com/dutyrt/duty/internal/zmtpwire"
)

// directTakes counts the times a blocking Recv took the read side of the
// socket's peers now connected (handover.go).
func directTakes(s *Socket) uint32 {
	var n uint32
	for _, p := range *s.peersV.Load() {
		n += p.rgen.Load()
	}
	return n
}

// A Recv whose context ends while it reads the connection itself returns
// the context's error; a message cut by it is not lost: the decoder
// rewinds, and the next Recv returns it whole.
func TestRecvReadingItselfIsInterruptedAndResumes(t *testing.T) {
	for _, hb := range []time.Duration{0, time.Second} {
		t.Run(fmt.Sprint("heartbeat=", hb), func(t *testing.T) {
			pull := newSocket(t, Pull, Options{Heartbeat: hb})
			r := dialRaw(t, bind(t, pull, "tcp://127.0.0.1:0"))
			r.handshake(Push)
			r.send([]byte("first"))
			require.Equal(t, [][]byte{[]byte("first")}, recv(t, pull))

			// Half a message of two frames: Recv reads it and waits for
			// the rest until its context ends.
			e := zmtpwire.NewEncoder(0)
			e.Message([]byte("head"), pattern(1, 3000))
			var whole []byte
			_, err := e.WriteTo(writerFunc(func(b []byte) (int, error) { whole = append(whole, b...); return len(b), nil }))
			require.NoError(t, err)
			r.write(whole[:len(whole)/2])
			for range 3 {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
				err := pull.Recv(ctx, &Message{})
				cancel()
				require.ErrorIs(t, err, context.DeadlineExceeded)
			}
			// A Recv that finds the reader goroutine reading asks it to
			// stand down and interrupts it: the Recvs above read too.
			require.NotZero(t, directTakes(pull), "Recv read the connection itself")
			r.write(whole[len(whole)/2:])
			got := recv(t, pull)
			require.Equal(t, [][]byte{[]byte("head"), pattern(1, 3000)}, got)
			require.Zero(t, pull.Stats().PeerErrors)
			require.Equal(t, 1, pull.Stats().Peers)
		})
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// A Recv reading one peer's connection itself returns to the queue when a
// second peer's message arrives.
func TestRecvReadingItselfSeesASecondPeer(t *testing.T) {
	pull := newSocket(t, Pull, Options{})
	addr := bind(t, pull, "tcp://127.0.0.1:0")
	a := dialRaw(t, addr)
	a.handshake(Push)
	a.send([]byte("a1"))
	require.Equal(t, [][]byte{[]byte("a1")}, recv(t, pull))
	got := make(chan [][]byte)
	go func() { got <- recv(t, pull) }()
	// The Recv reads a's connection (a is the only peer) and waits.
	eventually(t, func() bool { return pull.ho.direct.Load() != nil }, "Recv reads the connection")
	b := dialRaw(t, addr)
	b.handshake(Push)
	b.send([]byte("b1"))
	require.Equal(t, [][]byte{[]byte("b1")}, <-got)
	a.send([]byte("a2"))
	require.Equal(t, [][]byte{[]byte("a2")}, recv(t, pull))
}

// Heartbeats go on when the receiver stops calling Recv after reading the
// connection itself: the reader goroutine takes the read side back and
// answers a PING.
func TestPingAnsweredAfterRecvStops(t *testing.T) {
	pull := newSocket(t, Pull, Options{Heartbeat: time.Hour})
	r := dialRaw(t, bind(t, pull, "tcp://127.0.0.1:0"))
	r.handshake(Push)
	eventually(t, func() bool { return pull.Stats().Peers == 1 }, "the peer registered")
	for i := range 2 {
		// The Recv waits first, reading the connection itself.
		got := make(chan [][]byte)
		go func() { got <- recv(t, pull) }()
		eventually(t, func() bool { return pull.ho.direct.Load() != nil }, "Recv reads the connection")
		r.send([]byte{byte(i)})
		require.Equal(t, [][]byte{{byte(i)}}, <-got)
	}
	require.NotZero(t, directTakes(pull))
	e := zmtpwire.NewEncoder(0)
	e.Command("PING", []byte{0, 0}, []byte("late"))
	_, err := e.WriteTo(r.c)
	require.NoError(t, err)
	d := zmtpwire.NewDecoder(r.c, 0, 0)
	_ = r.c.SetReadDeadline(time.Now().Add(10 * time.Second)) // hang guard
	k, err := d.Next()
	require.NoError(t, err)
	require.Equal(t, zmtpwire.KindCommand, k)
	name, data, err := zmtpwire.ParseCommand(d.Command())
	require.NoError(t, err)
	require.Equal(t, "PONG", string(name))
	require.Equal(t, "late", string(data))
}

// Several peers come and go while one goroutine receives with Recv (some
// with contexts that end), another with Drain, and heartbeats run: every
// message arrives exactly once, whole, in its producer's order, through
// every hand-over of the read side between the readers and the receivers.
func TestHandoverStress(t *testing.T) {
	opt := Options{HWM: 64, Heartbeat: 5 * time.Millisecond, HeartbeatTimeout: 5 * time.Second}
	pull := newSocket(t, Pull, opt)
	addr := bind(t, pull, "tcp://127.0.0.1:0")
	const producers = 4
	per := 1500 * soak()
	var wg sync.WaitGroup
	for i := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Staggered, so that the socket has one peer at times (the
			// receivers read it themselves) and several at others.
			time.Sleep(time.Duration(i) * 30 * time.Millisecond)
			push := newSocket(t, Push, Options{HWM: 64, Heartbeat: 5 * time.Millisecond, HeartbeatTimeout: 5 * time.Second})
			require.NoError(t, push.Connect(addr))
			name := fmt.Sprint("p", i)
			for seq := range per {
				msg := tagged(name, seq)
				if seq%97 == 0 {
					msg[1] = pattern(seq+len(name), 20000) // large: by reference
				}
				if err := push.SendContext(context.Background(), msg...); err != nil {
					t.Error(err)
					return
				}
				if seq%200 == 0 {
					time.Sleep(time.Millisecond) // pauses: the read side changes hands
				}
			}
			// Close only once the messages are through: delivery is at
			// most once, and Close drops what is queued.
			eventually(t, func() bool { return push.out.Count() == 0 }, "sent")
		}()
	}
	c := &checker{t: t, last: map[string]int{}}
	var mu sync.Mutex
	see := func(parts [][]byte) {
		if len(parts[1]) == 20000 {
			// Large bodies: put back the body tagged() expects to check.
			producer, seq := parseTag(t, parts[0])
			require.Equal(t, pattern(seq+len(producer), 20000), parts[1])
			parts = [][]byte{parts[0], tagged(producer, seq)[1]}
		}
		mu.Lock()
		defer mu.Unlock()
		c.see(parts)
	}
	total := producers * per
	count := func() int { mu.Lock(); defer mu.Unlock(); return c.n }
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		// One receiver, so that the order it sees is the order of
		// delivery: Recv (now and then with a context that ends at
		// once or soon) and Drain in turns.
		defer rwg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		var m Message
		for count() < total {
			if rng.IntN(2) == 0 {
				n, err := pull.Drain(see, 1+rng.IntN(16))
				if err != nil {
					t.Error(err)
					return
				}
				if n == 0 && rng.IntN(4) == 0 {
					time.Sleep(50 * time.Microsecond)
				}
				continue
			}
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			if rng.IntN(8) == 0 {
				ctx, cancel = context.WithTimeout(context.Background(), time.Duration(rng.IntN(300))*time.Microsecond)
			}
			err := pull.Recv(ctx, &m)
			cancel()
			if errors.Is(err, context.DeadlineExceeded) {
				continue
			}
			if err != nil {
				t.Error(err)
				return
			}
			see(m.Parts())
		}
	}()
	wg.Wait()
	done := make(chan struct{})
	go func() { rwg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("hang: %d of %d messages", count(), total)
	}
	require.Equal(t, total, count())
	require.Zero(t, pull.Stats().PeerErrors)
	require.Zero(t, pull.Stats().Torn)
}

func parseTag(t *testing.T, tag []byte) (string, int) {
	var producer string
	var seq int
	for i, ch := range tag {
		if ch == ':' {
			producer = string(tag[:i])
			_, err := fmt.Sscan(string(tag[i+1:]), &seq)
			require.NoError(t, err)
			return producer, seq
		}
	}
	t.Fatalf("tag %q", tag)
	return "", 0
}

// Large bodies through the vectored path and the one-copy receive, with
// go-zeromq/zmq4 at the other end, both directions: SendContext writes
// them by reference, and a PULL receives them through its queue (sent
// before Recv) and by reading the connection itself.
func TestInteropLargeBodiesZmq4(t *testing.T) {
	msgs := [][][]byte{
		{pattern(1, zmtpwire.DefaultRefMin)},
		{[]byte("hdr"), pattern(2, 1<<20), []byte("trailer")},
		{pattern(3, zmtpwire.DefaultRefMin-1), pattern(4, 3*zmtpwire.DefaultRefMin)},
		{pattern(5, 200)},
	}
	t.Run("ours to zmq4", func(t *testing.T) {
		pull := zmqSocket(t, zmq4.NewPull(context.Background()))
		require.NoError(t, pull.Listen("tcp://127.0.0.1:0"))
		push := newSocket(t, Push, Options{})
		require.NoError(t, push.Connect("tcp://"+pull.Addr().String()))
		eventually(t, func() bool { return push.Stats().Peers == 1 }, "connected")
		for _, m := range msgs {
			require.NoError(t, push.SendContext(context.Background(), m...))
			got, err := pull.Recv()
			require.NoError(t, err)
			requireSame(t, m, got.Frames)
		}
		require.Equal(t, uint64(3), push.st.byRef.Load(), "the large messages by reference")
	})
	t.Run("zmq4 to ours", func(t *testing.T) {
		pull := newSocket(t, Pull, Options{})
		addr := bind(t, pull, "tcp://127.0.0.1:0")
		push := zmqSocket(t, zmq4.NewPush(context.Background()))
		require.NoError(t, push.Dial(addr))
		// Queued first: the reader copies each large message once.
		for _, m := range msgs {
			require.NoError(t, push.SendMulti(zmq4.NewMsgFrom(m...)))
		}
		eventually(t, func() bool { return pull.Stats().Received == uint64(len(msgs)) }, "queued")
		var m Message
		for _, want := range msgs {
			require.NoError(t, pull.Recv(t.Context(), &m))
			requireSame(t, want, m.Parts())
		}
		// Then one at a time, Recv reading the connection itself.
		for _, want := range msgs {
			require.NoError(t, push.SendMulti(zmq4.NewMsgFrom(want...)))
			requireSame(t, want, recv(t, pull))
		}
		require.NotZero(t, directTakes(pull))
	})
}

// A large message through the receive queue is copied once, by the reader:
// the Message takes the reader's buffer over, and gives back the one it
// held for the next large message.
func TestLargeMessageThroughTheQueueIsCopiedOnce(t *testing.T) {
	q := zmtpqueue.NewIn(8)
	body := pattern(9, 2*zmtpqueue.BigMin)
	raw := binary.BigEndian.AppendUint64([]byte{zmtpwire.FlagLong}, uint64(len(body)))
	raw = append(raw, body...)
	var rc recvCache
	var m slot
	var back []byte // the buffer the Message gave back last
	for range 3 {
		room, err := q.Reserve(context.Background(), 2)
		require.NoError(t, err)
		b := q.GetBig(len(raw))
		if back != nil {
			require.Same(t, &back[:1][0], &b[0], "the buffer given back is taken again")
		}
		copy(b, raw) // the reader's one copy
		q.Commit([][]byte{{0, 1, 'x'}, bigMarkRun}, 2, room, b)
		var n int
		rc.buf, n = q.Take(rc.buf[:0], &rc.bigs)
		rc.off = 0
		require.Equal(t, 2, n)
		rc.next(&m, q)
		require.Equal(t, [][]byte{[]byte("x")}, m.parts)
		before := m.data
		rc.next(&m, q)
		require.Equal(t, [][]byte{body}, m.parts)
		require.Same(t, &b[zmtpwire.LongHeader], &m.parts[0][0], "the part is in the reader's buffer")
		if cap(before) >= zmtpqueue.BigMin {
			back = before
		}
	}
	require.NotNil(t, back)
}

// SendContext of a large message by reference and Recv allocate nothing
// once the buffers have grown.
func TestLargeMessagesAllocateNothing(t *testing.T) {
	skipUnderRace(t)
	pull := newSocket(t, Pull, Options{})
	push := newSocket(t, Push, Options{})
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	hdr, body := []byte("hdr"), pattern(3, 64<<10)
	ctx := context.Background()
	var m Message
	run := func() {
		if err := push.SendContext(ctx, hdr, body); err != nil {
			t.Fatal(err)
		}
		if err := pull.Recv(ctx, &m); err != nil {
			t.Fatal(err)
		}
	}
	for range 50 {
		run()
	}
	require.Zero(t, testing.AllocsPerRun(200, run))
	require.NotZero(t, push.st.byRef.Load())
	require.Equal(t, body, m.Parts()[1])
}
