package zmtp

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// closeAsync runs Close on another goroutine once s is closing, and
// returns its result's channel.
func closeAsync(t *testing.T, s *Socket, close func() error) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- close() }()
	eventually(t, s.closing.Load, "Close began")
	return done
}

// closeResult waits for Close's result (a hang guard, not a timing
// assertion: Close waits Options.Linger at most).
func closeResult(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Close hangs")
		return nil
	}
}

// A PUSH socket's Close waits, by default, for its queued messages: a
// peer that appears while it waits gets them all, in order.
func TestCloseLingersForAPeerThatConnectsLate(t *testing.T) {
	ep := "ipc://" + filepath.Join(t.TempDir(), "late.sock")
	push := newSocket(t, Push, Options{})
	require.NoError(t, push.Connect(ep)) // nobody listens yet
	const n = 100
	for i := range n {
		require.NoError(t, push.Send([]byte(fmt.Sprint(i))))
	}
	done := closeAsync(t, push, push.Close)
	require.ErrorIs(t, push.Send([]byte("late")), ErrClosed, "no new message once Close began")

	pull := newSocket(t, Pull, Options{})
	bind(t, pull, ep)
	for i := range n {
		require.Equal(t, [][]byte{[]byte(fmt.Sprint(i))}, recv(t, pull))
	}
	require.NoError(t, closeResult(t, done))
	st := push.Stats()
	require.Equal(t, uint64(n), st.Sent)
	require.Zero(t, st.Unsent)
	require.Zero(t, st.Lost)
}

// A PUB socket's Close waits, by default, for the messages queued for a
// subscriber that reads slowly: more than the kernel's buffers hold, so
// that some wait in the socket when Close begins.
func TestCloseLingersForASlowReader(t *testing.T) {
	pub := newSocket(t, Pub, Options{HWM: 1000})
	sub := newSocket(t, Sub, Options{HWM: 1})
	require.NoError(t, sub.Subscribe(nil))
	require.NoError(t, sub.Connect(bind(t, pub, "tcp://127.0.0.1:0")))
	eventually(t, func() bool { return pub.Subscribers([]byte("x")) == 1 }, "subscribed")
	const n = 400 // of 64 KiB: 25 MiB, beyond loopback TCP's buffers
	body := make([]byte, 64<<10)
	for i := range n {
		require.NoError(t, pub.Send([]byte(fmt.Sprint(i)), body))
	}
	require.Positive(t, pub.queued(), "messages wait in the socket")
	done := closeAsync(t, pub, pub.Close)
	for i := range n {
		require.Equal(t, fmt.Sprint(i), string(recv(t, sub)[0]))
	}
	require.NoError(t, closeResult(t, done))
	st := pub.Stats()
	require.Equal(t, uint64(n), st.Sent)
	require.Zero(t, st.Unsent+st.Lost+st.Dropped)
}

// What is still queued when the linger ends, at once with NoLinger, is
// discarded, counted in Stats.Unsent and reported by Close (ErrUnsent);
// Close does not wait past the linger, even for a peer whose connection
// is stalled mid-write.
func TestCloseCountsWhatTheLingerLeaves(t *testing.T) {
	t.Run("NoLinger", func(t *testing.T) {
		push := newSocket(t, Push, Options{Linger: NoLinger})
		require.NoError(t, push.Connect("ipc://"+filepath.Join(t.TempDir(), "none.sock")))
		for range 10 {
			require.NoError(t, push.Send([]byte("m")))
		}
		err := push.Close()
		require.ErrorIs(t, err, ErrUnsent)
		require.ErrorContains(t, err, "10 messages")
		require.Equal(t, uint64(10), push.Stats().Unsent)
		require.NoError(t, push.Close(), "a second Close")
	})
	t.Run("linger expires, no peer", func(t *testing.T) {
		dealer := newSocket(t, Dealer, Options{Linger: 20 * time.Millisecond})
		require.NoError(t, dealer.Connect("ipc://"+filepath.Join(t.TempDir(), "none.sock")))
		for range 7 {
			require.NoError(t, dealer.Send([]byte("m")))
		}
		require.ErrorIs(t, closeResult(t, closeAsync(t, dealer, dealer.Close)), ErrUnsent)
		require.Equal(t, uint64(7), dealer.Stats().Unsent)
	})
	t.Run("context ends, stalled subscriber", func(t *testing.T) {
		pub := newSocket(t, Pub, Options{HWM: 1000})
		sub := newSocket(t, Sub, Options{HWM: 1}) // never read: its reader stops
		require.NoError(t, sub.Subscribe(nil))
		require.NoError(t, sub.Connect(bind(t, pub, "tcp://127.0.0.1:0")))
		eventually(t, func() bool { return pub.Subscribers([]byte("x")) == 1 }, "subscribed")
		const n = 400
		body := make([]byte, 64<<10)
		for range n {
			require.NoError(t, pub.Send([]byte("t"), body))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		err := closeResult(t, closeAsync(t, pub, func() error { return pub.CloseContext(ctx) }))
		require.ErrorIs(t, err, ErrUnsent)
		st := pub.Stats()
		require.Positive(t, st.Unsent)
		require.Equal(t, uint64(n), st.Sent+st.Unsent, "each message written or counted unsent")
		require.Zero(t, st.Lost+st.Dropped)
	})
	t.Run("receiving socket", func(t *testing.T) {
		pull := newSocket(t, Pull, Options{Linger: time.Hour})
		bind(t, pull, "tcp://127.0.0.1:0")
		require.NoError(t, closeResult(t, closeAsync(t, pull, pull.Close)), "nothing to wait for")
	})
}

// A SendContext waiting for room, and a Recv waiting for a message,
// return ErrClosed as soon as Close begins, whatever its linger.
func TestCloseEndsWaitingCallsAtOnce(t *testing.T) {
	dealer := newSocket(t, Dealer, Options{HWM: 1, Linger: 20 * time.Millisecond})
	require.NoError(t, dealer.Connect("ipc://"+filepath.Join(t.TempDir(), "none.sock")))
	require.NoError(t, dealer.Send([]byte("queued")))
	sendErr, recvErr := make(chan error, 1), make(chan error, 1)
	go func() { sendErr <- dealer.SendContext(context.Background(), []byte("waits")) }()
	go func() { recvErr <- dealer.Recv(context.Background(), &Message{}) }()
	eventually(t, func() bool { return dealer.out.Waiters.Load() == 1 && dealer.ho.waiters.Load() == 1 }, "both wait")
	done := closeAsync(t, dealer, dealer.Close)
	require.ErrorIs(t, <-sendErr, ErrClosed)
	require.ErrorIs(t, <-recvErr, ErrClosed)
	require.ErrorIs(t, closeResult(t, done), ErrUnsent)
	require.Equal(t, uint64(1), dealer.Stats().Unsent)
}
