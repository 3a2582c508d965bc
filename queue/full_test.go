package queue

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFullQueueUnderManyProducers: several producers race to fill
// a queue that nobody drains (checked: queue_test.go and stress_test.go
// only fill a queue from one goroutine, or with a consumer running).
// Every producer offers until refused: the queue ends exactly full, each
// producer's accepted values are a prefix of what it offered, refusals
// stay refusals, and draining returns exactly those values, each
// producer's in its order; then the queue is empty and the counts agree.
// Repeated for many laps, so that the race meets every slot.
func TestFullQueueUnderManyProducers(t *testing.T) {
	const producers = 4
	for _, k := range kinds {
		if k.name == "OneToOne" {
			continue // one producer only
		}
		for _, capacity := range []int{k.minCapacity, 4, 64} {
			t.Run(fmt.Sprintf("%s/%d", k.name, capacity), func(t *testing.T) {
				p := newPipe[int64](t, k, capacity)
				for round := range 50 {
					var wg sync.WaitGroup
					start := make(chan struct{})
					accepted := make([]int64, producers)
					for id := range producers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							<-start
							seq := int64(0)
							for p.Offer(int64(id)<<32 | seq) {
								seq++
							}
							for range 3 {
								if p.Offer(-1) {
									t.Error("offer accepted by a full queue")
								}
							}
							accepted[id] = seq
						}()
					}
					close(start)
					wg.Wait()
					total := int64(0)
					for _, a := range accepted {
						total += a
					}
					require.EqualValues(t, capacity, total, "round %d: %v", round, accepted)
					require.Equal(t, capacity, p.Size())
					require.Zero(t, (p.Capacity() - p.Size()))
					require.False(t, p.isEmpty())
					require.False(t, p.Offer(-1))

					next := make([]int64, producers)
					got := p.DrainTo(nil, capacity+5)
					require.Len(t, got, capacity)
					for _, v := range got {
						id, seq := v>>32, v&(1<<32-1)
						require.Less(t, id, int64(producers))
						require.Equal(t, next[id], seq, "producer %d out of order", id)
						next[id]++
					}
					require.Equal(t, accepted, next)
					v, ok := p.Poll()
					require.False(t, ok)
					require.Zero(t, v)
					require.True(t, p.isEmpty())
					require.Zero(t, p.Size())
					require.EqualValues(t, capacity*(round+1), p.addedCount())
					require.EqualValues(t, capacity*(round+1), p.removedCount())
				}
			})
		}
	}
}
