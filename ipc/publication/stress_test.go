package publication

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPublicationStress: publishers and three subscriber goroutines, each
// subscriber with its own Subscription (its own mapping of the file), 200k
// messages in all, mixed sizes including fragmented ones, with the log
// lapping hundreds of times. Every subscriber must receive every message
// exactly once, in per-publisher order, intact, and then the end of the
// stream. Variants: one publisher; two publishers claiming concurrently
// (the owner and a publisher opened by path, Offer and TryClaim mixed);
// two goroutines sharing the owner.
func TestPublicationStress(t *testing.T) {
	const total, subscribers = 200_000, 3
	for _, v := range []struct {
		name       string
		publishers int
		shared     bool // publishers share the owner's *Publication
	}{
		{"1pub", 1, false},
		{"2pub-opened", 2, false},
		{"2pub-shared", 2, true},
	} {
		t.Run(v.name, func(t *testing.T) {
			owner := newTestPublication(t, 64<<10, withMTU(1024))
			subs := make([]*Subscription, subscribers)
			for i := range subs {
				subs[i] = newTestSubscription(t, owner)
			}
			pubs := []*Publication{owner}
			for range v.publishers - 1 {
				if v.shared {
					pubs = append(pubs, owner)
					continue
				}
				q, err := Open(ctxT(t), owner.File().Path())
				require.NoError(t, err)
				defer q.Close()
				pubs = append(pubs, q)
			}
			per := total / v.publishers
			errs := make(chan error, subscribers+v.publishers+1)
			var wg, pubWG, beatWG sync.WaitGroup
			checkers := make([]*pubChecker, subscribers)
			for i, s := range subs {
				checkers[i] = newPubChecker()
				wg.Go(func() { errs <- consumeToEnd(s, checkers[i]) })
			}
			for id, p := range pubs {
				pubWG.Go(func() { errs <- produce(p, id, per) })
			}
			stop := make(chan struct{})
			beatWG.Go(func() { // the owner's duty cycle: heartbeat, limit for the opened publisher
				for {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
						if err := owner.Heartbeat(time.Now().UnixMilli()); err != nil {
							errs <- err
							return
						}
					}
				}
			})
			pubWG.Wait()
			close(stop)
			beatWG.Wait() // before Close: a heartbeat after it would fail
			st := owner.Stats()
			require.NoError(t, owner.Close())
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			for i, c := range checkers {
				require.Equal(t, total, c.n, "subscriber %d", i)
				for id := range v.publishers {
					require.Equal(t, uint64(per), c.next[id], "subscriber %d, publisher %d", i, id)
				}
			}
			require.Greater(t, st.Position, int64(100*owner.capacity()), "the log lapped")
			require.Zero(t, st.DroppedSubscribers)
			require.Zero(t, st.UnblockedClaims)
			for _, s := range subs {
				require.Zero(t, s.DroppedMessages())
			}
			t.Logf("%d bytes through a %d-byte log; back-pressured %d, admin actions %d", st.Position, owner.capacity(), st.BackPressured, st.AdminActions)
		})
	}
}

// produce publishes count test messages from sender id: two of three by
// Offer, one by TryClaim+Commit when it fits one record.
func produce(p *Publication, id, count int) error {
	buf := make([]byte, p.MaxMessageLength())
	for seq := range uint64(count) {
		payload := pubPayload(buf, id, seq, pubLength(seq, p.MaxMessageLength()))
		deadline := time.Now().Add(60 * time.Second) // hang guard only
		for spins := 0; ; spins++ {
			var err error
			if seq%3 == 0 && len(payload) <= p.maxPayloadLength() {
				var c Claim
				if c, err = p.TryClaim(pubTypeID, len(payload)); err == nil {
					copy(c.Payload, payload)
					err = c.Commit()
				}
			} else {
				_, err = p.Offer(pubTypeID, payload)
			}
			if err == nil {
				break
			}
			// ErrNotConnected: an opened publisher can get there first,
			// before the owner's first limit update.
			if err != ErrBackPressured && err != ErrAdminAction && err != ErrNotConnected {
				return fmt.Errorf("publisher %d seq %d: %w", id, seq, err)
			}
			backoff(spins)
			if spins%1000 == 999 && time.Now().After(deadline) {
				return fmt.Errorf("publisher %d seq %d: stuck (%v), stats %+v", id, seq, err, p.Stats())
			}
		}
	}
	return nil
}

// consumeToEnd polls until the end of the stream, checking every message.
func consumeToEnd(s *Subscription, c *pubChecker) error {
	deadline := time.Now().Add(5 * time.Minute) // hang guard only
	for idle := 0; ; {
		n, err := s.Poll(c.handle, 64)
		if c.err != nil {
			return fmt.Errorf("subscriber %d: %w", s.slotIndex(), c.err)
		}
		if err == ErrEndOfStream {
			return nil
		}
		if err != nil {
			return fmt.Errorf("subscriber %d: %w", s.slotIndex(), err)
		}
		if n > 0 {
			idle = 0
			continue
		}
		idle++
		backoff(idle)
		if idle%1000 == 0 && time.Now().After(deadline) {
			return fmt.Errorf("subscriber %d: stuck after %d messages at %d, stats %+v", s.slotIndex(), c.n, s.Position(), s.PublicationStats())
		}
	}
}
