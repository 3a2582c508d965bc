package zmtp

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// CURVE against libzmq (pyzmq): the peer program of libzmq_test.go with
// every socket made a CURVE client or server from the environment.
var curvePeer = curveProgram(libzmqPeer)

// curveProgram makes every socket of a pyzmq program a CURVE client or
// server, from the environment.
func curveProgram(program string) string { return curveReplacer.Replace(program) }

var curveReplacer = strings.NewReplacer(
	"ctx = zmq.Context()\n", `import os
class CurveContext(zmq.Context):
    def socket(self, t, **kw):
        s = super().socket(t, **kw)
        s.setsockopt(zmq.CURVE_PUBLICKEY, os.environ["CURVE_PUBLIC"].encode())
        s.setsockopt(zmq.CURVE_SECRETKEY, os.environ["CURVE_SECRET"].encode())
        if os.environ["CURVE_ROLE"] == "server":
            s.setsockopt(zmq.CURVE_SERVER, 1)
        else:
            s.setsockopt(zmq.CURVE_SERVERKEY, os.environ["CURVE_SERVERKEY"].encode())
        return s
ctx = CurveContext()
`,
	"elif mode == \"heartbeat\":", `elif mode == "connect":
    s = ctx.socket(zmq.PUSH)
    s.connect(ep)
    sys.stdin.readline()
elif mode == "heartbeat":`,
	"s.close(linger=5000)", `s.close(linger=int(os.environ.get("PEER_LINGER", "5000")))`,
)

// curvePair is one side's long-term keys.
type curvePair struct{ pub, sec CurveKey }

func newCurvePair(t testing.TB) curvePair {
	t.Helper()
	pub, sec, err := NewCurveKeyPair()
	require.NoError(t, err)
	return curvePair{pub, sec}
}

// curveOpts returns our socket's CURVE: the server admitting allow, or a
// client of server.
func curveOpts(me curvePair, asServer bool, server CurveKey, allow ...CurveKey) *Curve {
	if asServer {
		return &Curve{Public: me.pub, Secret: me.sec, Server: true, Allow: allow}
	}
	return &Curve{Public: me.pub, Secret: me.sec, ServerKey: server}
}

// startCurveLibzmq starts the libzmq peer with keys py, as the CURVE
// server when weServe is false, else as a client of ours.
func startCurveLibzmq(t *testing.T, mode, ep string, py curvePair, weServe bool, ours CurveKey) (io.WriteCloser, func() string) {
	t.Helper()
	t.Setenv("CURVE_PUBLIC", py.pub.Z85())
	t.Setenv("CURVE_SECRET", py.sec.Z85())
	if weServe {
		t.Setenv("CURVE_ROLE", "client")
		t.Setenv("CURVE_SERVERKEY", ours.Z85())
	} else {
		t.Setenv("CURVE_ROLE", "server")
	}
	in, out := startPython(t, curvePeer, mode, ep)
	return in, func() string { return line(t, out) }
}

func TestInteropLibzmqCurve(t *testing.T) {
	skipWithoutLibzmq(t)
	for _, weServe := range []bool{true, false} {
		role := "client"
		if weServe {
			role = "server"
		}
		t.Run("libzmq PUSH to our PULL, we are "+role, func(t *testing.T) {
			go1, py := newCurvePair(t), newCurvePair(t)
			pull := newSocket(t, Pull, Options{Curve: curveOpts(go1, weServe, py.pub, py.pub)})
			startCurveLibzmq(t, "push", bind(t, pull, "tcp://127.0.0.1:0"), py, weServe, go1.pub)
			for _, m := range interopMessages() {
				requireSame(t, m, recv(t, pull))
			}
			require.Zero(t, pull.Stats().Rejected)
		})
		t.Run("our PUSH to libzmq PULL, we are "+role, func(t *testing.T) {
			go1, py := newCurvePair(t), newCurvePair(t)
			_, next := startCurveLibzmq(t, "pull", "-", py, weServe, go1.pub)
			push := newSocket(t, Push, Options{Curve: curveOpts(go1, weServe, py.pub, py.pub)})
			require.NoError(t, push.Connect(next()))
			for _, m := range interopMessages() {
				require.NoError(t, push.Send(m...))
			}
			for range interopMessages() {
				require.Equal(t, "ok", next())
			}
		})
		t.Run("libzmq PUB to our SUB, we are "+role, func(t *testing.T) {
			go1, py := newCurvePair(t), newCurvePair(t)
			in, next := startCurveLibzmq(t, "pub", "-", py, weServe, go1.pub)
			sub := newSocket(t, Sub, Options{Curve: curveOpts(go1, weServe, py.pub, py.pub)})
			require.NoError(t, sub.Subscribe([]byte("t.")))
			require.NoError(t, sub.Connect(next()))
			require.Equal(t, [][]byte{[]byte("t.probe")}, recv(t, sub))
			_, err := io.WriteString(in, "go\n")
			require.NoError(t, err)
			recvInteropSkippingProbes(t, sub)
			require.Zero(t, sub.Stats().Unsubscribed, "libzmq filtered by our SUBSCRIBE, sent inside a MESSAGE")
			_, _ = io.WriteString(in, "done\n")
		})
		t.Run("our PUB to libzmq SUB, we are "+role, func(t *testing.T) {
			go1, py := newCurvePair(t), newCurvePair(t)
			pub := newSocket(t, Pub, Options{Curve: curveOpts(go1, weServe, py.pub, py.pub)})
			_, next := startCurveLibzmq(t, "sub", bind(t, pub, "tcp://127.0.0.1:0"), py, weServe, go1.pub)
			eventually(t, func() bool {
				ps := *pub.peersV.Load()
				return len(ps) == 1 && ps[0].subscribed([]byte("t.x"))
			}, "libzmq's subscription reaches our publisher")
			require.NoError(t, pub.Send([]byte("x.filtered")))
			for _, m := range interopMessages() {
				require.NoError(t, pub.Send(m...))
			}
			for range interopMessages() {
				require.Equal(t, "ok", next())
			}
		})
	}
}

