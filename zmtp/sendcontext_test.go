package zmtp

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// SendContext writes a message itself when the writer is idle and nothing
// is queued, and queues it otherwise; senders mixing both paths with Send,
// some in streams and some with pauses, still deliver every message once
// and in each sender's order.
func TestSendContextInlineAndQueuedKeepOrder(t *testing.T) {
	pull := newSocket(t, Pull, Options{HWM: 64})
	push := newSocket(t, Push, Options{HWM: 16})
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	senders, per := 4, 1500*soak()
	ctx := context.Background()
	var wg sync.WaitGroup
	for p := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				msg := tagged(strconv.Itoa(p), i)
				if p == 3 {
					for push.Send(msg...) == ErrHWM {
						time.Sleep(20 * time.Microsecond)
					}
					continue
				}
				if err := push.SendContext(ctx, msg...); err != nil {
					t.Error(err)
					return
				}
				if p == 0 || i%50 == 0 {
					// A pause: the next send may find the writer idle.
					time.Sleep(20 * time.Microsecond)
				}
			}
		}()
	}
	c := &checker{t: t, last: map[string]int{}}
	var m Message
	for range senders * per {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := pull.Recv(rctx, &m)
		cancel()
		require.NoError(t, err)
		c.see(m.Parts())
	}
	wg.Wait()
	require.Equal(t, senders*per, c.n)
	require.NotZero(t, push.st.inline.Load(), "no message was written inline")
	require.Equal(t, uint64(senders*per), push.Stats().Sent)
}

// SendContext waits at the high-water mark until the writer makes room,
// or until its context ends.
func TestSendContextWaitsForRoom(t *testing.T) {
	push := newSocket(t, Push, Options{HWM: 2})
	ctx := context.Background()
	require.NoError(t, push.SendContext(ctx, []byte("a")))
	require.NoError(t, push.SendContext(ctx, []byte("b")))
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, push.SendContext(short, []byte("c")), context.DeadlineExceeded)

	pull := newSocket(t, Pull, Options{})
	done := make(chan error, 1)
	go func() { done <- push.SendContext(ctx, []byte("c")) }()
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	require.NoError(t, <-done)
	for _, want := range []string{"a", "b", "c"} {
		require.Equal(t, [][]byte{[]byte(want)}, recv(t, pull))
	}
	require.NoError(t, push.Close())
	require.ErrorIs(t, push.SendContext(ctx, []byte("d")), ErrClosed)
}

// A request-reply exchange through SendContext allocates nothing either,
// inline writes included.
func TestSendContextAllocatesNothing(t *testing.T) {
	skipUnderRace(t)
	pull := newSocket(t, Pull, Options{})
	push := newSocket(t, Push, Options{})
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	var b [8]byte
	ctx := context.Background()
	var m Message
	run := func() {
		binary.BigEndian.PutUint32(b[:], 1)
		if err := push.SendContext(ctx, b[:]); err != nil {
			t.Fatal(err)
		}
		if err := pull.Recv(ctx, &m); err != nil {
			t.Fatal(err)
		}
	}
	for range 100 {
		run()
	}
	require.Zero(t, testing.AllocsPerRun(500, run))
	require.NotZero(t, push.st.inline.Load())
}

// Subscribers counts the PUB's peers whose subscriptions match a topic.
func TestSubscribersCountsMatchingPeers(t *testing.T) {
	pub := newSocket(t, Pub, Options{})
	ep := bind(t, pub, "tcp://127.0.0.1:0")
	require.Zero(t, pub.Subscribers([]byte("q.a")))
	for _, prefix := range []string{"q.", "q.a", "x"} {
		sub := newSocket(t, Sub, Options{})
		require.NoError(t, sub.Subscribe([]byte(prefix)))
		require.NoError(t, sub.Connect(ep))
	}
	eventually(t, func() bool { return pub.Subscribers([]byte("q.a")) == 2 && pub.Subscribers([]byte("x")) == 1 },
		"two subscribers of q.a, one of x")
	require.Equal(t, 1, pub.Subscribers([]byte("q.b")))
	require.Equal(t, 1, pub.Subscribers([]byte("x")))
	require.Zero(t, pub.Subscribers([]byte("y")))
	push := newSocket(t, Push, Options{})
	require.Zero(t, push.Subscribers(nil))
}

// Drain hands out what has arrived, in order, up to its limit, without
// waiting; Recv and Drain share the order; a message costs no allocation.
func TestDrain(t *testing.T) {
	pull := newSocket(t, Pull, Options{HWM: 64})
	push := newSocket(t, Push, Options{HWM: 64})
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	var got []string
	h := func(parts [][]byte) { got = append(got, string(parts[0])+"/"+string(parts[1])) }
	n, err := pull.Drain(h, 10)
	require.NoError(t, err)
	require.Zero(t, n, "nothing yet, and no waiting")
	ctx := context.Background()
	for i := range 50 {
		require.NoError(t, push.SendContext(ctx, []byte(fmt.Sprint(i)), []byte("x")))
	}
	require.Equal(t, [][]byte{[]byte("0"), []byte("x")}, recv(t, pull))
	for len(got) < 49 {
		n, err := pull.Drain(h, 7)
		require.NoError(t, err)
		require.LessOrEqual(t, n, 7)
		if n == 0 {
			time.Sleep(time.Millisecond)
		}
	}
	for i, g := range got {
		require.Equal(t, fmt.Sprint(i+1)+"/x", g)
	}
	_, err = push.Drain(h, 1)
	require.ErrorIs(t, err, ErrSocketKind)

	if !skipAllocs() {
		body := make([]byte, 32)
		count := 0
		h2 := func([][]byte) { count++ }
		run := func() {
			require.NoError(t, push.SendContext(ctx, body))
			for want := count + 1; count < want; {
				if n, _ := pull.Drain(h2, 16); n == 0 {
					time.Sleep(10 * time.Microsecond)
				}
			}
		}
		for range 100 {
			run()
		}
		require.Zero(t, testing.AllocsPerRun(200, run))
	}
	require.NoError(t, pull.Close())
	_, err = pull.Drain(h, 1)
	require.ErrorIs(t, err, ErrClosed)
}
