package ringbuf

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Two views of one many-to-one ring (another goroutine's or process's):
// each one's tail guess is stale whenever the other has written, and every
// message must still land once, in order, intact; a full ring is reported
// by either view without writing over anything.
func TestManyToOneViewsWithStaleTailGuesses(t *testing.T) {
	buf, err := Allocate(1024)
	require.NoError(t, err)
	a, err := NewManyToOne(buf)
	require.NoError(t, err)
	b, err := NewManyToOne(buf)
	require.NoError(t, err)
	views := []*ManyToOne{a, b}
	rng := rand.New(rand.NewPCG(1, 2))

	var sent, got [][]byte
	h := func(_ int32, p []byte) { got = append(got, bytes.Clone(p)) }
	for i := 0; i < 20_000; i++ {
		p := make([]byte, rng.IntN(100))
		for j := range p {
			p[j] = byte(rng.Uint32())
		}
		v := views[rng.IntN(2)]
		switch err := v.Write(int32(1+i%3), p); err {
		case nil:
			sent = append(sent, p)
		case ErrFull:
		default:
			t.Fatal(err)
		}
		if rng.IntN(4) == 0 {
			_, err := a.Read(h, rng.IntN(4)+1)
			require.NoError(t, err)
		}
	}
	for range 4 { // a read stops at the end of the ring: at most two
		_, err := a.Read(h, NoLimit)
		require.NoError(t, err)
	}
	require.Equal(t, len(sent), len(got))
	for i := range sent {
		require.Equal(t, sent[i], got[i], "message %d", i)
	}

	// Fill through one view, then the other (whose guess is stale) must
	// report full rather than claim.
	for a.Write(1, make([]byte, 40)) == nil {
	}
	tail := a.ProducerPosition()
	require.ErrorIs(t, b.Write(1, make([]byte, 40)), ErrFull)
	_, err = b.TryClaim(1, 40)
	require.ErrorIs(t, err, ErrFull)
	require.Equal(t, tail, b.ProducerPosition())
}
