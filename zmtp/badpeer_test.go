package zmtp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/zmtpwire"
)

// rawPeer is a hand-driven ZMTP peer for the tests: it writes what the
// test says, right or wrong.
type rawPeer struct {
	t testing.TB
	c net.Conn
}

func dialRaw(t testing.TB, addr string) *rawPeer {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimPrefix(addr, "tcp://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return &rawPeer{t: t, c: c}
}

func (r *rawPeer) write(b []byte) { _, _ = r.c.Write(b) }

// handshake sends a good greeting and READY as a socket of type typ and
// reads the other side's.
func (r *rawPeer) handshake(typ Type) {
	g := zmtpwire.Greeting()
	r.write(g[:])
	_, err := zmtpwire.ReadGreeting(r.c, zmtpwire.MechanismNULL)
	require.NoError(r.t, err)
	e := zmtpwire.NewEncoder(0)
	e.Command("READY", zmtpwire.ReadyProperties(typ.String(), nil))
	_, err = e.WriteTo(r.c)
	require.NoError(r.t, err)
	d := zmtpwire.NewDecoder(r.c, 0, 0)
	k, err := d.Next()
	require.NoError(r.t, err)
	require.Equal(r.t, zmtpwire.KindCommand, k)
}

func (r *rawPeer) send(parts ...[]byte) {
	e := zmtpwire.NewEncoder(0)
	e.Message(parts...)
	_, _ = e.WriteTo(r.c)
}

// waitClosed reads until the other side closes the connection.
func (r *rawPeer) waitClosed() {
	_ = r.c.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, r.c)
	if err != nil { // a reset is a close too; a timeout is not
		var ne net.Error
		require.False(r.t, errors.As(err, &ne) && ne.Timeout(), "the socket closes the connection")
	}
}

// Each kind of bad peer is disconnected cleanly and counted, while a good
// peer's messages keep arriving, exactly once each.
func TestBadPeersAreDisconnectedAndCounted(t *testing.T) {
	const maxMsg = 64 << 10
	pull := newSocket(t, Pull, Options{MaxMessageSize: maxMsg, HandshakeTimeout: 200 * time.Millisecond})
	addr := bind(t, pull, "tcp://127.0.0.1:0")
	good := newSocket(t, Push, Options{})
	require.NoError(t, good.Connect(addr))

	sent := 0
	sendGood := func() {
		require.NoError(t, good.Send([]byte(fmt.Sprint(sent))))
		require.Equal(t, [][]byte{[]byte(fmt.Sprint(sent))}, recv(t, pull))
		sent++
	}
	sendGood()

	bad := []struct {
		name      string
		rejected  bool // refused in the handshake (else: a peer error)
		misbehave func(r *rawPeer)
	}{
		{"truncated greeting", true, func(r *rawPeer) { r.write([]byte{0xff, 0, 0}); _ = r.c.(*net.TCPConn).CloseWrite() }},
		{"silent in the greeting", true, func(r *rawPeer) { r.write([]byte{0xff, 0, 0}) }},
		{"wrong signature", true, func(r *rawPeer) {
			g := zmtpwire.Greeting()
			g[9] = 0x7e
			r.write(g[:])
		}},
		{"ZMTP 2", true, func(r *rawPeer) {
			g := zmtpwire.Greeting()
			g[zmtpwire.OffMajor] = 2
			r.write(g[:])
		}},
		{"unknown mechanism", true, func(r *rawPeer) {
			g := zmtpwire.Greeting()
			copy(g[zmtpwire.OffMechanism:zmtpwire.OffMechanism+zmtpwire.MechanismLen], "CURVE\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00")
			r.write(g[:])
		}},
		{"no READY", true, func(r *rawPeer) {
			g := zmtpwire.Greeting()
			r.write(g[:])
			r.send([]byte("data before READY"))
		}},
		{"oversized frame", false, func(r *rawPeer) {
			r.handshake(Push)
			hdr := []byte{zmtpwire.FlagLong, 0, 0, 0, 0, 0, 0, 0, 0}
			binary.BigEndian.PutUint64(hdr[1:], maxMsg+1)
			r.write(hdr)
		}},
		{"oversized multipart", false, func(r *rawPeer) {
			r.handshake(Push)
			r.send(make([]byte, maxMsg/2), make([]byte, maxMsg/2+1))
		}},
		{"stops mid-frame", false, func(r *rawPeer) {
			r.handshake(Push)
			r.write([]byte{zmtpwire.FlagMore, 3, 'a', 'b', 'c', 0, 100, 'x', 'y'})
			_ = r.c.(*net.TCPConn).CloseWrite()
		}},
		{"reserved flag bits", false, func(r *rawPeer) {
			r.handshake(Push)
			r.write([]byte{0x40, 1, 'x'})
		}},
	}
	for _, b := range bad {
		before := pull.Stats()
		r := dialRaw(t, addr)
		b.misbehave(r)
		r.waitClosed()
		eventually(t, func() bool {
			st := pull.Stats()
			if b.rejected {
				return st.Rejected == before.Rejected+1
			}
			return st.PeerErrors == before.PeerErrors+1
		}, b.name+" counted")
		sendGood()
	}
	// Received counts a message once the reader has handed it over, a
	// moment after Recv may have returned it.
	eventually(t, func() bool { return pull.Stats().Received == uint64(sent) }, "the good peer's messages counted")
	st := pull.Stats()
	require.Equal(t, uint64(sent), st.Received, "only the good peer's messages")
	require.Equal(t, 1, st.Peers)
}

