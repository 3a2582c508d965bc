package zmtp

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPushPullTCPAndIPC(t *testing.T) {
	for _, ep := range []string{"tcp://127.0.0.1:0", "ipc://" + filepath.Join(t.TempDir(), "s.sock")} {
		t.Run(ep[:3], func(t *testing.T) {
			pull := newSocket(t, Pull, Options{})
			addr := bind(t, pull, ep)
			push := newSocket(t, Push, Options{})
			require.NoError(t, push.Connect(addr))
			msgs := [][][]byte{
				{[]byte("one")},
				{[]byte("a"), pattern(1, 255), pattern(2, 256)},
				{pattern(3, 1<<20)},
				{nil},
			}
			for _, m := range msgs {
				require.NoError(t, push.Send(m...))
			}
			for _, m := range msgs {
				got := recv(t, pull)
				require.Len(t, got, len(m))
				for i := range m {
					require.True(t, bytes.Equal(m[i], got[i]))
				}
			}
		})
	}
}

func TestPubSubFiltersAtThePublisher(t *testing.T) {
	pub := newSocket(t, Pub, Options{})
	addr := bind(t, pub, "tcp://127.0.0.1:0")
	sub := newSocket(t, Sub, Options{})
	require.NoError(t, sub.Subscribe([]byte("a.")))
	require.NoError(t, sub.Connect(addr))
	eventually(t, func() bool {
		ps := *pub.peersV.Load()
		return len(ps) == 1 && ps[0].subscribed([]byte("a.x"))
	}, "subscription reaches the publisher")
	require.NoError(t, pub.Send([]byte("b.1"), []byte("no")))
	require.NoError(t, pub.Send([]byte("a.1"), []byte("yes")))
	require.Equal(t, [][]byte{[]byte("a.1"), []byte("yes")}, recv(t, sub))
	require.Zero(t, sub.Stats().Unsubscribed, "the publisher filtered")

	require.NoError(t, sub.Unsubscribe([]byte("a.")))
	eventually(t, func() bool { return !(*pub.peersV.Load())[0].subscribed([]byte("a.x")) }, "cancel")
	require.NoError(t, sub.Subscribe(nil))
	eventually(t, func() bool { return (*pub.peersV.Load())[0].subscribed([]byte("zz")) }, "subscribe all")
	require.NoError(t, pub.Send([]byte("zz")))
	require.Equal(t, [][]byte{[]byte("zz")}, recv(t, sub))
}

func TestIncompatibleSocketTypesAreRefused(t *testing.T) {
	pull := newSocket(t, Pull, Options{})
	addr := bind(t, pull, "tcp://127.0.0.1:0")
	sub := newSocket(t, Sub, Options{})
	require.NoError(t, sub.Connect(addr))
	eventually(t, func() bool { return pull.Stats().Rejected >= 1 && sub.Stats().Rejected >= 1 }, "refusal on both sides")
	require.Zero(t, pull.Stats().Handshakes)
}

func TestPushHWM(t *testing.T) {
	push := newSocket(t, Push, Options{HWM: 4})
	for i := range 4 {
		require.NoError(t, push.Send([]byte(fmt.Sprint(i))))
	}
	require.ErrorIs(t, push.Send([]byte("x")), ErrHWM)
	// Queued messages reach a peer that connects later, in order.
	pull := newSocket(t, Pull, Options{})
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	for i := range 4 {
		require.Equal(t, [][]byte{[]byte(fmt.Sprint(i))}, recv(t, pull))
	}
}

func TestRecvAfterCloseReturnsErrClosed(t *testing.T) {
	pull := newSocket(t, Pull, Options{})
	push := newSocket(t, Push, Options{})
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	require.NoError(t, push.Send([]byte("a")))
	require.NoError(t, push.Send([]byte("b")))
	recv(t, pull)
	require.NoError(t, pull.Close())
	require.ErrorIs(t, pull.Recv(t.Context(), &Message{}), ErrClosed)
	require.NoError(t, pull.Close(), "a second Close is fine")
}
