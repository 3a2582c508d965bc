package queue

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// item is a stress value: three words written together, so a torn or
// stale read of a slot shows as a wrong check. The check never lets the
// zero value pass: an empty (zeroed) slot read by mistake must not look
// like producer 0's first item.
type item struct {
	producer int64
	seq      int64
	check    int64
}

const itemSalt = 0x5DEECE66D

func mkItem(producer, seq int64) item {
	return item{producer: producer, seq: seq, check: producer*1_000_003 ^ seq*7919 ^ itemSalt}
}

func (it item) valid() bool { return it.check == it.producer*1_000_003^it.seq*7919^itemSalt }

func TestStressItemZeroIsInvalid(t *testing.T) {
	require.False(t, item{}.valid(), "a zeroed slot would pass as producer 0, seq 0")
	require.True(t, mkItem(0, 0).valid())
}

// stress runs producers goroutines offering perProducer items each and
// consumers goroutines polling (or draining) until all arrived, while an
// observer reads the accessors. Each consumer checks per-producer order;
// afterwards every (producer, seq) must have arrived exactly once.
func stress(t *testing.T, p testPipe[item], producers, consumers, perProducer int) {
	total := int64(producers * perProducer)
	var received atomic.Int64
	var stop atomic.Bool             // a consumer found an error: everyone returns
	seen := make([][]int, consumers) // per consumer: flattened producer*perProducer+seq
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, producers+consumers+1)

	for id := range producers {
		wg.Go(func() {
			for seq := range perProducer {
				for !p.Offer(mkItem(int64(id), int64(seq))) {
					if stop.Load() {
						return
					}
					runtime.Gosched()
				}
			}
		})
	}
	for c := range consumers {
		wg.Go(func() {
			last := make([]int64, producers)
			for i := range last {
				last[i] = -1
			}
			buf := make([]item, 0, 64)
			check := func(it item) error {
				if !it.valid() || it.producer < 0 || it.producer >= int64(producers) {
					return fmt.Errorf("consumer %d: corrupt item %+v", c, it)
				}
				if it.seq <= last[it.producer] {
					return fmt.Errorf("consumer %d: producer %d seq %d after %d", c, it.producer, it.seq, last[it.producer])
				}
				last[it.producer] = it.seq
				seen[c] = append(seen[c], int(it.producer)*perProducer+int(it.seq))
				return nil
			}
			for i := 0; received.Load() < total && !stop.Load(); i++ {
				var n int
				var err error
				switch i % 3 { // every path of the consumer
				case 0:
					if it, ok := p.Poll(); ok {
						n, err = 1, check(it)
					}
				case 1:
					n = p.Drain(func(it item) {
						if e := check(it); e != nil && err == nil {
							err = e
						}
					}, 1+i%50)
				default:
					buf = p.DrainTo(buf[:0], 64)
					for _, it := range buf {
						if e := check(it); e != nil && err == nil {
							err = e
						}
					}
					n = len(buf)
				}
				if err != nil {
					errs <- err
					stop.Store(true)
					return
				}
				if n == 0 {
					runtime.Gosched()
				}
				received.Add(int64(n))
			}
		})
	}
	var observer sync.WaitGroup
	observer.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			s, r := p.Size(), (p.Capacity() - p.Size())
			if s < 0 || s > p.Capacity() || r < 0 || r > p.Capacity() {
				errs <- fmt.Errorf("size %d, remaining %d, capacity %d", s, r, p.Capacity())
				return
			}
			if p.removedCount() > p.addedCount() {
				errs <- fmt.Errorf("removed before added")
				return
			}
			_ = p.isEmpty()
			runtime.Gosched()
		}
	})
	wg.Wait()
	close(done)
	observer.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	count := make([]uint8, total)
	for _, s := range seen {
		for _, x := range s {
			count[x]++
		}
	}
	for x, n := range count {
		require.EqualValues(t, 1, n, "producer %d seq %d arrived %d times", x/perProducer, x%perProducer, n)
	}
	require.True(t, p.isEmpty())
	require.Equal(t, total, p.addedCount())
	require.Equal(t, total, p.removedCount())
	for i, v := range slotValues(p) {
		require.Zero(t, v, "slot %d", i)
	}
}

func TestStressOneToOne(t *testing.T) {
	p, err := NewOneToOne[item](64)
	require.NoError(t, err)
	stress(t, p, 1, 1, 500_000)
}

func TestStressManyToOne(t *testing.T) {
	p, err := NewManyToOne[item](256)
	require.NoError(t, err)
	stress(t, p, 4, 1, 250_000)
}

func TestStressManyToMany(t *testing.T) {
	p, err := NewManyToMany[item](256)
	require.NoError(t, err)
	stress(t, p, 4, 4, 100_000)
}

// Small capacities make producers meet consumers at every slot.
func TestStressSmallCapacity(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			producers, consumers := 1, 1
			if k.name != "OneToOne" {
				producers = 3
			}
			if k.multiConsumer {
				consumers = 2
			}
			stress(t, newPipe[item](t, k, k.minCapacity), producers, consumers, 20_000)
		})
	}
}
