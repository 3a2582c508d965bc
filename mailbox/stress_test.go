package mailbox

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/buildtags"
	"github.com/dutyrt/duty/internal/mailboxframe"
)

type stressKind int

const (
	kindSmall stressKind = iota
	kindRecord
	kindMultipart
	kindFragmented
)

// stressShape derives the kind and part lengths of message seq of sender
// id, so the receiver can recompute what it must receive.
func stressShape(id, seq int, mb *Mailbox) (stressKind, []int) {
	rng := rand.New(rand.NewPCG(uint64(id), uint64(seq)))
	switch k := stressKind(rng.IntN(4)); k {
	case kindSmall:
		return k, []int{rng.IntN(64)}
	case kindRecord:
		return k, []int{rng.IntN(mb.MaxClaimLength() + 1)}
	case kindMultipart:
		n := 2 + rng.IntN(5)
		lens := make([]int, n)
		budget := mb.MaxMessageSize() - n*partLengthPrefix
		for i := range lens {
			lens[i] = rng.IntN(min(budget/n, 3000) + 1)
			if rng.IntN(8) == 0 {
				lens[i] = 0
			}
		}
		return k, lens
	default:
		return kindFragmented, []int{mb.MaxClaimLength() + 1 + rng.IntN(mb.MaxMessageSize()-mb.MaxClaimLength())}
	}
}

func stressByte(id, seq, part, off int) byte {
	return byte(id*97 + seq*31 + part*13 + off + off>>8)
}

func stressParts(id, seq int, lens []int) [][]byte {
	parts := make([][]byte, len(lens))
	for i, n := range lens {
		p := make([]byte, n)
		for j := range p {
			p[j] = stressByte(id, seq, i, j)
		}
		parts[i] = p
	}
	return parts
}

func checkStress(m *Message, id, seq int, mb *Mailbox) error {
	kind, lens := stressShape(id, seq, mb)
	if m.NumParts() != len(lens) {
		return fmt.Errorf("sender %d seq %d (kind %d): %d parts, want %d", id, seq, kind, m.NumParts(), len(lens))
	}
	for i, n := range lens {
		p := m.Part(i)
		if len(p) != n {
			return fmt.Errorf("sender %d seq %d part %d: %d bytes, want %d", id, seq, i, len(p), n)
		}
		for j := range p {
			if p[j] != stressByte(id, seq, i, j) {
				return fmt.Errorf("sender %d seq %d part %d: byte %d corrupt", id, seq, i, j)
			}
		}
	}
	return nil
}

