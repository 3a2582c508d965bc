package ringbuf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stallLimit turns a lost message into a failure instead of a hang. It is a
// hang guard, far above any scheduling delay, not a timing assertion.
const stallLimit = 30 * time.Second

var errStopped = errors.New("stress: stopped")

// A stress message: [0,8) sequence number, [8] producer id, then bytes that
// are a function of (producer, sequence, offset), so the consumer can check
// every byte it receives.
func fillStress(p []byte, producer int, seq uint64) {
	binary.LittleEndian.PutUint64(p, seq)
	p[8] = byte(producer)
	for i := 9; i < len(p); i++ {
		p[i] = byte(seq*31 + uint64(producer)*7 + uint64(i))
	}
}

func checkStress(p []byte) (producer int, seq uint64, err error) {
	if len(p) < 9 {
		return 0, 0, fmt.Errorf("message of %d bytes is too short", len(p))
	}
	seq = binary.LittleEndian.Uint64(p)
	producer = int(p[8])
	for i := 9; i < len(p); i++ {
		if p[i] != byte(seq*31+uint64(producer)*7+uint64(i)) {
			return producer, seq, fmt.Errorf("producer %d seq %d: byte %d corrupt", producer, seq, i)
		}
	}
	return producer, seq, nil
}

// produce sends n messages of random length [9, maxLen] using every way of
// producing: write, claim/commit, claim/abort (not counted), batch write,
// batch claim (commit or abort) and records (commit or abort).
func produce(r ringBuffer, producer, n, maxLen int, seed uint64, stop *atomic.Bool) error {
	rng := rand.New(rand.NewPCG(seed, uint64(producer)))
	var scratch [4][]byte
	for i := range scratch {
		scratch[i] = make([]byte, maxLen)
	}
	retry := func(err error) (bool, error) {
		if err == ErrFull {
			if stop.Load() {
				return false, errStopped
			}
			runtime.Gosched()
			return true, nil
		}
		return false, err
	}
	for seq := uint64(0); seq < uint64(n); {
		length := 9 + rng.IntN(maxLen-8)
		switch op := rng.IntN(11); {
		case op < 4:
			p := scratch[0][:length]
			fillStress(p, producer, seq)
			if again, err := retry(r.Write(1, p)); err != nil {
				return err
			} else if again {
				continue
			}
			seq++
		case op < 7:
			c, err := r.TryClaim(2, length)
			if again, err := retry(err); err != nil {
				return err
			} else if again {
				continue
			}
			if op == 6 && rng.IntN(4) == 0 {
				fillStress(c.Payload, producer, 1<<60) // garbage nobody may see
				if err := r.Abort(c.Index); err != nil {
					return err
				}
				continue
			}
			fillStress(c.Payload, producer, seq)
			if err := r.Commit(c.Index); err != nil {
				return err
			}
			seq++
		case op < 9:
			k := min(1+rng.IntN(4), n-int(seq))
			batch := scratch[:k]
			for j := range batch {
				batch[j] = batch[j][:9+rng.IntN(maxLen-8)]
				fillStress(batch[j], producer, seq+uint64(j))
			}
			err := r.WriteBatch(3, batch)
			for j := range batch {
				batch[j] = batch[j][:maxLen]
			}
			if again, err := retry(err); err != nil {
				return err
			} else if again {
				continue
			}
			seq += uint64(k)
		case op < 10:
			k := min(1+rng.IntN(4), n-int(seq))
			rs, err := r.TryClaimRecords(10, length, k)
			if again, err := retry(err); err != nil {
				return err
			} else if again {
				continue
			}
			if rng.IntN(8) == 0 {
				for j := range k {
					fillStress(rs.Payload(j), producer, 1<<60) // garbage nobody may see
				}
				if err := r.AbortRecords(rs); err != nil {
					return err
				}
				continue
			}
			for j := range k {
				fillStress(rs.Payload(j), producer, seq+uint64(j))
			}
			if err := r.CommitRecords(rs); err != nil {
				return err
			}
			seq += uint64(k)
		default:
			k := min(1+rng.IntN(4), n-int(seq))
			b, err := r.TryClaimBatch(k * RecordSize(length))
			if again, err := retry(err); err != nil {
				return err
			} else if again {
				continue
			}
			for j := 0; j < k; j++ {
				p, err := b.Append(int32(4+j), length)
				if err != nil {
					return err
				}
				fillStress(p, producer, seq+uint64(j))
			}
			if rng.IntN(8) == 0 {
				if err := r.AbortBatch(b); err != nil {
					return err
				}
				continue
			}
			if err := r.CommitBatch(b); err != nil {
				return err
			}
			seq += uint64(k)
		}
	}
	return nil
}

