package broadcast

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/buildtags"
)

// stressMessages is the number of messages the concurrent tests transmit
// (fewer under the race detector).
func stressMessages() int {
	if testing.Short() || buildtags.Race {
		return 20_000
	}
	return 300_000
}

// msgType is the type id of message seq, checked by receivers.
func msgType(seq uint64) int32 { return int32(1 + seq%5) }

// msgLen is the payload length of message seq: 8..8+spread-1.
func msgLen(seq uint64, spread int) int { return 8 + int(seq%uint64(spread)) }

type rxResult struct {
	delivered, lappedErrs int
	lapped                int64
	bad                   []string
}

// Copy receivers under a concurrent transmitter: every delivered message is
// intact, of the right type and newer than the previous one. Race-clean: the
// copy receiver's payload copy is atomic under -race (payload_atomic.go).
func TestConcurrentCopyReceivers(t *testing.T) {
	const capacity = 1024
	b := newBuf(t, capacity)
	tx := newTx(t, b)
	n := stressMessages()
	const receivers = 3

	var done atomic.Bool
	var txErr error
	farBehind := make(chan struct{})
	results := make([]rxResult, receivers+1)
	var wg sync.WaitGroup

	receive := func(res *rxResult, cr *CopyReceiver, wait <-chan struct{}) {
		defer wg.Done()
		if wait != nil {
			<-wait
		}
		last, first := uint64(0), true
		handler := func(typ int32, p []byte) {
			seq, ok := checkPayload(p)
			switch {
			case !ok:
				res.bad = append(res.bad, "torn payload delivered")
			case typ != msgType(seq):
				res.bad = append(res.bad, "wrong type")
			case !first && seq <= last:
				res.bad = append(res.bad, "sequence not increasing")
			}
			last, first = seq, false
			res.delivered++
		}
		for len(res.bad) == 0 {
			finished := done.Load()
			got, err := cr.Receive(handler)
			switch {
			case errors.Is(err, ErrLapped):
				res.lappedErrs++
			case err != nil:
				res.bad = append(res.bad, err.Error())
			case got == 0 && finished:
				res.lapped = cr.receiver().LappedCount()
				return
			}
		}
	}
	for i := range receivers {
		wg.Add(1)
		go receive(&results[i], NewCopyReceiver(newRx(t, b), 0), nil)
	}
	// The slow receiver does not read until the transmitter is three rings
	// ahead: its first Receive must report the loss.
	wg.Add(1)
	slow := NewCopyReceiver(newRx(t, b), 0)
	go receive(&results[receivers], slow, farBehind)

	wg.Add(1)
	go func() {
		defer wg.Done()
		var buf [128]byte
		written := 0
		for seq := range uint64(n) {
			p := msgPayload(buf[:], seq, msgLen(seq, 100))
			if err := tx.Transmit(msgType(seq), p); err != nil {
				txErr = err
				break
			}
			written += int(align(int64(len(p) + headerLength)))
			if written > 3*capacity && farBehind != nil {
				close(farBehind)
				farBehind = nil
			}
		}
		done.Store(true)
	}()
	wg.Wait()

	require.NoError(t, txErr)
	for i, r := range results {
		require.Empty(t, r.bad, "receiver %d", i)
		// No delivery count is asserted: on a loaded machine a receiver
		// may not be scheduled until the transmitter has finished.
		t.Logf("receiver %d: delivered %d of %d, %d ErrLapped, %d laps", i, r.delivered, n, r.lappedErrs, r.lapped)
	}
	require.NotZero(t, results[receivers].lappedErrs, "the slow receiver was lapped")
	require.NotZero(t, results[receivers].lapped)
}

// Raw receivers on other goroutines, synchronised with the transmitter so that
// no batch laps them: they see every message, in order, and the race
// detector sees no race (the channel hand-offs order the plain payload
// writes before the reads and the reads before the next writes).
func TestSynchronisedRawReceivers(t *testing.T) {
	const capacity = 4096 // batches of 16 messages of at most 136 bytes fit
	b := newBuf(t, capacity)
	tx := newTx(t, b)
	const receivers, batches, batch = 3, 200, 16

	var wg sync.WaitGroup
	acks := make(chan struct{})
	ready := make([]chan struct{}, receivers)
	results := make([]rxResult, receivers)
	for i := range receivers {
		ready[i] = make(chan struct{})
		rx := newRx(t, b)
		res := &results[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			next := uint64(0)
			for range ready[i] {
				for rx.ReceiveNext() {
					seq, ok := checkPayload(rx.Payload())
					if !ok || seq != next || rx.TypeID() != msgType(seq) || !rx.Validate() {
						res.bad = append(res.bad, "unexpected message")
					}
					next++
					res.delivered++
				}
				if rx.Err() != nil {
					res.bad = append(res.bad, rx.Err().Error())
				}
				acks <- struct{}{}
			}
			res.lapped = rx.LappedCount()
		}()
	}
	var buf [128]byte
	seq := uint64(0)
	for range batches {
		for range batch {
			require.NoError(t, tx.Transmit(msgType(seq), msgPayload(buf[:], seq, msgLen(seq, 120))))
			seq++
		}
		for _, c := range ready {
			c <- struct{}{}
		}
		for range ready {
			<-acks
		}
	}
	for _, c := range ready {
		close(c)
	}
	wg.Wait()
	for i, r := range results {
		require.Empty(t, r.bad, "receiver %d", i)
		require.Equal(t, batches*batch, r.delivered, "receiver %d", i)
		require.Zero(t, r.lapped)
	}
}
