package zmtp

import (
	"context"
	"encoding/binary"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// Producers that wait for room and consumers that take batches, on a
// small queue: every message comes out exactly once, each consumer sees
// each producer's messages in order, and no waiter is forgotten (the test
// would hang).
func TestQueueManyProducersAndConsumers(t *testing.T) {
	q := newQueue(8)
	producers, per := 4, 2000*soak()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var pwg sync.WaitGroup
	for p := range producers {
		pwg.Add(1)
		go func() {
			defer pwg.Done()
			var b [8]byte
			for i := range per {
				binary.BigEndian.PutUint32(b[:], uint32(p))
				binary.BigEndian.PutUint32(b[4:], uint32(i))
				if err := q.put(ctx, [][]byte{b[:4], b[4:]}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	seen := make([][]int, 2)
	var cwg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	once := make([][]bool, producers)
	for p := range once {
		once[p] = make([]bool, per)
	}
	for c := range 2 {
		seen[c] = make([]int, producers)
		for p := range seen[c] {
			seen[c][p] = -1
		}
		cwg.Add(1)
		go func() {
			defer cwg.Done()
			var batch []*slot
			for {
				batch = q.take(batch[:0], 1+c*4)
				if len(batch) == 0 {
					mu.Lock()
					done := total == producers*per
					mu.Unlock()
					if done {
						return
					}
					select {
					case <-q.notEmpty:
					case <-ctx.Done():
						return
					}
					continue
				}
				for _, s := range batch {
					p := int(binary.BigEndian.Uint32(s.parts[0]))
					i := int(binary.BigEndian.Uint32(s.parts[1]))
					if i <= seen[c][p] {
						t.Errorf("consumer %d: producer %d message %d after %d", c, p, i, seen[c][p])
					}
					seen[c][p] = i
				}
				mu.Lock()
				for _, s := range batch {
					p, i := binary.BigEndian.Uint32(s.parts[0]), binary.BigEndian.Uint32(s.parts[1])
					if once[p][i] {
						t.Errorf("producer %d message %d twice", p, i)
					}
					once[p][i] = true
				}
				total += len(batch)
				mu.Unlock()
				q.release(batch)
				signal(q.notEmpty) // the other consumer may be waiting for the end
			}
		}()
	}
	pwg.Wait()
	cwg.Wait()
	require.Equal(t, producers*per, total)
	require.Zero(t, q.length())
}
