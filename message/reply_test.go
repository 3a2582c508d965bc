package message

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/internal/buildtags"
	"github.com/dutyrt/duty/internal/mailboxdef"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

func TestAddress(t *testing.T) {
	a, err := AddressOf("orders")
	require.NoError(t, err)
	require.Equal(t, "orders", a.String())
	require.NotEqual(t, Address{}, a)
	for _, bad := range []string{"", "a\x00b", "0123456789012345678901234567890123"} {
		_, err := AddressOf(bad)
		require.ErrorIs(t, err, ErrAddress, bad)
	}
	full, err := AddressOf("01234567890123456789012345678901")
	require.NoError(t, err)
	require.Equal(t, "01234567890123456789012345678901", full.String())
}

func TestRegistryInProcessAndInFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	r := NewRegistry(ipc.Dir(dir))
	local := newMailbox(t)
	a, err := r.Register("local", local)
	require.NoError(t, err)
	_, err = r.Register("local", local)
	require.ErrorIs(t, err, ErrAddress)
	got, err := r.Lookup(ctx, a)
	require.NoError(t, err)
	require.Same(t, local, got)

	// A mailbox file another process owns: opened as a sender on first use.
	owner, of, err := ipc.CreateMailbox(dir, "remote", mailbox.Config{})
	require.NoError(t, err)
	defer of.Close()
	ra, _ := AddressOf("remote")
	sender, err := r.Lookup(ctx, ra)
	require.NoError(t, err)
	_, err = sender.Drain(func(*mailbox.Message) mailbox.Action { return mailbox.Continue }, 1)
	require.ErrorIs(t, err, mailbox.ErrNotConsumer, "a sender's view")
	again, err := r.Lookup(ctx, ra)
	require.NoError(t, err)
	require.Same(t, sender, again, "opened once")
	require.NoError(t, sender.Send(3, []byte("hi")))
	n, err := owner.Drain(func(m *mailbox.Message) mailbox.Action { return mailbox.Continue }, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)

	nobody, _ := AddressOf("nobody")
	_, err = r.Lookup(ctx, nobody)
	require.ErrorIs(t, err, ErrUnknownAddress)
	_, err = NewRegistry(nil).Lookup(ctx, ra)
	require.ErrorIs(t, err, ErrUnknownAddress, "no directory: only registered names")

	require.NoError(t, r.Close())
	require.ErrorIs(t, sender.Send(3, nil), mailbox.ErrClosed)
	got, err = r.Lookup(ctx, a)
	require.NoError(t, err)
	require.Same(t, local, got, "registered mailboxes stay")
}

func TestRegistryLookupDoesNotAllocate(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
	r := NewRegistry(nil)
	a, err := r.Register("x", newMailbox(t))
	require.NoError(t, err)
	ctx := context.Background()
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, err := r.Lookup(ctx, a); err != nil {
			t.Fatal(err)
		}
	}))
}

// add asks for A+B; sum is its reply.
type add struct {
	RequestHeader
	A, B int64
}

type sum struct {
	ReplyHeader
	Value int64
}

var (
	adds = MustFixed[add](21)
	sums = MustFixed[sum](22)
)

// callPair is an adder's and a caller's mailboxes and routers, in this
// process, on a manual clock.
type callPair struct {
	reg            *Registry
	server, client *mailbox.Mailbox
	sr, cr         *Router
	clk            *clock.Manual
	calls          *Calls[add, sum, int]
	ended          map[int]string
}

func newCallPair(t testing.TB, clientCapacity int, opts ...CallOption) *callPair {
	p := &callPair{reg: NewRegistry(nil), sr: NewRouter(), cr: NewRouter(), clk: clock.NewManual(time.Unix(0, 0)), ended: map[int]string{}}
	var err error
	p.server, err = mailbox.New(mailbox.Config{Name: "adder"})
	require.NoError(t, err)
	p.client, err = mailbox.New(mailbox.Config{Name: "caller", Capacity: clientCapacity})
	require.NoError(t, err)
	self, err := p.reg.Register("caller", p.client)
	require.NoError(t, err)
	require.NoError(t, Handle(p.sr, adds, func(m *add) error {
		return sums.Reply(p.reg, m.RequestHeader, &sum{Value: m.A + m.B})
	}))
	p.calls, err = NewCalls(p.cr, adds, sums, self, func(i int, s *sum, err error) {
		if _, twice := p.ended[i]; twice {
			t.Fatalf("call %d ended twice", i)
		}
		if err != nil {
			p.ended[i] = err.Error()
		} else {
			p.ended[i] = fmt.Sprint(s.Value)
		}
	}, append([]CallOption{WithClock(p.clk)}, opts...)...)
	require.NoError(t, err)
	return p
}

