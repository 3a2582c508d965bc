package mailbox

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// An actor closed in Discard mode while a claim is open at the head cannot
// discard what waits behind it. As in Drain mode, OnClose must say that
// messages are left (ErrNotDrained) rather than return nil with messages
// neither delivered nor counted.
func TestActorDiscardCloseReportsWhatIsLeft(t *testing.T) {
	mb := newMailbox(t, Config{})
	a, err := NewActor("d", mb, func(*Message) Action { return Continue }, WithCloseMode(Discard))
	require.NoError(t, err)
	require.NoError(t, mb.Send(1, []byte("queued")))
	c, err := mb.Claim(2, 8)
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, mb.Send(3, []byte("behind the claim")))
	}
	err = a.OnClose()
	require.Equal(t, 1, a.(*actor).discarded)
	require.ErrorIs(t, err, ErrNotDrained, "3 messages and an open claim are left, uncounted")
	require.NoError(t, c.Commit())
	n, err := mb.Drain(func(*Message) Action { t.Fatal("delivered after Close(Discard)"); return Continue }, 100)
	require.NoError(t, err)
	require.Equal(t, 4, n)
	require.Equal(t, int64(5), mb.Stats().Discarded)
}

// Many senders race Close: every send that returned nil is delivered or
// discarded, and counted, once the owner has drained after the senders
// stopped (the doc's promise: a send that passed the state check just
// before Close lands after it and the next Drain delivers or discards it).
func TestSendsRacingClose(t *testing.T) {
	for _, mode := range []CloseMode{Drain, Discard} {
		t.Run(map[CloseMode]string{Drain: "drain", Discard: "discard"}[mode], func(t *testing.T) {
			for round := range 20 {
				testSendsRacingClose(t, mode, round)
			}
		})
	}
}

func testSendsRacingClose(t *testing.T, mode CloseMode, round int) {
	mb := newMailbox(t, Config{Capacity: 4096})
	const senders = 4
	var ok, closed, handled atomic.Int64
	var wg sync.WaitGroup
	start := make(chan struct{})
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			snd := mb.NewSender()
			for i := 0; ; i++ {
				var err error
				switch (i + s) % 4 {
				case 0:
					err = mb.Send(1, []byte("plain"))
				case 1:
					err = snd.SendParts(2, []byte("a"), []byte("b"))
				case 2:
					err = mb.Send(3, make([]byte, 700)) // fragmented in a 4 KiB ring
				case 3:
					var c Claim
					if c, err = mb.Claim(4, 16); err == nil {
						err = c.Commit()
					}
				}
				switch err {
				case nil:
					ok.Add(1)
				case ErrBackPressured:
				case ErrClosed:
					closed.Add(1)
					return
				default:
					t.Error(err)
					return
				}
			}
		}()
	}
	h := func(*Message) Action { handled.Add(1); return Continue }
	close(start)
	for i := 0; i < 50+round*10; i++ {
		_, err := mb.Drain(h, 64)
		require.NoError(t, err)
	}
	_, err := mb.Close(mode)
	require.NoError(t, err)
	stop := make(chan struct{})
	go func() { wg.Wait(); close(stop) }()
	for done := false; !done; {
		select {
		case <-stop:
			done = true
		default:
		}
		_, err := mb.Drain(h, 64)
		require.NoError(t, err)
	}
	for range 10 {
		_, err := mb.Drain(h, 1<<20)
		require.NoError(t, err)
	}
	st := mb.Stats()
	require.Zero(t, st.Depth)
	require.Zero(t, st.Torn)
	require.Zero(t, st.Corrupt)
	require.Equal(t, ok.Load(), st.Delivered+st.Discarded, "sent %d, delivered %d, discarded %d", ok.Load(), st.Delivered, st.Discarded)
	require.Equal(t, handled.Load(), st.Delivered)
	require.Equal(t, closed.Load(), st.RefusedClosed)
	require.Equal(t, int64(senders), closed.Load())
	if mode == Drain {
		require.Zero(t, st.Discarded)
	}
}