func TestHeartbeatAnswersPingAndDropsASilentPeer(t *testing.T) {
	pull := newSocket(t, Pull, Options{Heartbeat: 20 * time.Millisecond, HeartbeatTimeout: 100 * time.Millisecond})
	addr := bind(t, pull, "tcp://127.0.0.1:0")
	r := dialRaw(t, addr)
	r.handshake(Push)

	e := zmtpwire.NewEncoder(0)
	e.Command("PING", []byte{0, 0}, []byte("ctx-1"))
	_, err := e.WriteTo(r.c)
	require.NoError(t, err)
	d := zmtpwire.NewDecoder(r.c, 0, 0)
	sawPing, sawPong := false, false
	for !sawPing || !sawPong {
		k, err := d.Next()
		require.NoError(t, err)
		require.Equal(t, zmtpwire.KindCommand, k)
		name, data, err := zmtpwire.ParseCommand(d.Command())
		require.NoError(t, err)
		switch string(name) {
		case "PONG":
			require.Equal(t, "ctx-1", string(data))
			sawPong = true
		case "PING":
			require.Len(t, data, 2)
			require.Equal(t, uint16(1), binary.BigEndian.Uint16(data), "TTL: the timeout in tenths of a second")
			sawPing = true
		}
	}
	// The raw peer answers nothing from now on: it is dropped as dead.
	r.waitClosed()
	eventually(t, func() bool { return pull.Stats().PeerErrors == 1 }, "timeout counted")
}

// Two sockets with heartbeats keep their connection: each answers the
// other's PINGs and each sees traffic.
func TestHeartbeatKeepsALivePeer(t *testing.T) {
	opt := Options{Heartbeat: 10 * time.Millisecond, HeartbeatTimeout: 400 * time.Millisecond}
	pull := newSocket(t, Pull, opt)
	push := newSocket(t, Push, opt)
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	require.NoError(t, push.Send([]byte("a")))
	recv(t, pull)
	time.Sleep(900 * time.Millisecond) // two heartbeat timeouts without data
	require.NoError(t, push.Send([]byte("b")))
	recv(t, pull)
	require.Equal(t, uint64(1), pull.Stats().Handshakes)
	require.Zero(t, pull.Stats().PeerErrors)
}

func TestReconnectAfterThePeerRestarts(t *testing.T) {
	pull := newSocket(t, Pull, Options{})
	addr := bind(t, pull, "tcp://127.0.0.1:0")
	push := newSocket(t, Push, Options{})
	require.NoError(t, push.Connect(addr))
	require.NoError(t, push.Send([]byte("1")))
	recv(t, pull)
	require.NoError(t, pull.Close())

	pull2 := newSocket(t, Pull, Options{})
	bind(t, pull2, addr)
	// A message sent before the PUSH saw the old connection go could be
	// written into it and lost: ZeroMQ delivers at most once.
	eventually(t, func() bool { return push.Stats().Handshakes == 2 }, "reconnected")
	require.NoError(t, push.Send([]byte("2")))
	require.Equal(t, [][]byte{[]byte("2")}, recv(t, pull2))
	require.GreaterOrEqual(t, push.Stats().Handshakes, uint64(2))
}

