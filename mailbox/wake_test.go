package mailbox

import (
	"encoding/binary"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/internal/buildtags"
	"github.com/dutyrt/duty/runner"
)

// wakeSends is the number of messages of the wake-up stress test: 10^7
// with DUTY_SOAK=50, a fiftieth of that by default and a quarter of that
// under the race detector.
func wakeSends() int {
	n := 200_000
	if buildtags.Race {
		n = 50_000
	}
	if f, err := strconv.Atoi(os.Getenv("DUTY_SOAK")); err == nil && f > 1 {
		n *= f
	}
	return n
}

// TestWakeIdleLosesNoWakeUp: four senders send bursts with pauses of
// random length to a consumer that falls asleep as soon as it is idle
// (one spin) and would sleep for an hour unless woken. Every message is
// delivered once, in order per sender; a lost wake-up would leave a
// message queued and the consumer asleep, which the hang guard reports.
func TestWakeIdleLosesNoWakeUp(t *testing.T) {
	mb := newMailbox(t, Config{Capacity: 4096})
	st, err := NewWakeIdle(WakeConfig{Spins: 1, MaxSleep: time.Hour}, mb)
	require.NoError(t, err)
	const senders = 4
	total := wakeSends()
	per := total / senders
	var wg sync.WaitGroup
	for s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(s), 7))
			var buf [16]byte
			binary.LittleEndian.PutUint64(buf[8:], uint64(s))
			for seq := 0; seq < per; {
				binary.LittleEndian.PutUint64(buf[:], uint64(seq))
				if err := mb.Send(1, buf[:]); err == ErrBackPressured {
					continue
				} else if err != nil {
					t.Error(err)
					return
				}
				seq++
				if rng.IntN(64) == 0 { // a pause: the consumer may fall asleep
					for range rng.IntN(2000) {
						_ = rng.Uint64()
					}
					if rng.IntN(8) == 0 {
						time.Sleep(time.Duration(rng.IntN(50)) * time.Microsecond)
					}
				}
			}
		}()
	}
	next := make([]uint64, senders)
	got := 0
	deadline := time.Now().Add(20 * time.Minute) // hang guard only
	h := func(m *Message) Action {
		p := m.Payload()
		s, seq := binary.LittleEndian.Uint64(p[8:]), binary.LittleEndian.Uint64(p)
		if seq != next[s] {
			t.Fatalf("sender %d: got %d, want %d", s, seq, next[s])
		}
		next[s]++
		got++
		return Continue
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for got < per*senders {
			if time.Now().After(deadline) {
				return
			}
			n, err := mb.Drain(h, 256)
			if err != nil {
				t.Error(err)
				return
			}
			st.Idle(n)
		}
	}()
	select {
	case <-done:
	case <-time.After(21 * time.Minute): // hang guard only: a lost wake-up sleeps for an hour
		t.Fatalf("the consumer is asleep with messages queued: %d of %d delivered, depth %d", got, per*senders, mb.Stats().Depth)
	}
	wg.Wait()
	require.Equal(t, per*senders, got)
	require.Zero(t, mb.Stats().Depth)
}

// The strategy refuses what it cannot serve, and names itself.
func TestWakeIdleConfig(t *testing.T) {
	mb := newMailbox(t, Config{})
	_, err := NewWakeIdle(WakeConfig{})
	require.ErrorIs(t, err, ErrArgument, "no mailbox")
	_, err = NewWakeIdle(WakeConfig{Spins: -1}, mb)
	require.ErrorIs(t, err, ErrArgument)
	_, err = NewWakeIdle(WakeConfig{}, mb, nil)
	require.ErrorIs(t, err, ErrArgument)
	st, err := NewWakeIdle(WakeConfig{}, mb)
	require.NoError(t, err)
	require.Equal(t, "wake", st.Alias())
	require.Equal(t, "wake:1000:100ms", st.String())
	_, sender, _, _ := placed(t, minCapacity, Config{})
	_, err = NewWakeIdle(WakeConfig{}, sender)
	require.ErrorIs(t, err, ErrNotConsumer)
}

// A sleeping consumer costs a sender one system call per sleep, and an
// awake one none: the doorbell is clear while the consumer runs, and the
// first send after a sleep clears it.
func TestDoorbellRingsOncePerSleep(t *testing.T) {
	mb := newMailbox(t, Config{})
	require.Zero(t, mb.w.doorbell.Load())
	require.NoError(t, mb.Send(1, []byte("x")))
	mb.w.doorbell.Store(1) // as a consumer falling asleep
	require.NoError(t, mb.Send(1, []byte("y")))
	require.Zero(t, mb.w.doorbell.Load(), "the send woke the consumer and cleared the bell")
	require.NoError(t, mb.Send(1, []byte("z")))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = mb.Send(1, []byte("a")); _, _ = mb.Drain(func(*Message) Action { return Continue }, 10) }))
}

// An actor asleep on its mailbox (for an hour unless woken) sees its end
// of stream as soon as the mailbox is closed: Close rings the doorbell, and
// a closed mailbox is not slept on.
func TestWakeIdleWakesToClose(t *testing.T) {
	mb := newMailbox(t, Config{})
	a, err := NewActor("a", mb, func(*Message) Action { return Continue })
	require.NoError(t, err)
	st, err := NewWakeIdle(WakeConfig{Spins: 1, MaxSleep: time.Hour}, mb)
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() {
		for {
			n, err := a.DoWork()
			if err != nil {
				done <- err
				return
			}
			st.Idle(n)
		}
	}()
	for mb.w.doorbell.Load() == 0 {
		time.Sleep(100 * time.Microsecond) // until the actor sleeps
	}
	_, err = mb.Close(Drain)
	require.NoError(t, err)
	select {
	case err := <-done:
		require.ErrorIs(t, err, agent.ErrDone)
	case <-time.After(time.Minute): // hang guard only: unwoken, it sleeps for an hour
		t.Fatal("the actor slept through the close")
	}
}

// A runner closed while its agent sleeps wakes it (the strategy's Wake),
// instead of waiting for the sleep to end.
func TestRunnerCloseWakesASleepingAgent(t *testing.T) {
	mb := newMailbox(t, Config{})
	a, err := NewActor("a", mb, func(*Message) Action { return Continue })
	require.NoError(t, err)
	st, err := NewWakeIdle(WakeConfig{Spins: 1, MaxSleep: time.Hour}, mb)
	require.NoError(t, err)
	r, err := runner.New(a, runner.WithIdle(st))
	require.NoError(t, err)
	require.NoError(t, r.Start())
	for mb.w.doorbell.Load() == 0 {
		time.Sleep(100 * time.Microsecond) // until the agent sleeps
	}
	closed := make(chan error, 1)
	go func() { closed <- r.Close() }()
	select {
	case err := <-closed:
		require.NoError(t, err)
	case <-time.After(time.Minute): // hang guard only: unwoken, it sleeps for an hour
		t.Fatal("Close waited for the sleep to end")
	}
}
