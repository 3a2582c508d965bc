package ringbuf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHandlerReadingItsOwnRing: a handler that reads from the ring it is
// called from (the same consumer goroutine, so within the contract). The
// inner read consumes the handler's message and what follows it; the outer
// read used to carry on from its own, stale position: on a one-to-one ring
// it delivered the inner read's messages a second time, and on a
// many-to-one ring (whose consumed space is zeroed) it stopped at the
// zeroes and moved head back over them, so the messages after them were
// never delivered and Size counted space that no read would ever release.
func TestHandlerReadingItsOwnRing(t *testing.T) {
	forKinds(t, func(t *testing.T, k kind) {
		for _, controlled := range []bool{false, true} {
			r := newRing(t, k, 1024)
			for i := range 5 {
				require.NoError(t, r.Write(1, []byte{byte(i)}))
			}
			var seen []byte
			inner := func(_ int32, p []byte) { seen = append(seen, 100+p[0]) }
			outer := func(p []byte) {
				seen = append(seen, p[0])
				if p[0] == 0 {
					n, err := r.Read(inner, 2)
					require.NoError(t, err)
					require.Equal(t, 2, n)
				}
			}
			var n int
			var err error
			if controlled {
				n, err = r.ControlledRead(func(_ int32, p []byte) Action { outer(p); return Continue }, NoLimit)
			} else {
				n, err = r.Read(func(_ int32, p []byte) { outer(p) }, NoLimit)
			}
			require.NoError(t, err)
			for _, m := range drain(t, r) {
				seen = append(seen, m.payload[0])
			}
			require.Equal(t, []byte{0, 101, 102, 3, 4}, seen[:min(len(seen), 5)], "controlled=%v: every message once, in order", controlled)
			require.Len(t, seen, 5, "controlled=%v: every message once, in order: %v", controlled, seen)
			require.LessOrEqual(t, n, 3, "controlled=%v", controlled)
			require.Equal(t, r.ProducerPosition(), r.ConsumerPosition(), "controlled=%v: all consumed", controlled)
			require.Zero(t, r.Size())
		}
	})
}

// TestHandlerReadingItsOwnRingConsumingNothingMore: an inner read that
// delivers nothing beyond the handler's message (a controlled read whose
// handler aborts, a limit of 0) still releases that message, and with it
// head: the outer read must not release that space again when it ends. On a
// many-to-one ring producers may have written there meanwhile, a lap
// later, and the outer read used to zero their records.
func TestHandlerReadingItsOwnRingConsumingNothingMore(t *testing.T) {
	for _, abort := range []bool{false, true} {
		r := newManyToOne(t, 64)
		for i := range 4 {
			require.NoError(t, r.Write(1, []byte{byte(i)})) // 0..64: full
		}
		var seen []byte
		n, err := r.Read(func(_ int32, p []byte) {
			seen = append(seen, p[0])
			if p[0] != 0 {
				return
			}
			var err error
			if abort {
				_, err = r.ControlledRead(func(int32, []byte) Action { return Abort }, NoLimit)
			} else {
				_, err = r.Read(func(int32, []byte) {}, 0)
			}
			require.NoError(t, err)
			require.Equal(t, int64(16), r.ConsumerPosition(), "the inner read released the handler's message")
			// Another producer uses the space at once: index 0, a lap on.
			require.NoError(t, r.Write(2, []byte{9}))
		}, 1)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		got := drain(t, r)
		require.Equal(t, []msg{{1, "\x01"}, {1, "\x02"}, {1, "\x03"}, {2, "\x09"}}, got, "abort=%v", abort)
		require.Equal(t, r.ProducerPosition(), r.ConsumerPosition())
	}
}