func TestEndpointsAndKinds(t *testing.T) {
	s := newSocket(t, Push, Options{})
	for _, ep := range []string{"", "tcp://", "udp://x:1", "ipc://"} {
		_, err := s.Bind(ep)
		require.ErrorIs(t, err, ErrEndpoint, ep)
		require.ErrorIs(t, s.Connect(ep), ErrEndpoint, ep)
	}
	require.ErrorIs(t, s.Recv(t.Context(), &Message{}), ErrSocketKind)
	require.ErrorIs(t, s.Subscribe(nil), ErrSocketKind)
	pull := newSocket(t, Pull, Options{})
	require.ErrorIs(t, pull.Send(nil), ErrSocketKind)
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Send(nil), ErrClosed)
	require.ErrorIs(t, s.Connect("tcp://127.0.0.1:1"), ErrClosed)
	_, err := NewSocket(Type(42), Options{})
	require.ErrorIs(t, err, ErrSocketKind)
}

// A subscriber cannot make a publisher keep without bound: past
// maxPeerSubs distinct prefixes it is disconnected; PINGs it does not
// read the PONGs of leave one PONG pending, not one per PING.
func TestSubscriberBounds(t *testing.T) {
	pub := newSocket(t, Pub, Options{})
	addr := bind(t, pub, "tcp://127.0.0.1:0")
	r := dialRaw(t, addr)
	r.handshake(Sub)
	e := zmtpwire.NewEncoder(0)
	for range 1000 {
		e.Command("PING", []byte{0, 0}, []byte("context"))
	}
	for i := range maxPeerSubs {
		e.Command("SUBSCRIBE", []byte(fmt.Sprint(i)))
	}
	e.Command("SUBSCRIBE", []byte("0")) // a prefix it holds: counted, not new
	_, err := e.WriteTo(r.c)
	require.NoError(t, err)
	eventually(t, func() bool {
		ps := *pub.peersV.Load()
		return len(ps) == 1 && ps[0].subscribed([]byte(fmt.Sprint(maxPeerSubs-1)))
	}, "subscriptions applied")
	p := (*pub.peersV.Load())[0]
	p.mu.Lock()
	require.Empty(t, p.cmds)
	p.mu.Unlock()

	e.Command("SUBSCRIBE", []byte("one too many"))
	_, err = e.WriteTo(r.c)
	require.NoError(t, err)
	r.waitClosed()
	eventually(t, func() bool { return pub.Stats().PeerErrors == 1 }, "counted")
}

func TestSubscriberPrefixBytesBounded(t *testing.T) {
	pub := newSocket(t, Pub, Options{})
	r := dialRaw(t, bind(t, pub, "tcp://127.0.0.1:0"))
	r.handshake(Sub)
	e := zmtpwire.NewEncoder(0)
	e.Command("SUBSCRIBE", make([]byte, maxPeerSubLen/2))
	e.Command("SUBSCRIBE", make([]byte, maxPeerSubLen/2+1))
	_, err := e.WriteTo(r.c)
	require.NoError(t, err)
	r.waitClosed()
	eventually(t, func() bool { return pub.Stats().PeerErrors == 1 }, "counted")
}

func TestBindIPCReplacesAStaleSocketNotALiveOne(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", path)
	require.NoError(t, err)
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	s := newSocket(t, Pull, Options{})
	_, err = s.Bind("ipc://" + path)
	require.ErrorIs(t, err, syscall.EADDRINUSE, "a live socket is kept")
	require.NoError(t, l.Close()) // leaves the file behind, as a killed process would
	got, err := s.Bind("ipc://" + path)
	require.NoError(t, err)
	require.Equal(t, "ipc://"+path, got)
}
