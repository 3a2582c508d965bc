package zmtp

import (
	"context"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/go-zeromq/zmq4"
	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/ipc/publication"
	"github.com/dutyrt/duty/mailbox"
)

func newMailbox(t testing.TB, capacity int) *mailbox.Mailbox {
	t.Helper()
	mb, err := mailbox.New(mailbox.Config{Name: "zmtp-test", Capacity: capacity})
	require.NoError(t, err)
	return mb
}

type mbMsg struct {
	typeID int32
	parts  []string
}

// drainAll drains mb until it has n messages (hang guard: 10 s).
func drainAll(t testing.TB, mb *mailbox.Mailbox, n int) []mbMsg {
	t.Helper()
	var out []mbMsg
	eventually(t, func() bool {
		_, err := mb.Drain(func(m *mailbox.Message) mailbox.Action {
			g := mbMsg{typeID: m.TypeID()}
			for _, p := range m.Parts() {
				g.parts = append(g.parts, string(p))
			}
			out = append(out, g)
			return mailbox.Continue
		}, 1000)
		require.NoError(t, err)
		return len(out) >= n
	}, fmt.Sprintf("%d messages in the mailbox", n))
	return out
}

func typeFrame(id int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(id)) }

// A multipart ZMTP message from an independent peer becomes one multipart
// mailbox message; the first frame carries the type id.
func TestBridgeDeliversIntoAMailbox(t *testing.T) {
	mb := newMailbox(t, 64<<10)
	pull := newSocket(t, Pull, Options{})
	require.NoError(t, pull.DeliverTo(mb, Mapping{TypeIDFrame: true}))
	addr := bind(t, pull, "tcp://127.0.0.1:0")
	require.ErrorIs(t, pull.DeliverTo(mb, Mapping{TypeIDFrame: true}), ErrBridge)
	require.ErrorIs(t, pull.Recv(context.Background(), &Message{}), ErrSocketKind)

	push := zmqSocket(t, zmq4.NewPush(context.Background()))
	require.NoError(t, push.Dial(addr))
	require.NoError(t, push.SendMulti(zmq4.NewMsgFrom(typeFrame(7), []byte("head"), []byte("body"))))
	require.NoError(t, push.SendMulti(zmq4.NewMsgFrom([]byte("no type id"), []byte("x")))) // dropped
	require.NoError(t, push.SendMulti(zmq4.NewMsgFrom(typeFrame(9), []byte("one"))))
	got := drainAll(t, mb, 2)
	require.Equal(t, []mbMsg{{7, []string{"head", "body"}}, {9, []string{"one"}}}, got)
	eventually(t, func() bool { return pull.Stats().Dropped == 1 }, "the unmapped message counted")

	sub := newSocket(t, Sub, Options{})
	require.ErrorIs(t, sub.DeliverTo(mb, Mapping{}), mailbox.ErrTypeID)
	require.NoError(t, sub.DeliverTo(mb, Mapping{TypeID: 3}))
	pushS := newSocket(t, Push, Options{})
	require.ErrorIs(t, pushS.DeliverTo(mb, Mapping{TypeID: 3}), ErrBridge)
}

// A full mailbox stops the reader; the PUSH peer's queue fills and its
// Send is refused with ErrHWM. Once the mailbox drains, everything
// arrives, once and in order.
func TestBridgeBackPressurePassesThrough(t *testing.T) {
	mb := newMailbox(t, 64<<10)
	pull := newSocket(t, Pull, Options{})
	require.NoError(t, pull.DeliverTo(mb, Mapping{TypeID: 5}))
	push := newSocket(t, Push, Options{HWM: 8})
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	body := make([]byte, 16<<10) // a few fill the mailbox, a few hundred the socket buffers
	sent, refusals := 0, 0
	for refusals < 200 {
		switch err := push.Send([]byte(fmt.Sprint(sent)), body); err {
		case nil:
			sent, refusals = sent+1, 0
		case ErrHWM:
			refusals++
			time.Sleep(time.Millisecond)
		default:
			t.Fatal(err)
		}
		require.Less(t, sent, 100000, "the PUSH was never held back")
	}
	require.NotZero(t, mb.Stats().BackPressured, "the reader met a full mailbox")
	next := 0
	eventually(t, func() bool {
		_, err := mb.Drain(func(m *mailbox.Message) mailbox.Action {
			require.Equal(t, int32(5), m.TypeID())
			require.Equal(t, fmt.Sprint(next), string(m.Part(0)))
			next++
			return mailbox.Continue
		}, 1000)
		require.NoError(t, err)
		return next == sent
	}, "every message after the mailbox drained")
	require.Zero(t, pull.Stats().Dropped)
}