// sendStress sends message seq of sender id by one of the ways of sending,
// retrying while back-pressured. Senders 0 and 1 use a Sender, 2 and 3 the
// Mailbox's methods.
func sendStress(ctx context.Context, mb *Mailbox, s *Sender, id, seq int, rng *rand.Rand) error {
	kind, lens := stressShape(id, seq, mb)
	parts := stressParts(id, seq, lens)
	typeID := int32(1 + id)
	for {
		var err error
		switch op := rng.IntN(4); {
		case op == 0 && kind == kindMultipart && mb.MaxPartsClaimLength() >= mailboxframe.BodyLength(parts):
			var pc PartsClaim
			if s != nil {
				pc, err = s.ClaimParts(typeID, lens...)
			} else {
				pc, err = mb.ClaimParts(typeID, lens...)
			}
			if err == nil {
				for i := range parts {
					copy(pc.Part(i), parts[i])
				}
				err = pc.Commit()
			}
		case op == 0 && kind != kindMultipart && len(parts[0]) <= mb.MaxClaimLength():
			var c Claim
			c, err = mb.Claim(typeID, len(parts[0]))
			if err == nil {
				copy(c.Payload(), parts[0])
				err = c.Commit()
			}
		case op == 1:
			// Wait rather than spin.
			if s != nil {
				err = s.SendPartsContext(ctx, typeID, parts...)
			} else {
				err = mb.SendPartsContext(ctx, typeID, parts...)
			}
		case kind == kindMultipart:
			if s != nil {
				err = s.SendParts(typeID, parts...)
			} else {
				err = mb.SendParts(typeID, parts...)
			}
		default:
			if s != nil {
				err = s.Send(typeID, parts[0])
			} else {
				err = mb.Send(typeID, parts[0])
			}
		}
		if err != ErrBackPressured {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		runtime.Gosched()
	}
}

// startStressSenders starts senders goroutines that each send perSender
// messages with sendStress (the first two through a Sender of their own,
// the others through the Mailbox's methods; seed picks their random
// sequences) once all are started. The returned stop cancels ctx, waits
// for them and fails t with the failure of the receiving side, or else
// with a sender's error (a sender cancelled by another's failure is not
// one).
func startStressSenders(ctx context.Context, cancel context.CancelFunc, mb *Mailbox, senders, perSender int, seed uint64) (stop func(t *testing.T, failure error)) {
	var wg sync.WaitGroup
	errs := make(chan error, senders)
	start := make(chan struct{})
	for id := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var s *Sender
			if id < 2 {
				s = mb.NewSender()
			}
			rng := rand.New(rand.NewPCG(uint64(id), seed))
			<-start
			for seq := range perSender {
				if err := sendStress(ctx, mb, s, id, seq, rng); err != nil {
					errs <- fmt.Errorf("sender %d seq %d: %w", id, seq, err)
					cancel()
					return
				}
			}
		}()
	}
	close(start)
	return func(t *testing.T, failure error) {
		t.Helper()
		cancel()
		wg.Wait()
		close(errs)
		for err := range errs {
			if !errors.Is(err, context.Canceled) || failure == nil {
				require.NoError(t, err)
			}
		}
		require.NoError(t, failure)
	}
}

// nextStress returns the sender of a message of startStressSenders' (its
// type id - 1) after checking that it is that sender's next one (next,
// indexed by sender).
func nextStress(m *Message, next []int, mb *Mailbox) (int, error) {
	id := int(m.TypeID()) - 1
	if id < 0 || id >= len(next) {
		return 0, fmt.Errorf("unknown type %d", m.TypeID())
	}
	return id, checkStress(m, id, next[id], mb)
}

// Four senders mix small, multipart and fragmented messages into one
// mailbox; the receiver checks every message exactly once, in order per
// sender, whole and byte for byte, while answering with every Action.
func TestStress(t *testing.T) {
	perSender := 3000
	if testing.Short() || buildtags.Race {
		perSender = 800
	}
	mb := newMailbox(t, Config{Capacity: 32 * 1024, UnblockTimeout: time.Minute})
	const senders = 4
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	stop := startStressSenders(ctx, cancel, mb, senders, perSender, 7)

	next := make([]int, senders)
	var aborted [senders]int // seq last aborted, to see it again
	for i := range aborted {
		aborted[i] = -1
	}
	rng := rand.New(rand.NewPCG(99, 1))
	total, aborts := 0, 0
	var failure error
	for total < senders*perSender && failure == nil && ctx.Err() == nil {
		n, err := mb.Drain(func(m *Message) Action {
			id, err := nextStress(m, next, mb)
			if err != nil {
				failure = err
				return Break
			}
			switch r := rng.IntN(20); {
			case r == 0 && aborted[id] != next[id]:
				aborted[id] = next[id]
				aborts++
				return Abort
			case r == 1:
				next[id]++
				return Break
			case r < 5:
				next[id]++
				return Commit
			}
			next[id]++
			return Continue
		}, 1+rng.IntN(50))
		if err != nil {
			failure = err
		}
		total += n
		if n == 0 {
			runtime.Gosched()
		}
	}
	stop(t, failure)
	require.Equal(t, senders*perSender, total)
	for id := range senders {
		require.Equal(t, perSender, next[id])
	}
	n, err := mb.Drain(func(*Message) Action { return Continue }, 10)
	require.NoError(t, err)
	require.Zero(t, n, "nothing delivered twice")
	st := mb.Stats()
	require.Equal(t, int64(senders*perSender), st.Delivered)
	require.Zero(t, st.Torn)
	require.Zero(t, st.Corrupt)
	require.Positive(t, aborts)
	t.Logf("stats %+v, aborts %d", st, aborts)
}
