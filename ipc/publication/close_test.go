package publication

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/fileapi"
	"github.com/dutyrt/duty/ringbuf"
)

// TestCloseWaitsForOffers: Publication's doc says Offer and Close are safe
// for concurrent use and that Offer returns ErrClosed after
// Close. An Offer that has passed its closed check is still copying a
// large fragmented message into the log when a concurrent Close seals the
// stream: Close must not release the mapping under it (without the
// in-flight count it did, and the copy faulted: a fatal SIGSEGV outside
// SetPanicOnFault; the goroutine enables it so that the test reports the
// fault instead of dying). Found by review (TestReviewCloseUnmapsUnderOffer).
func TestCloseWaitsForOffers(t *testing.T) {
	const capacity = 64 << 20
	p, err := Create(testDir(t), "pub", capacity)
	require.NoError(t, err)
	defer p.Close()
	newTestSubscription(t, p)
	payload := make([]byte, p.MaxMessageLength()) // 8 MiB: 2049 fragments; 4 fit in the window
	type result struct {
		fault any
		err   error
	}
	done := make(chan result, 1)
	go func() {
		debug.SetPanicOnFault(true)
		var r result
		defer func() { r.fault = recover(); done <- r }()
		for {
			if _, r.err = p.Offer(pubTypeID, payload); r.err != nil {
				return // ErrClosed (or back-pressured once the window is full)
			}
		}
	}()
	for p.tail.Load() == 0 { // the first claim is made: copies are under way
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(p.log.Bytes())))
	require.NoError(t, p.Close())
	r := <-done
	if r.fault != nil {
		addr := uintptr(0)
		if fa, ok := r.fault.(interface{ Addr() uintptr }); ok {
			addr = fa.Addr()
		}
		t.Fatalf("Offer faulted at log offset %d on the mapping Close released: %v", int64(addr)-int64(base), r.fault)
	}
	require.Contains(t, []error{ErrClosed, ErrBackPressured}, r.err)
	_, err = p.Offer(pubTypeID, payload[:10])
	require.Equal(t, ErrClosed, err)
	require.Zero(t, ipcfile.Refs(p.File()), "Close released the mapping")
}

// TestCloseLeavesTheReleaseToAnOpenClaim: a claim held open across Close
// keeps the mapping. Close does not wait past its bound (zero here): it
// seals the stream and returns ErrClosePending, and the file stays open
// (the package starts no goroutine to close it later). The claim's Commit
// or Abort still completes the record (the subscriber gets it, or skips
// it, and then the end of stream), and Close called again then closes the
// file. Everything that begins after the first Close reports the
// publication closed.
func TestCloseLeavesTheReleaseToAnOpenClaim(t *testing.T) {
	for _, commit := range []bool{true, false} {
		name := map[bool]string{true: "commit", false: "abort"}[commit]
		t.Run(name, func(t *testing.T) {
			p := newTestPublication(t, 4096)
			s := newTestSubscription(t, p)
			c, err := p.TryClaim(pubTypeID, 5)
			require.NoError(t, err)
			require.ErrorIs(t, p.closeWithin(0), ErrClosePending)
			require.Equal(t, int64(1), ipcfile.Refs(p.File()), "the claim keeps the mapping")
			require.ErrorIs(t, p.closeWithin(0), ErrClosePending, "still open: Close again reports it again")

			_, err = p.Offer(pubTypeID, []byte("late"))
			require.Equal(t, ErrClosed, err)
			_, err = p.TryClaim(pubTypeID, 4)
			require.Equal(t, ErrClosed, err)
			require.Equal(t, ErrClosed, p.Heartbeat(epochMillis()))
			require.Zero(t, p.Stats())

			copy(c.Payload, "hello")
			if commit {
				require.NoError(t, c.Commit())
			} else {
				require.NoError(t, c.Abort())
			}
			require.Equal(t, int64(1), ipcfile.Refs(p.File()), "nothing closes the file behind the caller's back")
			require.NoError(t, p.Close(), "the claim is done: Close closes the file")
			require.Zero(t, ipcfile.Refs(p.File()))
			require.NoError(t, p.Close(), "idempotent once closed")
			require.ErrorIs(t, c.Commit(), ErrClaimState, "a completed claim no longer touches the mapping")
			require.ErrorIs(t, c.Abort(), ErrClaimState)
			hb, err := ipcfile.HeartbeatMillis(s.file())
			require.NoError(t, err)
			require.Equal(t, int64(fileapi.HeartbeatClosed), hb, "the owner's file close marked the heartbeat")

			var got []string
			h := func(_ int32, b []byte) { got = append(got, string(b)) }
			var perr error
			for i := 0; i < 3 && perr == nil; i++ {
				_, perr = s.Poll(h, ringbuf.NoLimit)
			}
			require.Equal(t, ErrEndOfStream, perr)
			if commit {
				require.Equal(t, []string{"hello"}, got)
			} else {
				require.Empty(t, got)
			}
		})
	}
}

