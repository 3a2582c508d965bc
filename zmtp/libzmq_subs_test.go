package zmtp

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// Subscriptions as libzmq keeps them: a SUB counts its subscriptions and
// tells its publishers only when a prefix's count goes from 0 to 1
// (SUBSCRIBE) or from 1 to 0 (CANCEL); a PUB keeps a set of prefixes per
// subscriber, so a repeated SUBSCRIBE changes nothing and one CANCEL ends
// the prefix. Each test runs libzmq (pyzmq) at the other end.

const libzmqSubsPeer = `
import sys, select, zmq

def say(*a):
    print(*a, flush=True)

def stdin_ready(t):
    return select.select([sys.stdin], [], [], t)[0]

ctx = zmq.Context()
mode, ep = sys.argv[1], sys.argv[2]
if mode == "pub-rounds":
    # Rounds of probes, one per topic, until stdin has something.
    s = ctx.socket(zmq.PUB)
    port = s.bind_to_random_port("tcp://127.0.0.1")
    say("tcp://127.0.0.1:%d" % port)
    while not stdin_ready(0.002):
        for topic in (b"t.", b"m1.", b"m2."):
            s.send(topic + b"probe")
elif mode == "xpub-verbose":
    # Every subscription message that arrives, repeated ones included.
    s = ctx.socket(zmq.XPUB)
    s.setsockopt(zmq.XPUB_VERBOSE, 1)
    s.setsockopt(zmq.XPUB_VERBOSER, 1)
    port = s.bind_to_random_port("tcp://127.0.0.1")
    say("tcp://127.0.0.1:%d" % port)
    while True:
        m = s.recv()
        say(("+" if m[:1] == b"\x01" else "-") + m[1:].decode())
        if m[1:] == b"end.":
            break
elif mode in ("sub-twice", "xsub-twice"):
    # Subscribe to t. twice and unsubscribe twice once connected, then to
    # m.; report the first message that arrives after.
    if mode == "sub-twice":
        s = ctx.socket(zmq.SUB)
        s.connect(ep)
        s.setsockopt(zmq.SUBSCRIBE, b"ready.")
        sys.stdin.readline()
        for _ in range(2):
            s.setsockopt(zmq.SUBSCRIBE, b"t.")
        for _ in range(2):
            s.setsockopt(zmq.UNSUBSCRIBE, b"t.")
        s.setsockopt(zmq.SUBSCRIBE, b"m.")
    else:
        s = ctx.socket(zmq.XSUB)
        s.connect(ep)
        s.send(b"\x01ready.")
        sys.stdin.readline()
        for m in (b"\x01t.", b"\x01t.", b"\x00t.", b"\x00t.", b"\x01m."):
            s.send(m)
    say(s.recv_multipart()[0].decode())
    sys.stdin.readline()
s.close(linger=5000)
ctx.term()
`

// recvUntil receives from sub until a message whose first part is want,
// and returns the first parts of those received before it.
func recvUntil(t *testing.T, sub *Socket, want string) []string {
	t.Helper()
	var before []string
	for {
		got := string(recv(t, sub)[0])
		if got == want {
			return before
		}
		before = append(before, got)
	}
}

// Our SUB subscribed to a topic twice and unsubscribed once still receives
// it from libzmq's PUB, and stops after the second Unsubscribe.
func TestLibzmqPubKeepsTopicOfSubSubscribedTwice(t *testing.T) {
	skipWithoutLibzmq(t)
	in, out := startPython(t, libzmqSubsPeer, "pub-rounds", "-")
	defer func() { _, _ = io.WriteString(in, "done\n") }()
	sub := newSocket(t, Sub, Options{})
	require.NoError(t, sub.Subscribe([]byte("t.")))
	require.NoError(t, sub.Subscribe([]byte("t.")))
	require.NoError(t, sub.Connect(line(t, out)))
	recvUntil(t, sub, "t.probe")

	// One Unsubscribe of two: t. stays. The SUBSCRIBE of m1. follows on
	// the same connection, so once an m1. probe arrives libzmq has applied
	// whatever went before it, and every round it sends after carries t.
	require.NoError(t, sub.Unsubscribe([]byte("t.")))
	require.NoError(t, sub.Subscribe([]byte("m1.")))
	recvUntil(t, sub, "m1.probe")
	require.Contains(t, recvUntil(t, sub, "m1.probe"), "t.probe",
		"libzmq's PUB still sends t. after one Unsubscribe of two")

	// The second Unsubscribe cancels: after the m2. marker, a whole round
	// comes without t., not even one our SUB would have to throw away.
	require.NoError(t, sub.Unsubscribe([]byte("t.")))
	require.NoError(t, sub.Subscribe([]byte("m2.")))
	recvUntil(t, sub, "m2.probe")
	thrown := sub.Stats().Unsubscribed
	require.NotContains(t, recvUntil(t, sub, "m2.probe"), "t.probe")
	require.Equal(t, thrown, sub.Stats().Unsubscribed, "libzmq's PUB stopped sending t.")
}

