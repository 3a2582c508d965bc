//go:build !race

package broadcast

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// Raw receivers read payloads in place, with plain loads, while the
// transmitter overwrites a small ring as fast as it can. Torn reads happen;
// Validate must reject every one of them: each message accepted after a
// successful Validate is intact, of the right type, and newer than the one
// before. This is the seqlock's data race, so the test is not built with
// -race (TestConcurrentCopyReceivers is the race-clean counterpart).
func TestNoRaceTornReadsRejected(t *testing.T) {
	const capacity = 256 // max payload 32: laps are frequent
	b := newBuf(t, capacity)
	tx := newTx(t, b)
	n := 4 * stressMessages()
	const receivers = 2

	type result struct {
		accepted, rejected, tornRejected int
		lapped                           int64
		bad                              string
	}
	results := make([]result, receivers)
	var done atomic.Bool
	var wg sync.WaitGroup
	for i := range receivers {
		rx := newRx(t, b)
		res := &results[i]
		wg.Add(1)
		go func() {
			defer wg.Done()
			last, first := uint64(0), true
			for res.bad == "" {
				finished := done.Load()
				if !rx.ReceiveNext() {
					if rx.Err() != nil {
						res.bad = rx.Err().Error()
					}
					if finished {
						break
					}
					continue
				}
				typ := rx.TypeID()
				seq, ok := checkPayload(rx.Payload()) // plain reads of the ring
				if !rx.Validate() {
					res.rejected++
					if !ok {
						res.tornRejected++
					}
					continue
				}
				switch {
				case !ok:
					res.bad = "validated a torn payload"
				case typ != msgType(seq):
					res.bad = "validated a wrong type"
				case !first && seq <= last:
					res.bad = "sequence not increasing"
				}
				last, first = seq, false
				res.accepted++
			}
			res.lapped = rx.LappedCount()
		}()
	}
	var buf [32]byte
	for seq := range uint64(n) {
		require.NoError(t, tx.Transmit(msgType(seq), msgPayload(buf[:], seq, msgLen(seq, 25))))
	}
	done.Store(true)
	wg.Wait()
	total := 0
	for i, r := range results {
		require.Empty(t, r.bad, "receiver %d", i)
		total += r.accepted
		t.Logf("receiver %d: accepted %d of %d, rejected by Validate %d (of which visibly torn %d), laps %d",
			i, r.accepted, n, r.rejected, r.tornRejected, r.lapped)
	}
	if total == 0 {
		t.Skip("the receivers were not scheduled while the transmitter ran")
	}
}