func TestCallsReplyAndTimeout(t *testing.T) {
	p := newCallPair(t, 0, WithTimeout(10*time.Millisecond))
	require.NoError(t, p.calls.Ask(p.server, &add{A: 1, B: 2}, 1))
	require.NoError(t, p.calls.Ask(p.server, &add{A: 3, B: 4}, 2))
	require.Equal(t, 2, p.calls.Pending())
	_, err := p.server.DrainTo(p.sr, 1) // only the first is answered now
	require.NoError(t, err)
	_, err = p.client.DrainTo(p.cr, 10)
	require.NoError(t, err)
	require.Equal(t, map[int]string{1: "3"}, p.ended)

	p.clk.Advance(5 * time.Millisecond)
	require.Zero(t, p.calls.Poll(), "before the deadline")
	n := 0
	for range 10 {
		p.clk.Advance(2 * time.Millisecond)
		n += p.calls.Poll()
	}
	require.Equal(t, 1, n)
	require.Equal(t, map[int]string{1: "3", 2: ErrTimeout.Error()}, p.ended)

	// The late reply ends nothing: counted.
	_, err = p.server.DrainTo(p.sr, 10)
	require.NoError(t, err)
	_, err = p.client.DrainTo(p.cr, 10)
	require.NoError(t, err)
	require.Len(t, p.ended, 2)
	require.Equal(t, CallStats{Asked: 2, Replied: 1, TimedOut: 1, Late: 1}, p.calls.Stats())
	require.Zero(t, p.calls.Pending())
}

func TestCallsRefusals(t *testing.T) {
	p := newCallPair(t, 0, WithMaxInFlight(2))
	require.NoError(t, p.calls.Ask(p.server, &add{}, 1))
	require.NoError(t, p.calls.Ask(p.server, &add{}, 2))
	err := p.calls.Ask(p.server, &add{}, 3)
	require.ErrorIs(t, err, errTooManyCalls)
	require.ErrorIs(t, err, mailbox.ErrBackPressured, "ask again later")
	require.Equal(t, 2, p.calls.Pending())

	// A full destination: nothing in flight for the refused call.
	full, err := mailbox.New(mailbox.Config{Name: "full", Capacity: mailboxdef.MinCapacity})
	require.NoError(t, err)
	for full.Send(1, make([]byte, 8)) == nil {
	}
	q := newCallPair(t, 0)
	require.Equal(t, mailbox.ErrBackPressured, q.calls.Ask(full, &add{}, 1))
	require.Zero(t, q.calls.Pending())
	require.Zero(t, q.calls.Stats().Asked)

	self := mustAddr(t, "x")
	done := func(int, *sum, error) {}
	_, err = NewCalls(NewRouter(), MustFixed[sum](1), sums, self, done)
	require.ErrorIs(t, err, ErrLayout, "a request without a RequestHeader")
	_, err = NewCalls(NewRouter(), adds, MustFixed[add](2), self, func(int, *add, error) {})
	require.ErrorIs(t, err, ErrLayout, "a reply without a ReplyHeader")
	_, err = NewCalls(NewRouter(), adds, sums, Address{}, done)
	require.ErrorIs(t, err, ErrAddress)
	_, err = NewCalls[add, sum, int](NewRouter(), adds, sums, self, nil)
	require.Error(t, err)
	r := NewRouter()
	_, err = NewCalls(r, adds, sums, self, done)
	require.NoError(t, err)
	_, err = NewCalls(r, adds, sums, self, done)
	require.ErrorIs(t, err, ErrTypeID, "one Calls per reply type and router")
	require.ErrorIs(t, adds.Reply(q.reg, RequestHeader{}, &add{}), ErrLayout)
	require.ErrorIs(t, sums.Reply(q.reg, RequestHeader{ReplyTo: mustAddr(t, "nobody")}, &sum{}), ErrUnknownAddress)
}

// Calls and Reply under back-pressure: 100,000 calls through a caller's
// mailbox of the smallest capacity, every call ended once, by its reply.
func TestCallsUnderBackPressure(t *testing.T) {
	const n = 100_000
	p := newCallPair(t, mailboxdef.MinCapacity)
	asked := 0
	for idle := 0; idle < 3; {
		progress := 0
		for asked < n {
			err := p.calls.Ask(p.server, &add{A: int64(asked), B: 1}, asked)
			if err != nil {
				require.ErrorIs(t, err, mailbox.ErrBackPressured)
				break
			}
			asked++
			progress++
		}
		k, err := p.server.DrainTo(p.sr, 64)
		require.NoError(t, err)
		progress += k
		k, err = p.client.DrainTo(p.cr, 5)
		require.NoError(t, err)
		progress += k
		if progress == 0 {
			idle++
		} else {
			idle = 0
		}
	}
	require.Len(t, p.ended, n)
	for i := range n {
		require.Equal(t, fmt.Sprint(i+1), p.ended[i])
	}
	require.Equal(t, CallStats{Asked: n, Replied: n}, p.calls.Stats())
	require.Positive(t, p.sr.Stats().Aborted)
}

// A call, its reply and a poll allocate nothing once the tables have
// grown.
func TestCallsDoNotAllocate(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
	p := newCallPair(t, 0)
	i := 0
	step := func() {
		if err := p.calls.Ask(p.server, &add{A: 1, B: 2}, i); err != nil {
			t.Fatal(err)
		}
		i++
		if _, err := p.server.DrainTo(p.sr, 10); err != nil {
			t.Fatal(err)
		}
		if _, err := p.client.DrainTo(p.cr, 10); err != nil {
			t.Fatal(err)
		}
		p.clk.Advance(time.Millisecond)
		p.calls.Poll()
	}
	p.calls.done = func(int, *sum, error) {} // the test's map would allocate
	for range 1000 {
		step()
	}
	require.Zero(t, testing.AllocsPerRun(1000, step))
	require.Zero(t, p.calls.Pending())
}
