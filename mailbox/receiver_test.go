package mailbox

import (
	"errors"
	"testing"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/internal/buildtags"
	"github.com/stretchr/testify/require"
)

var errOdd = errors.New("odd message")

// oddFails fails on every message whose first byte is odd, and stops
// (Break) at type 9.
type oddFails struct {
	seen []byte
}

func (r *oddFails) Receive(m *Message) (Action, error) {
	b := m.Payload()[0]
	r.seen = append(r.seen, b)
	if m.TypeID() == 9 {
		return Break, nil
	}
	if b%2 == 1 {
		return Continue, errOdd
	}
	return Continue, nil
}

func TestDrainToReportsFailures(t *testing.T) {
	mb := newMailbox(t, Config{})
	r := &oddFails{}
	_, err := mb.DrainTo(nil, 1)
	require.ErrorIs(t, err, ErrArgument)

	// One failure: the error as the receiver returned it.
	require.NoError(t, mb.Send(1, []byte{2}))
	require.NoError(t, mb.Send(1, []byte{3}))
	n, err := mb.DrainTo(r, 10)
	require.Equal(t, 2, n)
	require.Same(t, errOdd, err)

	// Several: an error wrapping the first, with the count; Break stops
	// the drain and consumes its message.
	for _, b := range []byte{5, 6, 7} {
		require.NoError(t, mb.Send(1, []byte{b}))
	}
	require.NoError(t, mb.Send(9, []byte{8}))
	require.NoError(t, mb.Send(1, []byte{11}))
	n, err = mb.DrainTo(r, 10)
	require.Equal(t, 4, n)
	require.ErrorIs(t, err, errOdd)
	var herr *handlerError
	require.ErrorAs(t, err, &herr)
	require.Equal(t, 2, herr.failed)
	require.ErrorContains(t, err, "handler failed on 2 messages")

	// Nothing carried over: the next call reports only its own.
	require.NoError(t, mb.Send(1, []byte{12}))
	n, err = mb.DrainTo(r, 10)
	require.Equal(t, 2, n)
	require.Same(t, errOdd, err) // 11 failed, 12 did not
	require.Equal(t, []byte{2, 3, 5, 6, 7, 8, 11, 12}, r.seen)
	require.Equal(t, int64(8), mb.Stats().Delivered)
}

func TestDrainToAbortLeavesTheMessage(t *testing.T) {
	mb := newMailbox(t, Config{})
	require.NoError(t, mb.Send(1, []byte{1}))
	calls := 0
	abort := receiverFunc(func(m *Message) (Action, error) {
		calls++
		return Abort, errOdd
	})
	n, err := mb.DrainTo(abort, 10)
	require.Equal(t, 0, n)
	require.Same(t, errOdd, err)
	r := &oddFails{}
	n, err = mb.DrainTo(r, 10)
	require.Equal(t, 1, n)
	require.Same(t, errOdd, err)
	require.Equal(t, 1, calls)
}

type receiverFunc func(m *Message) (Action, error)

func (f receiverFunc) Receive(m *Message) (Action, error) { return f(m) }

// counting is a Receiver that does no work: what DrainTo costs itself.
type counting struct{ n int }

func (c *counting) Receive(*Message) (Action, error) { c.n++; return Continue, nil }

func TestDrainToDoesNotAllocate(t *testing.T) {
	if buildtags.Race {
		t.Skip("the race detector allocates")
	}
	mb := newMailbox(t, Config{})
	r := &counting{}
	payload := make([]byte, 32)
	allocs := testing.AllocsPerRun(1000, func() {
		if err := mb.Send(1, payload); err != nil {
			t.Fatal(err)
		}
		if n, err := mb.DrainTo(r, 10); n != 1 || err != nil {
			t.Fatal(n, err)
		}
	})
	require.Zero(t, allocs)
	require.Equal(t, 1001, r.n)
}

func TestReceiverActor(t *testing.T) {
	mb := newMailbox(t, Config{})
	_, err := NewReceiverActor("a", mb, nil)
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewReceiverActor("a", nil, &oddFails{})
	require.ErrorIs(t, err, ErrArgument)

	r := &oddFails{}
	a, err := NewReceiverActor("odd", mb, r)
	require.NoError(t, err)
	inv, err := agent.NewInvoker(a)
	require.NoError(t, err)
	require.NoError(t, inv.Start())
	for _, b := range []byte{1, 2, 3} {
		require.NoError(t, mb.Send(1, []byte{b}))
	}
	n, err := a.DoWork()
	require.Equal(t, 3, n)
	require.ErrorIs(t, err, errOdd) // reaches the runner's error handler
	require.NoError(t, mb.Send(1, []byte{4}))
	n, err = a.DoWork()
	require.Equal(t, 1, n)
	require.NoError(t, err)

	// OnClose delivers what is left to the receiver and reports its error.
	require.NoError(t, mb.Send(1, []byte{5}))
	require.ErrorIs(t, a.OnClose(), errOdd)
	require.Equal(t, []byte{1, 2, 3, 4, 5}, r.seen)
}

// twoRoutes is a Dispatcher: type 1 and type 2 each have a Receiver of
// their own; Receive (any other type) counts what went through it.
type twoRoutes struct {
	routes   map[int32]*counting
	asked    []int32
	received int
}

func (d *twoRoutes) Receive(*Message) (Action, error) { d.received++; return Continue, nil }

func (d *twoRoutes) Route(typeID int32) Receiver {
	d.asked = append(d.asked, typeID)
	if r, ok := d.routes[typeID]; ok {
		return r
	}
	return d
}

// A Dispatcher's routes get their type's plain messages straight from the
// drain, asked once per run of one type in a drain.
func TestDrainToADispatcher(t *testing.T) {
	mb := newMailbox(t, Config{})
	d := &twoRoutes{routes: map[int32]*counting{1: {}, 2: {}}}
	for _, typ := range []int32{1, 1, 1, 2, 2, 3, 1} {
		require.NoError(t, mb.Send(typ, []byte{1}))
	}
	require.NoError(t, mb.SendParts(2, []byte{1}, []byte{2})) // framed: through Receive
	n, err := mb.DrainTo(d, 100)
	require.NoError(t, err)
	require.Equal(t, 8, n)
	require.Equal(t, 4, d.routes[1].n)
	require.Equal(t, 2, d.routes[2].n)
	require.Equal(t, 2, d.received, "type 3, and the framed message")
	require.Equal(t, []int32{1, 2, 3, 1}, d.asked)

	// The next drain starts without routes: the first plain message of
	// type 1 asks again (or, right after a framed message, goes through
	// Receive, as a framed one does).
	require.NoError(t, mb.Send(1, []byte{1}))
	require.NoError(t, mb.Send(1, []byte{1}))
	routed, received := d.routes[1].n, d.received
	n, err = mb.DrainTo(d, 100)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, 2, d.routes[1].n-routed+d.received-received, "both delivered, once each")
	require.Equal(t, []int32{1, 2, 3, 1, 1}, d.asked, "the second drain asked for type 1 again")
}