// TestCloseWaitsForAnOpenClaim: within its bound (an hour here), Close
// waits for an open claim: it has sealed the stream, so new calls fail,
// but it keeps the mapping and does not return until the claim's Commit,
// after which it releases the file and returns nil.
func TestCloseWaitsForAnOpenClaim(t *testing.T) {
	p := newTestPublication(t, 4096)
	s := newTestSubscription(t, p)
	c, err := p.TryClaim(pubTypeID, 5)
	require.NoError(t, err)
	closed := make(chan error, 1)
	go func() { closed <- p.closeWithin(time.Hour) }()
	for p.users.Load()&closedBit == 0 { // Close has begun
		runtime.Gosched()
	}
	_, err = p.Offer(pubTypeID, []byte("late"))
	require.Equal(t, ErrClosed, err)
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) with a claim open", err)
	default:
	}
	require.Equal(t, int64(1), ipcfile.Refs(p.File()))
	copy(c.Payload, "hello")
	require.NoError(t, c.Commit())
	require.NoError(t, <-closed)
	require.Zero(t, ipcfile.Refs(p.File()))
	var got []string
	var perr error
	for i := 0; i < 3 && perr == nil; i++ {
		_, perr = s.Poll(func(_ int32, b []byte) { got = append(got, string(b)) }, ringbuf.NoLimit)
	}
	require.Equal(t, ErrEndOfStream, perr)
	require.Equal(t, []string{"hello"}, got)
}

// TestCloseRacesEveryCall closes the owner and a publisher opened by path
// while goroutines call everything that touches the mapping on them:
// Offer (one record and fragmented), TryClaim+Commit, the owner's
// Heartbeat (whose limit update reads and zeroes the log) and Stats. With
// SetPanicOnFault, a call that touched the released mapping panics, and
// the goroutine reports it. Every call either completes or reports the
// publication closed; the subscriber receives every message that was
// published (each call that returned nil), intact and in order, and then
// the end of stream; both files end released.
func TestCloseRacesEveryCall(t *testing.T) {
	const rounds = 20
	for round := range rounds {
		p := newTestPublication(t, 1<<20, withMTU(1024))
		q, err := Open(ctxT(t), p.File().Path())
		require.NoError(t, err)
		s := newTestSubscription(t, p)
		require.NoError(t, p.Heartbeat(epochMillis()))

		subDone := make(chan error, 1)
		checker := newPubChecker()
		go func() {
			for {
				_, err := s.Poll(checker.handle, ringbuf.NoLimit)
				if err != nil {
					subDone <- err
					return
				}
				runtime.Gosched()
			}
		}()
		var sent [4]uint64 // messages published, by sender

		type outcome struct {
			name  string
			fault any
			err   error
		}
		var started sync.WaitGroup
		var stop atomic.Bool
		outcomes := make(chan outcome, 16)
		run := func(name string, call func() error) {
			started.Add(1)
			go func() {
				debug.SetPanicOnFault(true)
				o := outcome{name: name}
				first := true
				defer func() {
					o.fault = recover()
					if first {
						started.Done()
					}
					outcomes <- o
				}()
				for !stop.Load() {
					err := call()
					if err == nil || err == ErrBackPressured || err == ErrAdminAction || err == ErrNotConnected {
						if first && err == nil {
							first = false
							started.Done()
						}
						runtime.Gosched()
						continue
					}
					o.err = err
					return
				}
			}()
		}
		var buf [4][64 << 10]byte
		publisher := func(sender int, pub *Publication, fragmented, claim bool) func() error {
			seq := uint64(0)
			return func() error {
				n := 16 + int(seq*7%121)
				if fragmented {
					n = 64 << 10 // 65 records: a long copy for Close to race
				}
				msg := pubPayload(buf[sender][:], sender, seq, n)
				var err error
				if claim {
					var c Claim
					if c, err = pub.TryClaim(pubTypeID, n); err == nil {
						copy(c.Payload, msg)
						err = c.Commit()
					}
				} else {
					_, err = pub.Offer(pubTypeID, msg)
				}
				if err == nil {
					seq++
					sent[sender] = seq
				}
				return err
			}
		}
		run("owner offer", publisher(0, p, false, false))
		run("owner fragmented offer", publisher(1, p, true, false))
		run("owner claim", publisher(2, p, false, true))
		run("opened publisher offer", publisher(3, q, round%2 == 0, round%2 == 1))
		run("owner heartbeat", func() error { return p.Heartbeat(epochMillis()) })
		run("owner stats", func() error { _ = p.Stats(); return nil })
		started.Wait() // every call has succeeded at least once: they are all under way

		for _, pub := range []*Publication{q, p} {
			if err := pub.Close(); err != nil {
				require.ErrorIs(t, err, ErrClosePending) // a goroutine stalled for a second
			}
		}
		stop.Store(true)
		for range 6 {
			o := <-outcomes
			require.Nil(t, o.fault, "round %d: %s touched the released mapping", round, o.name)
			if o.err != nil {
				require.Equal(t, ErrClosed, o.err, "round %d: %s", round, o.name)
			}
		}
		for _, pub := range []*Publication{q, p} {
			require.NoError(t, pub.Close(), "every call has returned: Close (again) closes the file")
		}
		// ErrEndOfStream, or rarely ErrPublisherDead (which matches it): a
		// subscriber that loads the tail just before the seal and the
		// owner's heartbeat just after Close marked it closed takes the
		// owner for dead (Subscription.idle; not this test's subject).
		// Either way the stream has ended: drain what is left, then every
		// message published must have been delivered, intact and in order.
		err = <-subDone
		require.ErrorIs(t, err, ErrEndOfStream, "round %d", round)
		for {
			n, err := s.Poll(checker.handle, ringbuf.NoLimit)
			if n == 0 {
				require.ErrorIs(t, err, ErrEndOfStream, "round %d", round)
				break
			}
		}
		require.NoError(t, checker.err, "round %d", round)
		for sender, n := range sent {
			require.Equal(t, n, checker.next[sender], "round %d: sender %d: messages published and delivered", round, sender)
		}
		require.Zero(t, ipcfile.Refs(p.File()), "round %d: owner's file released", round)
		require.Zero(t, ipcfile.Refs(q.File()), "round %d: opened publisher's file released", round)
		require.NoError(t, s.Close())
	}
}