// Our SUB sends SUBSCRIBE when a prefix's count goes from 0 to 1 (and
// each prefix once when it connects), CANCEL when it goes back to 0, and
// nothing for an Unsubscribe of a prefix it does not hold: libzmq's XPUB,
// verbose, reports every subscription message it gets.
func TestSubSendsSubscribeAndCancelOnlyOnTransitions(t *testing.T) {
	skipWithoutLibzmq(t)
	_, out := startPython(t, libzmqSubsPeer, "xpub-verbose", "-")
	sub := newSocket(t, Sub, Options{})
	require.NoError(t, sub.Subscribe([]byte("t.")))
	require.NoError(t, sub.Subscribe([]byte("t.")))
	require.NoError(t, sub.Connect(line(t, out)))
	eventually(t, func() bool { return sub.Stats().Peers == 1 }, "connected")
	require.NoError(t, sub.Subscribe([]byte("t.")))
	for range 3 {
		require.NoError(t, sub.Unsubscribe([]byte("t.")))
	}
	require.NoError(t, sub.Unsubscribe([]byte("t.")), "an Unsubscribe of a prefix not held is no error")
	require.NoError(t, sub.Unsubscribe([]byte("never.")))
	require.NoError(t, sub.Subscribe([]byte("end.")))
	var got []string
	for {
		l := line(t, out)
		got = append(got, l)
		if l == "+end." {
			break
		}
	}
	require.Equal(t, []string{"+t.", "-t.", "+end."}, got)
}

// libzmq's SUB (and XSUB) that subscribed to a topic twice sends one
// CANCEL when it unsubscribes twice: our PUB then sends that topic no
// more, to that peer.
func TestPubDropsTopicOnOneCancelFromLibzmq(t *testing.T) {
	skipWithoutLibzmq(t)
	for _, mode := range []string{"sub-twice", "xsub-twice"} {
		t.Run(mode, func(t *testing.T) {
			pub := newSocket(t, Pub, Options{})
			in, out := startPython(t, libzmqSubsPeer, mode, bind(t, pub, "tcp://127.0.0.1:0"))
			defer func() { _, _ = io.WriteString(in, "done\n") }()
			eventually(t, func() bool { return pub.Subscribers([]byte("ready.")) == 1 }, "libzmq connected")
			_, err := io.WriteString(in, "go\n")
			require.NoError(t, err)
			// The peer's commands are applied in order: once m. is in,
			// the SUBSCRIBEs and the CANCEL of t. before it are too.
			eventually(t, func() bool { return pub.Subscribers([]byte("m.x")) == 1 }, "m. subscribed")
			require.Zero(t, pub.Subscribers([]byte("t.x")), "one CANCEL ends t.")
			require.NoError(t, pub.Send([]byte("t.x")))
			require.NoError(t, pub.Send([]byte("m.end")))
			// An XSUB does not filter: it would report t.x first.
			require.Equal(t, "m.end", line(t, out))
		})
	}
}

// A PUB's set per subscriber, without the network: a repeated SUBSCRIBE
// changes nothing, one CANCEL removes the prefix, a CANCEL of a prefix
// not held changes nothing.
func TestPeerSubscriptionsAreASet(t *testing.T) {
	var p peer
	for range 2 {
		require.NoError(t, p.subscription(true, []byte("a.")))
	}
	require.NoError(t, p.subscription(true, []byte("b.")))
	require.Len(t, p.subs.list, 2)
	require.Equal(t, len("a.")+len("b."), p.subs.bytes)
	require.NoError(t, p.subscription(false, []byte("a.")))
	require.False(t, p.subscribed([]byte("a.x")))
	require.True(t, p.subscribed([]byte("b.x")))
	require.NoError(t, p.subscription(false, []byte("zz")))
	require.Equal(t, len("b."), p.subs.bytes)
	require.True(t, bytes.Equal(p.subs.list[0].prefix, []byte("b.")))
}
