package zmtp

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/zmtpcurve"
	"github.com/dutyrt/duty/internal/zmtpwire"
)

// The test vector of Z85's specification (RFC 32).
func TestZ85Vector(t *testing.T) {
	b := []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}
	s, err := Z85Encode(b)
	require.NoError(t, err)
	require.Equal(t, "HelloWorld", s)
	got, err := Z85Decode("HelloWorld")
	require.NoError(t, err)
	require.Equal(t, b, got)
	_, err = Z85Encode([]byte{1, 2, 3})
	require.ErrorIs(t, err, ErrZ85)
	for _, bad := range []string{"Hell", "Hello World", "Hell\"", "#####"} {
		_, err := Z85Decode(bad)
		require.ErrorIs(t, err, ErrZ85, bad)
	}
	_, err = ParseCurveKey("HelloWorld")
	require.ErrorIs(t, err, ErrZ85)
}

// FuzzZ85 decodes arbitrary text (ErrZ85 or bytes that encode back to
// it) and round-trips arbitrary bytes.
func FuzzZ85(f *testing.F) {
	f.Add([]byte("HelloWorld"))
	f.Add([]byte("#####"))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		if out, err := Z85Decode(string(b)); err == nil {
			s, err := Z85Encode(out)
			require.NoError(t, err)
			require.Equal(t, string(b), s)
		} else {
			require.ErrorIs(t, err, ErrZ85)
		}
		b = b[:len(b)/4*4]
		s, err := Z85Encode(b)
		require.NoError(t, err)
		back, err := Z85Decode(s)
		require.NoError(t, err)
		require.True(t, bytes.Equal(b, back))
	})
}

func TestCurveConfigChecked(t *testing.T) {
	me, other := newCurvePair(t), newCurvePair(t)
	for name, cv := range map[string]*Curve{
		"no keys":              {Server: true, AllowAny: true},
		"public not secret's":  {Public: other.pub, Secret: me.sec, Server: true, AllowAny: true},
		"server admits no one": {Public: me.pub, Secret: me.sec, Server: true},
		"client without key":   {Public: me.pub, Secret: me.sec},
	} {
		_, err := NewSocket(Pull, Options{Curve: cv})
		require.ErrorIs(t, err, ErrCurveConfig, name)
	}
}

// curvePairOf returns a server socket and a connected client socket, both
// with CURVE, the client's key admitted.
func curvePairOf(t *testing.T, st, ct Type, sopt, copt Options) (server, client *Socket) {
	t.Helper()
	sk, ck := newCurvePair(t), newCurvePair(t)
	sopt.Curve = curveOpts(sk, true, CurveKey{}, ck.pub)
	copt.Curve = curveOpts(ck, false, sk.pub)
	server = newSocket(t, st, sopt)
	client = newSocket(t, ct, copt)
	require.NoError(t, client.Connect(bind(t, server, "tcp://127.0.0.1:0")))
	return server, client
}

func TestCurvePushPullBothWays(t *testing.T) {
	// PINGs often, boxed like the rest; a timeout generous enough for
	// -race and a loaded machine.
	opt := Options{Heartbeat: 20 * time.Millisecond, HeartbeatTimeout: 5 * time.Second}
	for _, serverPulls := range []bool{true, false} {
		t.Run(fmt.Sprint("server pulls ", serverPulls), func(t *testing.T) {
			var push, pull *Socket
			if serverPulls {
				pull, push = curvePairOf(t, Pull, Push, opt, opt)
			} else {
				push, pull = curvePairOf(t, Push, Pull, opt, opt)
			}
			for _, m := range interopMessages() {
				require.NoError(t, push.Send(m...))
			}
			for _, m := range interopMessages() {
				requireSame(t, m, recv(t, pull))
			}
			// Across heartbeats (PING and PONG boxed too), and a large
			// message written by reference.
			time.Sleep(100 * time.Millisecond)
			big := pattern(9, 100<<10)
			require.NoError(t, push.SendContext(t.Context(), []byte("t.ref"), big))
			requireSame(t, [][]byte{[]byte("t.ref"), big}, recv(t, pull))
			require.Zero(t, pull.Stats().PeerErrors+push.Stats().PeerErrors)
			require.Equal(t, uint64(1), pull.Stats().Handshakes)
		})
	}
}

func TestCurvePubSubAndDealerRouter(t *testing.T) {
	pub, sub := curvePairOf(t, Pub, Sub, Options{}, Options{})
	require.NoError(t, sub.Subscribe([]byte("t.")))
	eventually(t, func() bool { return pub.Subscribers([]byte("t.x")) == 1 }, "the boxed SUBSCRIBE arrives")
	require.NoError(t, pub.Send([]byte("x.no")))
	require.NoError(t, pub.Send([]byte("t.yes"), []byte("body")))
	requireSame(t, [][]byte{[]byte("t.yes"), []byte("body")}, recv(t, sub))
	require.Zero(t, sub.Stats().Unsubscribed)

	router, dealer := curvePairOf(t, Router, Dealer, Options{}, Options{Identity: []byte("d1")})
	require.NoError(t, dealer.Send([]byte("hi")))
	requireSame(t, [][]byte{[]byte("d1"), []byte("hi")}, recv(t, router))
	require.NoError(t, router.Send([]byte("d1"), []byte("back")))
	requireSame(t, [][]byte{[]byte("back")}, recv(t, dealer))
}

