package zmtp

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/stretchr/testify/require"
)

// Interoperability with an independent implementation of ZMTP,
// go-zeromq/zmq4 (which speaks ZMTP 3.0): both ends, both directions,
// multipart, both sides of the 255-byte boundary, 1 MiB bodies.

func interopMessages() [][][]byte {
	return [][][]byte{
		{[]byte("t.hello")},
		{[]byte("t.multi"), []byte("part two"), nil, []byte("four")},
		{[]byte("t.255"), pattern(5, 255-len("t.255"))},
		{[]byte("t.edge"), pattern(6, 255), pattern(7, 256)},
		{[]byte("t.big"), pattern(8, 1<<20)},
	}
}

func requireSame(t *testing.T, want, got [][]byte) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		require.True(t, bytes.Equal(want[i], got[i]), "part %d: %d bytes, want %d", i, len(got[i]), len(want[i]))
	}
}

func zmqSocket(t *testing.T, s zmq4.Socket) zmq4.Socket {
	t.Helper()
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestInteropZmq4PushToOurPull(t *testing.T) {
	pull := newSocket(t, Pull, Options{})
	addr := bind(t, pull, "tcp://127.0.0.1:0")
	push := zmqSocket(t, zmq4.NewPush(context.Background()))
	require.NoError(t, push.Dial(addr))
	for _, m := range interopMessages() {
		require.NoError(t, push.SendMulti(zmq4.NewMsgFrom(m...)))
	}
	for _, m := range interopMessages() {
		requireSame(t, m, recv(t, pull))
	}
}

func TestInteropOurPushToZmq4Pull(t *testing.T) {
	pull := zmqSocket(t, zmq4.NewPull(context.Background()))
	require.NoError(t, pull.Listen("tcp://127.0.0.1:0"))
	push := newSocket(t, Push, Options{})
	require.NoError(t, push.Connect("tcp://"+pull.Addr().String()))
	for _, m := range interopMessages() {
		require.NoError(t, push.Send(m...))
	}
	for _, m := range interopMessages() {
		got, err := pull.Recv()
		require.NoError(t, err)
		requireSame(t, m, got.Frames)
	}
}

func TestInteropZmq4PubToOurSub(t *testing.T) {
	pub := zmqSocket(t, zmq4.NewPub(context.Background()))
	require.NoError(t, pub.Listen("tcp://127.0.0.1:0"))
	sub := newSocket(t, Sub, Options{})
	require.NoError(t, sub.Subscribe([]byte("t.")))
	require.NoError(t, sub.Connect("tcp://"+pub.Addr().String()))
	// The subscription travels as a ZMTP 3.0 message to this 3.0 peer;
	// publish a probe until it arrives.
	probe := [][]byte{[]byte("t.probe")}
	ctx := context.Background()
	for {
		require.NoError(t, pub.Send(zmq4.NewMsgFrom(probe...)))
		c, cancel := context.WithTimeout(ctx, 20e6)
		var m Message
		err := sub.Recv(c, &m)
		cancel()
		if err == nil {
			break
		}
	}
	require.NoError(t, pub.Send(zmq4.NewMsgFrom([]byte("x.filtered"))))
	for _, m := range interopMessages() {
		require.NoError(t, pub.SendMulti(zmq4.NewMsgFrom(m...)))
	}
	for _, m := range interopMessages() {
		got := recv(t, sub)
		for bytes.Equal(got[0], probe[0]) {
			got = recv(t, sub)
		}
		requireSame(t, m, got)
	}
}

func TestInteropOurPubToZmq4Sub(t *testing.T) {
	pub := newSocket(t, Pub, Options{})
	addr := bind(t, pub, "tcp://127.0.0.1:0")
	sub := zmqSocket(t, zmq4.NewSub(context.Background()))
	require.NoError(t, sub.SetOption(zmq4.OptionSubscribe, "t."))
	require.NoError(t, sub.Dial(addr))
	eventually(t, func() bool {
		ps := *pub.peersV.Load()
		return len(ps) == 1 && ps[0].subscribed([]byte("t.x"))
	}, "zmq4's subscription reaches our publisher")
	require.NoError(t, pub.Send([]byte("x.filtered")))
	for _, m := range interopMessages() {
		require.NoError(t, pub.Send(m...))
	}
	for _, m := range interopMessages() {
		got, err := sub.Recv()
		require.NoError(t, err)
		requireSame(t, m, got.Frames)
	}
}

// Over a Unix-domain socket, with heartbeats on our side: zmq4 is a 3.0
// peer, which has no PING, so it gets none (zmq4 v0.17.0 would hand a
// PING's body to its application as a message) and is not timed out: the
// connection outlives several heartbeat timeouts without data, and zmq4
// receives exactly what was sent.
func TestInteropIPCWithHeartbeats(t *testing.T) {
	pull := zmqSocket(t, zmq4.NewPull(context.Background()))
	require.NoError(t, pull.Listen("ipc://"+filepath.Join(t.TempDir(), "z.sock")))
	push := newSocket(t, Push, Options{Heartbeat: 10 * time.Millisecond, HeartbeatTimeout: 250 * time.Millisecond})
	require.NoError(t, push.Connect("ipc://"+pull.Addr().String()))
	require.NoError(t, push.Send([]byte("a"), []byte("b")))
	got, err := pull.Recv()
	require.NoError(t, err)
	requireSame(t, [][]byte{[]byte("a"), []byte("b")}, got.Frames)
	time.Sleep(300 * time.Millisecond) // more than a heartbeat timeout without data
	require.NoError(t, push.Send([]byte("c")))
	got, err = pull.Recv()
	require.NoError(t, err)
	requireSame(t, [][]byte{[]byte("c")}, got.Frames)
	require.Equal(t, uint64(1), push.Stats().Handshakes)
	require.Zero(t, push.Stats().PeerErrors)
}
