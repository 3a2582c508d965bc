package zmtp

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Interoperability with libzmq itself (through pyzmq), which speaks ZMTP
// 3.1: SUBSCRIBE and CANCEL as commands, PING and PONG. The test runs
// where /usr/bin/python3 has the zmq module (Debian: python3-zmq) and is
// skipped elsewhere; go-zeromq/zmq4 covers the same ground everywhere.

// libzmqPrelude is what every Python peer of these tests starts with: the
// interop messages (interopMessages' in Python) and a flushed print.
const libzmqPrelude = `
import sys, select, zmq

def pattern(seed, n):
    return bytes(((seed*131 + i*7 + (i >> 8)) & 0xff) for i in range(n))

def messages():
    return [
        [b"t.hello"],
        [b"t.multi", b"part two", b"", b"four"],
        [b"t.255", pattern(5, 255 - 5)],
        [b"t.edge", pattern(6, 255), pattern(7, 256)],
        [b"t.big", pattern(8, 1 << 20)],
    ]

def say(*a):
    print(*a, flush=True)
`

const libzmqPeer = libzmqPrelude + `

ctx = zmq.Context()
mode, ep = sys.argv[1], sys.argv[2]
if mode == "push":
    s = ctx.socket(zmq.PUSH)
    s.connect(ep)
    for m in messages():
        s.send_multipart(m)
elif mode == "pull":
    s = ctx.socket(zmq.PULL)
    port = s.bind_to_random_port("tcp://127.0.0.1")
    say("tcp://127.0.0.1:%d" % port)
    for i, want in enumerate(messages()):
        got = s.recv_multipart()
        say("ok" if got == want else "mismatch %d" % i)
elif mode == "pub":
    s = ctx.socket(zmq.PUB)
    port = s.bind_to_random_port("tcp://127.0.0.1")
    say("tcp://127.0.0.1:%d" % port)
    while not select.select([sys.stdin], [], [], 0.01)[0]:
        s.send_multipart([b"t.probe"])
    sys.stdin.readline()
    s.send_multipart([b"x.filtered"])
    for m in messages():
        s.send_multipart(m)
    sys.stdin.readline()
elif mode == "sub":
    s = ctx.socket(zmq.SUB)
    s.setsockopt(zmq.SUBSCRIBE, b"t.")
    s.connect(ep)
    for i, want in enumerate(messages()):
        got = s.recv_multipart()
        say("ok" if got == want else "mismatch %d" % i)
elif mode == "dealer":
    s = ctx.socket(zmq.DEALER)
    s.setsockopt(zmq.IDENTITY, b"py")
    s.connect(ep)
    for m in messages():
        s.send_multipart(m)
        got = s.recv_multipart()
        say("ok" if got == [b"re"] + m else "mismatch")
elif mode == "router":
    s = ctx.socket(zmq.ROUTER)
    port = s.bind_to_random_port("tcp://127.0.0.1")
    say("tcp://127.0.0.1:%d" % port)
    for m in messages():
        got = s.recv_multipart()
        say("ok" if got == [b"go"] + m else "mismatch")
        s.send_multipart([got[0], b"re"] + m)
elif mode == "heartbeat":
    s = ctx.socket(zmq.PUSH)
    s.setsockopt(zmq.HEARTBEAT_IVL, 10)
    s.setsockopt(zmq.HEARTBEAT_TIMEOUT, 400)
    s.connect(ep)
    s.send_multipart([b"before"])
    sys.stdin.readline()
    s.send_multipart([b"after"])
# Close, then wait for what is queued to leave: a process that exits
# without terminating its context loses the messages libzmq's I/O thread
# has not written yet.
s.close(linger=5000)
ctx.term()
`

// startLibzmq starts the Python peer in mode against ep; it returns its
// stdin and a reader of its stdout lines.
func startLibzmq(t *testing.T, mode, ep string) (io.WriteCloser, *bufio.Reader) {
	t.Helper()
	return startPython(t, libzmqPeer, mode, ep)
}

// startPython runs program with /usr/bin/python3 and the arguments mode
// and ep; it returns its stdin and a reader of its stdout lines. The
// process ends when its stdin closes (killed after 10 s otherwise).
func startPython(t *testing.T, program, mode, ep string) (io.WriteCloser, *bufio.Reader) {
	t.Helper()
	script := filepath.Join(t.TempDir(), "peer.py")
	require.NoError(t, os.WriteFile(script, []byte(program), 0o600))
	cmd := exec.Command("/usr/bin/python3", script, mode, ep)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = in.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	return in, bufio.NewReader(out)
}

func line(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	s, err := r.ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSpace(s)
}

// skipWithoutLibzmq skips a test where /usr/bin/python3 cannot import zmq.
func skipWithoutLibzmq(t *testing.T) {
	t.Helper()
	if exec.Command("/usr/bin/python3", "-c", "import zmq").Run() != nil {
		t.Skip("no libzmq here: /usr/bin/python3 without the zmq module (python3-zmq)")
	}
}