// A libzmq client whose key the server does not admit is refused, counted
// and logged; nothing it sent is delivered.
func TestLibzmqCurveUnknownClientRefused(t *testing.T) {
	skipWithoutLibzmq(t)
	go1, py, known := newCurvePair(t), newCurvePair(t), newCurvePair(t)
	pull := newSocket(t, Pull, Options{Curve: curveOpts(go1, true, CurveKey{}, known.pub)})
	t.Setenv("PEER_LINGER", "0")
	startCurveLibzmq(t, "connect", bind(t, pull, "tcp://127.0.0.1:0"), py, true, go1.pub)
	eventually(t, func() bool { return pull.Stats().AuthRefused >= 1 }, "the unknown client is refused")
	st := pull.Stats()
	require.GreaterOrEqual(t, st.Rejected, st.AuthRefused)
	require.Zero(t, st.Received)
	require.Zero(t, st.Authorized)
	require.Zero(t, st.Handshakes)
}

// Keys that libzmq made parse, and the public key we derive from the
// secret is libzmq's.
func TestCurveKeysFromLibzmq(t *testing.T) {
	skipWithoutLibzmq(t)
	_, next := startPython(t, `
import sys, zmq
pub, sec = zmq.curve_keypair()
import zmq.utils.z85
print(pub.decode(), sec.decode(), zmq.utils.z85.encode(bytes(range(32))).decode(), flush=True)
`, "-", "-")
	f := strings.Fields(line(t, next))
	require.Len(t, f, 3)
	pub, err := ParseCurveKey(f[0])
	require.NoError(t, err)
	sec, err := ParseCurveKey(f[1])
	require.NoError(t, err)
	derived, err := CurvePublicKey(sec)
	require.NoError(t, err)
	require.Equal(t, pub, derived)
	require.Equal(t, f[0], pub.Z85())
	seq := make([]byte, 32)
	for i := range seq {
		seq[i] = byte(i)
	}
	z, err := Z85Encode(seq)
	require.NoError(t, err)
	require.Equal(t, f[2], z)
}

// REQ/REP with CURVE against libzmq: our REP as the server of libzmq's
// REQ, our REQ as the client of libzmq's REP.
func TestInteropLibzmqCurveReqRep(t *testing.T) {
	skipWithoutLibzmq(t)
	t.Run("libzmq REQ to our REP, we are server", func(t *testing.T) {
		go1, py := newCurvePair(t), newCurvePair(t)
		rep := newSocket(t, Rep, Options{Curve: curveOpts(go1, true, CurveKey{}, py.pub)})
		ep := bind(t, rep, "tcp://127.0.0.1:0")
		t.Setenv("CURVE_PUBLIC", py.pub.Z85())
		t.Setenv("CURVE_SECRET", py.sec.Z85())
		t.Setenv("CURVE_ROLE", "client")
		t.Setenv("CURVE_SERVERKEY", go1.pub.Z85())
		_, out := startPython(t, curveProgram(libzmqReqRep), "req", ep)
		serveReplies(t, rep)
		for range interopMessages() {
			require.Equal(t, "ok", line(t, out))
		}
	})
	t.Run("our REQ to libzmq REP, we are client", func(t *testing.T) {
		go1, py := newCurvePair(t), newCurvePair(t)
		t.Setenv("CURVE_PUBLIC", py.pub.Z85())
		t.Setenv("CURVE_SECRET", py.sec.Z85())
		t.Setenv("CURVE_ROLE", "server")
		_, out := startPython(t, curveProgram(libzmqReqRep), "rep", "-")
		req := newSocket(t, Req, Options{Curve: curveOpts(go1, false, py.pub)})
		require.NoError(t, req.Connect(line(t, out)))
		askAll(t, req)
		for range interopMessages() {
			require.Equal(t, "ok", line(t, out))
		}
	})
}