func TestFeederFromAMailbox(t *testing.T) {
	mb := newMailbox(t, 64<<10)
	push := newSocket(t, Push, Options{HWM: 2})
	f, err := NewFeeder("feeder", mb, push, Mapping{TypeIDFrame: true})
	require.NoError(t, err)
	require.NoError(t, f.OnStart())
	for i := range 5 {
		require.NoError(t, mb.SendParts(int32(10+i), []byte(fmt.Sprint(i)), []byte("tail")))
	}
	// No peer yet: the PUSH queue takes two, the rest wait in the mailbox.
	n, err := f.DoWork()
	require.NoError(t, err)
	require.Equal(t, 2, push.out.Count())
	require.Equal(t, uint64(1), f.Refused())
	_ = n

	pull := zmqSocket(t, zmq4.NewPull(context.Background()))
	require.NoError(t, pull.Listen("tcp://127.0.0.1:0"))
	require.NoError(t, push.Connect("tcp://"+pull.Addr().String()))
	for i := range 5 {
		eventually(t, func() bool {
			if _, err := f.DoWork(); err != nil {
				t.Fatal(err)
			}
			return f.Sent() > uint64(i)
		}, "fed")
		m, err := pull.Recv()
		require.NoError(t, err)
		require.Equal(t, [][]byte{typeFrame(int32(10 + i)), []byte(fmt.Sprint(i)), []byte("tail")}, m.Frames)
	}
	require.NoError(t, push.Close())
	require.NoError(t, mb.Send(1, []byte("late")))
	_, err = f.DoWork()
	require.ErrorIs(t, err, agent.ErrTermination)
	require.ErrorIs(t, err, ErrClosed)
	require.NoError(t, f.OnClose())

	_, err = NewFeeder("x", mb, newSocket(t, Sub, Options{}), Mapping{})
	require.ErrorIs(t, err, ErrBridge)
}

func TestFeederIntoPubWithFixedMapping(t *testing.T) {
	mb := newMailbox(t, 64<<10)
	pub := newSocket(t, Pub, Options{})
	f, err := NewFeeder("md", mb, pub, Mapping{})
	require.NoError(t, err)
	sub := newSocket(t, Sub, Options{})
	require.NoError(t, sub.Subscribe([]byte("q.")))
	require.NoError(t, sub.Connect(bind(t, pub, "tcp://127.0.0.1:0")))
	eventually(t, func() bool {
		ps := *pub.peersV.Load()
		return len(ps) == 1 && ps[0].subscribed([]byte("q."))
	}, "subscribed")
	require.NoError(t, mb.SendParts(1, []byte("x.skip"), []byte("1")))
	require.NoError(t, mb.SendParts(2, []byte("q.EURUSD"), []byte("1.0842")))
	_, err = f.DoWork()
	require.NoError(t, err)
	require.Equal(t, [][]byte{[]byte("q.EURUSD"), []byte("1.0842")}, recv(t, sub))
}

// A message through a bridge costs no allocation either: Send, the wire,
// the reader's delivery into the mailbox, the owner's Drain.
func TestBridgeAllocatesNothing(t *testing.T) {
	skipUnderRace(t)
	mb := newMailbox(t, 64<<10)
	pull := newSocket(t, Pull, Options{})
	require.NoError(t, pull.DeliverTo(mb, Mapping{TypeIDFrame: true}))
	push := newSocket(t, Push, Options{})
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	tid, body := typeFrame(3), make([]byte, 32)
	got := 0
	h := func(*mailbox.Message) mailbox.Action { got++; return mailbox.Continue }
	run := func() {
		if err := push.Send(tid, body, body); err != nil {
			t.Fatal(err)
		}
		for want := got + 1; got < want; {
			if n, err := mb.Drain(h, 10); err != nil {
				t.Fatal(err)
			} else if n == 0 {
				// Sleep, not Gosched: a goroutine that never parks keeps
				// the scheduler from polling the network (docs/zmtp.md,
				// "Bridges to mailboxes").
				time.Sleep(10 * time.Microsecond)
			}
		}
	}
	for range 100 {
		run()
	}
	require.Zero(t, testing.AllocsPerRun(500, run))
}

// An IPC publication's subscription feeds a PUSH socket: type id frame and
// payload; ErrHWM leaves the message for the next poll; the end of the
// stream reaches DoWork.
func TestPollFeederFromAnIPCSubscription(t *testing.T) {
	pubIPC, err := publication.Create(t.TempDir(), "quotes", 64<<10)
	require.NoError(t, err)
	defer pubIPC.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	subIPC, err := publication.OpenSubscription(ctx, pubIPC.File().Path())
	require.NoError(t, err)
	defer subIPC.Close()

	push := newSocket(t, Push, Options{HWM: 2})
	f, err := NewPollFeeder("ipc-out", subIPC, push, Mapping{TypeIDFrame: true})
	require.NoError(t, err)
	for i := range 4 {
		_, err := pubIPC.Offer(int32(20+i), []byte(fmt.Sprint("quote ", i)))
		require.NoError(t, err)
	}
	_, err = f.DoWork()
	require.NoError(t, err)
	require.Equal(t, uint64(2), f.Sent(), "two fit under the high-water mark")
	require.Equal(t, uint64(1), f.Refused())

	pull := newSocket(t, Pull, Options{})
	require.NoError(t, push.Connect(bind(t, pull, "tcp://127.0.0.1:0")))
	for i := range 4 {
		eventually(t, func() bool {
			if _, err := f.DoWork(); err != nil {
				t.Fatal(err)
			}
			return f.Sent() > uint64(i)
		}, "fed")
		require.Equal(t, [][]byte{typeFrame(int32(20 + i)), []byte(fmt.Sprint("quote ", i))}, recv(t, pull))
	}
	_, err = NewPollFeeder("x", subIPC, newSocket(t, Pull, Options{}), Mapping{})
	require.ErrorIs(t, err, ErrBridge)
}