// consume reads until every producer's n messages have arrived, checking
// exactly-once, per-producer order and content. It mixes plain reads with
// controlled reads whose handler sometimes aborts (the message must come
// back), breaks or commits.
func consume(t *testing.T, r ringBuffer, producers, n int, seed uint64) {
	next := make([]uint64, producers)
	total := 0
	var failure error
	rng := rand.New(rand.NewPCG(seed, 99))
	var lastAborted []byte
	check := func(p []byte) bool {
		if lastAborted != nil {
			if string(lastAborted) != string(p) {
				failure = fmt.Errorf("aborted message not redelivered first")
				return false
			}
			lastAborted = nil
		}
		producer, seq, err := checkStress(p)
		switch {
		case err != nil:
			failure = err
		case producer >= producers:
			failure = fmt.Errorf("unknown producer %d", producer)
		case seq != next[producer]:
			failure = fmt.Errorf("producer %d: got seq %d, want %d", producer, seq, next[producer])
		default:
			next[producer]++
			total++
			return true
		}
		return false
	}
	handler := func(_ int32, p []byte) { check(p) }
	controlled := func(_ int32, p []byte) Action {
		if failure != nil {
			return Break
		}
		if lastAborted == nil && rng.IntN(50) == 0 {
			lastAborted = append(lastAborted[:0], p...)
			return Abort
		}
		check(p)
		switch rng.IntN(20) {
		case 0:
			return Break
		case 1:
			return Commit
		}
		return Continue
	}
	idle := 0
	lastProgress, lastTotal := time.Now(), 0
	for total < producers*n && failure == nil {
		var got int
		var err error
		if rng.IntN(2) == 0 {
			got, err = r.Read(handler, 1+rng.IntN(100))
		} else {
			got, err = r.ControlledRead(controlled, 1+rng.IntN(100))
		}
		require.NoError(t, err)
		if got == 0 {
			idle++
			if idle%64 == 0 {
				runtime.Gosched()
				if total != lastTotal {
					lastProgress, lastTotal = time.Now(), total
				} else if time.Since(lastProgress) > stallLimit {
					t.Fatalf("no message for %v after %d of %d (lost or blocked)", stallLimit, total, producers*n)
				}
			}
		}
	}
	require.NoError(t, failure)
	for p := range next {
		require.Equal(t, uint64(n), next[p], "producer %d", p)
	}
	require.Zero(t, r.Size(), "nothing left behind")
}

func stress(t *testing.T, r ringBuffer, producers, n, maxLen int) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	var wg sync.WaitGroup
	var stop atomic.Bool
	t.Cleanup(func() { stop.Store(true); wg.Wait() })
	errs := make(chan error, producers)
	for p := 0; p < producers; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := produce(r, p, n, maxLen, seed, &stop); err != nil {
				errs <- err
			}
		}()
	}
	consume(t, r, producers, n, seed)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestStressManyToOne(t *testing.T) {
	n := 250_000
	if testing.Short() {
		n = 20_000
	}
	stress(t, newRing(t, kinds[1], 4096), 4, n, 120)
}

func TestStressOneToOne(t *testing.T) {
	n := 1_000_000
	if testing.Short() {
		n = 50_000
	}
	stress(t, newRing(t, kinds[0], 4096), 1, n, 120)
}