// A server's Authorize sees each client key; its refusal is counted and
// the client's messages are never delivered.
func TestCurveAuthorizeDecides(t *testing.T) {
	sk, good, bad := newCurvePair(t), newCurvePair(t), newCurvePair(t)
	var asked atomic.Int32
	pull := newSocket(t, Pull, Options{Curve: &Curve{Public: sk.pub, Secret: sk.sec, Server: true,
		Authorize: func(k CurveKey, remote net.Addr) error {
			asked.Add(1)
			if k == good.pub {
				return nil
			}
			return errors.New("not on the list")
		}}})
	ep := bind(t, pull, "tcp://127.0.0.1:0")
	evil := newSocket(t, Push, Options{Curve: curveOpts(bad, false, sk.pub)})
	require.NoError(t, evil.Connect(ep))
	require.NoError(t, evil.Send([]byte("from the refused")))
	eventually(t, func() bool { return pull.Stats().AuthRefused >= 1 }, "the bad key is refused")
	friend := newSocket(t, Push, Options{Curve: curveOpts(good, false, sk.pub)})
	require.NoError(t, friend.Connect(ep))
	require.NoError(t, friend.Send([]byte("from the admitted")))
	requireSame(t, [][]byte{[]byte("from the admitted")}, recv(t, pull))
	eventually(t, func() bool { return pull.Stats().Received == 1 }, "counted just after the hand-over")
	st := pull.Stats()
	require.Equal(t, uint64(1), st.Authorized)
	require.GreaterOrEqual(t, st.Rejected, st.AuthRefused)
}

// With CURVE on, a NULL peer is refused, in either direction.
func TestCurveRefusesNull(t *testing.T) {
	sk := newCurvePair(t)
	pull := newSocket(t, Pull, Options{Curve: curveOpts(sk, true, CurveKey{}, sk.pub)})
	ep := bind(t, pull, "tcp://127.0.0.1:0")
	r := dialRaw(t, ep)
	g := zmtpwire.Greeting()
	r.write(g[:])
	r.send([]byte("clear text"))
	r.waitClosed()
	eventually(t, func() bool { return pull.Stats().Rejected == 1 }, "the NULL peer is counted")
	require.Zero(t, pull.Stats().Received)

	null := newSocket(t, Pull, Options{})
	ck := newCurvePair(t)
	push := newSocket(t, Push, Options{Curve: curveOpts(ck, false, sk.pub)})
	require.NoError(t, push.Connect(bind(t, null, "tcp://127.0.0.1:0")))
	eventually(t, func() bool { return push.Stats().Rejected >= 1 && null.Stats().Rejected >= 1 }, "both refuse")
}

// mutConn hands each Write's bytes to mut first.
type mutConn struct {
	net.Conn
	mut func(b []byte) []byte
}

func (m *mutConn) Write(b []byte) (int, error) {
	if _, err := m.Conn.Write(m.mut(bytes.Clone(b))); err != nil {
		return 0, err
	}
	return len(b), nil
}