func TestInteropLibzmq(t *testing.T) {
	skipWithoutLibzmq(t)
	t.Run("libzmq PUSH to our PULL", func(t *testing.T) {
		pull := newSocket(t, Pull, Options{})
		startLibzmq(t, "push", bind(t, pull, "tcp://127.0.0.1:0"))
		for _, m := range interopMessages() {
			requireSame(t, m, recv(t, pull))
		}
	})
	t.Run("our PUSH to libzmq PULL", func(t *testing.T) {
		_, out := startLibzmq(t, "pull", "-")
		push := newSocket(t, Push, Options{})
		require.NoError(t, push.Connect(line(t, out)))
		for _, m := range interopMessages() {
			require.NoError(t, push.Send(m...))
		}
		for range interopMessages() {
			require.Equal(t, "ok", line(t, out))
		}
	})
	t.Run("libzmq PUB to our SUB", func(t *testing.T) {
		in, out := startLibzmq(t, "pub", "-")
		sub := newSocket(t, Sub, Options{})
		require.NoError(t, sub.Subscribe([]byte("t.")))
		require.NoError(t, sub.Connect(line(t, out)))
		require.Equal(t, [][]byte{[]byte("t.probe")}, recv(t, sub))
		require.Equal(t, byte(1), (*sub.peersV.Load())[0].minor, "libzmq speaks 3.1: SUBSCRIBE went as a command")
		_, err := io.WriteString(in, "go\n")
		require.NoError(t, err)
		recvInteropSkippingProbes(t, sub)
		require.Zero(t, sub.Stats().Unsubscribed, "libzmq filtered by our SUBSCRIBE")
		_, _ = io.WriteString(in, "done\n")
	})
	t.Run("our PUB to libzmq SUB", func(t *testing.T) {
		pub := newSocket(t, Pub, Options{})
		_, out := startLibzmq(t, "sub", bind(t, pub, "tcp://127.0.0.1:0"))
		eventually(t, func() bool {
			ps := *pub.peersV.Load()
			return len(ps) == 1 && ps[0].subscribed([]byte("t.x"))
		}, "libzmq's subscription reaches our publisher")
		require.NoError(t, pub.Send([]byte("x.filtered")))
		for _, m := range interopMessages() {
			require.NoError(t, pub.Send(m...))
		}
		for range interopMessages() {
			require.Equal(t, "ok", line(t, out))
		}
	})
	t.Run("libzmq DEALER to our ROUTER and back", func(t *testing.T) {
		router := newSocket(t, Router, Options{})
		_, out := startLibzmq(t, "dealer", bind(t, router, "tcp://127.0.0.1:0"))
		for _, m := range interopMessages() {
			got := recv(t, router)
			requireSame(t, append([][]byte{[]byte("py")}, m...), got)
			require.NoError(t, router.Send(append([][]byte{[]byte("py"), []byte("re")}, m...)...))
			require.Equal(t, "ok", line(t, out))
		}
	})
	t.Run("our DEALER to libzmq ROUTER and back", func(t *testing.T) {
		_, out := startLibzmq(t, "router", "-")
		dealer := newSocket(t, Dealer, Options{Identity: []byte("go")})
		require.NoError(t, dealer.Connect(line(t, out)))
		for _, m := range interopMessages() {
			require.NoError(t, dealer.Send(m...))
			require.Equal(t, "ok", line(t, out))
			requireSame(t, append([][]byte{[]byte("re")}, m...), recv(t, dealer))
		}
	})
	t.Run("heartbeats both ways", func(t *testing.T) {
		pull := newSocket(t, Pull, Options{Heartbeat: 10 * time.Millisecond, HeartbeatTimeout: 400 * time.Millisecond})
		in, _ := startLibzmq(t, "heartbeat", bind(t, pull, "tcp://127.0.0.1:0"))
		require.Equal(t, [][]byte{[]byte("before")}, recv(t, pull))
		time.Sleep(900 * time.Millisecond) // two timeouts, each side's, without data
		_, err := io.WriteString(in, "go\n")
		require.NoError(t, err)
		require.Equal(t, [][]byte{[]byte("after")}, recv(t, pull))
		require.Equal(t, uint64(1), pull.Stats().Handshakes, "nobody dropped the connection")
		require.Zero(t, pull.Stats().PeerErrors)
	})
}

// recvInteropSkippingProbes receives the interop messages on sub, in order,
// past the "t.probe" messages a PUB peer sends until it is told to go.
func recvInteropSkippingProbes(t *testing.T, sub *Socket) {
	t.Helper()
	for _, m := range interopMessages() {
		got := recv(t, sub)
		for string(got[0]) == "t.probe" {
			got = recv(t, sub)
		}
		requireSame(t, m, got)
	}
}
