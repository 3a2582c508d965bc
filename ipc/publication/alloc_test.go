package publication

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ringbuf"
)

// TestPublicationHotPathsDoNotAllocate: offers (one record and
// fragmented), claims, polls (plain, controlled, reassembling, idle) and
// the transient outcomes allocate nothing.
func TestPublicationHotPathsDoNotAllocate(t *testing.T) {
	if testing.CoverMode() != "" {
		t.Skip("coverage instrumentation allocates")
	}
	p := newTestPublication(t, 64<<10, withMTU(256))
	s := newTestSubscription(t, p)
	small := make([]byte, 32)
	large := make([]byte, 1000) // 4 fragments
	sink := 0
	h := func(_ int32, b []byte) { sink += len(b) }
	ch := func(_ int32, b []byte) ringbuf.Action { sink += len(b); return ringbuf.Commit }
	mustOffer := func(b []byte) {
		if _, err := p.Offer(pubTypeID, b); err != nil {
			panic(err)
		}
	}
	cases := map[string]func(){
		"offer+poll": func() {
			mustOffer(small)
			_, _ = s.Poll(h, ringbuf.NoLimit)
		},
		"fragmented offer+poll": func() {
			mustOffer(large)
			_, _ = s.Poll(h, ringbuf.NoLimit)
		},
		"claim+commit+controlled poll": func() {
			c, err := p.TryClaim(pubTypeID, 32)
			if err != nil {
				panic(err)
			}
			_ = c.Commit()
			_, _ = s.ControlledPoll(ch, ringbuf.NoLimit)
		},
		"idle poll": func() { _, _ = s.Poll(h, ringbuf.NoLimit) },
	}
	for name, f := range cases {
		require.Zero(t, testing.AllocsPerRun(1000, f), name)
	}

	// Back-pressured: fill the window, then every offer recomputes the
	// limit and fails.
	for {
		if _, err := p.Offer(pubTypeID, small); err != nil {
			require.Equal(t, ErrBackPressured, err)
			break
		}
	}
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, err := p.Offer(pubTypeID, small); err != ErrBackPressured {
			panic(err)
		}
	}), "back-pressured")
	require.NoError(t, s.Close())
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		if _, err := p.Offer(pubTypeID, small); err != ErrNotConnected {
			panic(err)
		}
	}), "not connected")
}
