package publication

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// childSubscriberRejoin joins the publication at DUTY_IPC_PATH and polls
// without pausing, its handler spending a few µs per message (so that a
// SIGSTOP lands inside its reads, between its drop check and the headers
// it reads next); when it is
// dropped it says "rejoined <n>" after joining again. Any other error but
// the end of the stream fails it (ErrCorrupt included: a correct
// publisher's log is never corrupt). At the end it prints "done <drops>".
func childSubscriberRejoin() error {
	ctx, cancel := childContext()
	defer cancel()
	path := os.Getenv("DUTY_IPC_PATH")
	s, err := OpenSubscription(ctx, path)
	if err != nil {
		return err
	}
	fmt.Printf("joined %d %d\n", s.slotIndex(), s.joinedAt())
	drops := 0
	h := func(int32, []byte) {
		for start := time.Now(); time.Since(start) < 5*time.Microsecond; {
		}
	}
	for {
		_, err := s.Poll(h, 64)
		switch {
		case err == nil:
		case err == ErrEndOfStream:
			fmt.Printf("done %d\n", drops)
			return s.Close()
		case errors.Is(err, ErrSubscriberDropped):
			drops++
			if err := s.Close(); err != nil {
				return err
			}
			if s, err = OpenSubscription(ctx, path); err != nil {
				return fmt.Errorf("rejoin after drop %d: %w", drops, err)
			}
			fmt.Printf("rejoined %d\n", drops)
		default:
			return fmt.Errorf("poll at %d after %d drops: %w", s.Position(), drops, err)
		}
	}
}

// TestCrossProcessStoppedSubscriberRejoins: a subscriber process that
// polls without pause is SIGSTOPped, for longer than its timeout, while
// this process publishes several laps of the log past it (a checking
// subscriber keeps the stream going); resumed, it is told
// ErrSubscriberDropped (never ErrCorrupt, whatever its stop interrupted)
// and rejoins. Several rounds; the checking subscriber gets everything.
func TestCrossProcessStoppedSubscriberRejoins(t *testing.T) {
	rounds := 4
	if os.Getenv("DUTY_SOAK") != "" {
		rounds = 40
	}
	const capacity = 16 << 10
	p, err := Create(testDir(t), "pub", capacity, WithSubscriberTimeout(200*time.Millisecond))
	require.NoError(t, err)
	defer p.Close()
	checker := startChild(t, "sub", pathEnv(p.File().Path()))
	victim := startChild(t, "sub-rejoin", pathEnv(p.File().Path()))
	joinedLine(t, checker)
	joinedLine(t, victim)
	waitActive(t, p, 2)

	buf := make([]byte, p.MaxMessageLength())
	seq := uint64(0)
	lastBeat := time.Now()
	// publish offers the next message until it is accepted.
	publish := func() {
		payload := pubPayload(buf, 0, seq, pubLength(seq, p.MaxMessageLength()))
		for spins := 0; ; spins++ {
			_, err := p.Offer(pubTypeID, payload)
			if err == nil {
				break
			}
			require.True(t, err == ErrBackPressured || err == ErrAdminAction, "seq %d: %v", seq, err)
			backoff(spins)
		}
		seq++
		if time.Since(lastBeat) > 50*time.Millisecond {
			require.NoError(t, p.Heartbeat(time.Now().UnixMilli()))
			lastBeat = time.Now()
		}
	}
	for round := 1; round <= rounds; round++ {
		for range 2000 { // the victim reads all the time
			publish()
		}
		require.NoError(t, victim.Cmd.Process.Signal(syscall.SIGSTOP))
		for p.Stats().DroppedSubscribers < int64(round) {
			publish()
		}
		for start := p.position(); p.position()-start < 3*capacity; {
			publish() // lap the victim's unread records
		}
		require.NoError(t, victim.Cmd.Process.Signal(syscall.SIGCONT))
		line := victim.Line(t)
		require.Equal(t, fmt.Sprintf("rejoined %d", round), line, "stderr: %s", victim.Stderr)
	}
	require.NoError(t, p.Close())
	n, end, _ := doneLine(t, checker)
	require.Equal(t, int(seq), n)
	require.Equal(t, "eos", end)
	line := victim.Line(t)
	require.True(t, strings.HasPrefix(line, "done "), "%q, stderr: %s", line, victim.Stderr)
	require.NoError(t, victim.Wait(t), "stderr: %s", victim.Stderr)
}