// hostileClient dials ep and runs a CURVE client's handshake whose writes
// pass through mut; it returns the raw connection and, when the
// handshake completed, the client's connection.
func hostileClient(t *testing.T, ep string, cv *Curve, mut func([]byte) []byte) (net.Conn, *zmtpcurve.Conn, error) {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(ep, "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	mc := &mutConn{Conn: c, mut: mut}
	g := zmtpwire.CurveGreeting(false)
	_, err = mc.Write(g[:])
	require.NoError(t, err)
	_, err = zmtpwire.ReadGreeting(c, zmtpwire.MechanismCURVE)
	require.NoError(t, err)
	_, cc, err := zmtpcurve.Handshake(mc, curveConfig(cv, Push, &Options{MaxMessageSize: DefaultMaxMessageSize}, nil))
	if cc != nil {
		cc.Conn = c
	}
	return c, cc, err
}

// isCommand reports whether b is one frame of command name.
func isCommand(b []byte, name string) bool {
	hdr := zmtpwire.ShortHeader
	if len(b) > 0 && b[0]&zmtpwire.FlagLong != 0 {
		hdr = zmtpwire.LongHeader
	}
	return len(b) > hdr+1+len(name) && b[0]&zmtpwire.FlagCommand != 0 && string(b[hdr+1:hdr+1+len(name)]) == name
}

// Hostile CURVE clients: each is disconnected and counted, and nothing
// it sent is delivered, while the socket goes on serving.
func TestCurveHostilePeers(t *testing.T) {
	sk, ck := newCurvePair(t), newCurvePair(t)
	pull := newSocket(t, Pull, Options{Curve: curveOpts(sk, true, CurveKey{}, ck.pub)})
	ep := bind(t, pull, "tcp://127.0.0.1:0")
	client := curveOpts(ck, false, sk.pub)
	same := func(b []byte) []byte { return b }
	rejected := func(t *testing.T, n uint64) {
		t.Helper()
		eventually(t, func() bool { return pull.Stats().Rejected == n }, "the hostile peer is counted")
	}

	t.Run("garbage HELLO", func(t *testing.T) {
		_, _, err := hostileClient(t, ep, client, func(b []byte) []byte {
			if isCommand(b, "HELLO") {
				for i := len(b) - 80; i < len(b); i++ {
					b[i] ^= 0x5a
				}
			}
			return b
		})
		require.Error(t, err)
		rejected(t, 1)
	})
	t.Run("wrong cookie", func(t *testing.T) {
		_, _, err := hostileClient(t, ep, client, func(b []byte) []byte {
			if isCommand(b, "INITIATE") {
				b[2+1+8+20] ^= 1 // inside the cookie's box
			}
			return b
		})
		require.Error(t, err)
		rejected(t, 2)
	})
	t.Run("replayed INITIATE", func(t *testing.T) {
		// A good connection, recorded: greeting, HELLO, INITIATE, and a
		// MESSAGE. Replayed whole on a new connection, its INITIATE
		// carries a cookie of the first connection's.
		var rec bytes.Buffer
		c, cc, err := hostileClient(t, ep, client, func(b []byte) []byte { rec.Write(b); return b })
		require.NoError(t, err)
		_, err = cc.Write(zmtpwire.AppendMessage(nil, [][]byte{[]byte("recorded")}))
		require.NoError(t, err)
		requireSame(t, [][]byte{[]byte("recorded")}, recv(t, pull))
		_ = c.Close()
		var msg bytes.Buffer
		cc.Conn = &mutConn{Conn: nullConn{}, mut: func(b []byte) []byte { msg.Write(b); return b }}
		_, err = cc.Write(zmtpwire.AppendMessage(nil, [][]byte{[]byte("replayed")}))
		require.NoError(t, err)
		r := dialRaw(t, ep)
		r.write(append(rec.Bytes(), msg.Bytes()...))
		r.waitClosed()
		rejected(t, 3)
	})
	t.Run("MESSAGE that fails authentication", func(t *testing.T) {
		before := pull.Stats().PeerErrors
		c, cc, err := hostileClient(t, ep, client, same)
		require.NoError(t, err)
		var msg bytes.Buffer
		cc.Conn = &mutConn{Conn: c, mut: func(b []byte) []byte { msg.Write(b); b[len(b)-3] ^= 1; return b }}
		_, err = cc.Write(zmtpwire.AppendMessage(nil, [][]byte{[]byte("forged")}))
		require.NoError(t, err)
		(&rawPeer{t: t, c: c}).waitClosed()
		eventually(t, func() bool { return pull.Stats().PeerErrors == before+1 }, "counted as a peer error")
	})
	t.Run("replayed MESSAGE", func(t *testing.T) {
		before := pull.Stats().PeerErrors
		c, cc, err := hostileClient(t, ep, client, same)
		require.NoError(t, err)
		var msg []byte
		cc.Conn = &mutConn{Conn: c, mut: func(b []byte) []byte { msg = append(msg, b...); return b }}
		_, err = cc.Write(zmtpwire.AppendMessage(nil, [][]byte{[]byte("once")}))
		require.NoError(t, err)
		requireSame(t, [][]byte{[]byte("once")}, recv(t, pull))
		_, err = c.Write(msg) // the same nonce again
		require.NoError(t, err)
		(&rawPeer{t: t, c: c}).waitClosed()
		eventually(t, func() bool { return pull.Stats().PeerErrors == before+1 }, "counted as a peer error")
	})
	// Nothing hostile was delivered: two good messages only, and a good
	// client still gets through.
	push := newSocket(t, Push, Options{Curve: client})
	require.NoError(t, push.Connect(ep))
	require.NoError(t, push.Send([]byte("good")))
	requireSame(t, [][]byte{[]byte("good")}, recv(t, pull))
	// Received is counted just after the hand-over.
	eventually(t, func() bool { return pull.Stats().Received == 3 }, "three good messages received")
	require.Equal(t, uint64(3), pull.Stats().Rejected)
}

// nullConn swallows writes.
type nullConn struct{ net.Conn }

func (nullConn) Write(b []byte) (int, error) { return len(b), nil }

// With CURVE too, a message costs no allocation once the connection is
// up: the boxes are sealed into and opened in buffers that are reused.
func TestCurveSendAndReceiveAllocateNothing(t *testing.T) {
	skipUnderRace(t)
	pull, push := curvePairOf(t, Pull, Push, Options{}, Options{})
	small, large := make([]byte, 32), make([]byte, 64<<10)
	ctx := t.Context()
	var m Message
	run := func() {
		if err := push.Send(small, large); err != nil {
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
}
