package journal

import (
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// One writer, several Tailers following the live tail through many
// segment rolls and a Flusher syncing concurrently: every Tailer reads
// every record exactly once, per stream in order, with its body intact.
func TestTailersFollowTheWriter(t *testing.T) {
	const tailers, streams = 4, 3
	n := soak(6000)
	j := openT(t, testDir(t), Options{Flush: FlushPeriodic, FlushBytes: 8 << 10})
	var wg sync.WaitGroup
	errs := make(chan error, tailers+1)
	stop := make(chan struct{})
	wg.Add(1)
	go func() { // the flusher, as a runner would drive it
		defer wg.Done()
		f := j.Flusher()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := f.DoWork(); err != nil {
				errs <- err
				return
			}
			runtime.Gosched()
		}
	}()
	ready := make(chan *Tailer, tailers)
	var readers sync.WaitGroup
	for range tailers {
		tl, err := j.NewTailer()
		require.NoError(t, err)
		readers.Add(1)
		go func() {
			defer readers.Done()
			defer tl.Close()
			next := map[uint32]int64{}
			deadline := time.Now().Add(time.Minute)
			for got := 0; got < n; {
				r, ok, err := tl.Next()
				if err != nil {
					errs <- err
					return
				}
				if !ok {
					if time.Now().After(deadline) {
						errs <- fmt.Errorf("read %d of %d", got, n)
						return
					}
					runtime.Gosched()
					continue
				}
				if r.Sequence != next[r.StreamID] {
					errs <- fmt.Errorf("stream %d: sequence %d, want %d", r.StreamID, r.Sequence, next[r.StreamID])
					return
				}
				if err := checkBody(r.Body, r.StreamID, r.Sequence); err != nil {
					errs <- err
					return
				}
				next[r.StreamID]++
				got++
			}
			ready <- tl
		}()
	}
	for i := range n {
		appendN(t, j, uint32(1+i%streams), 1)
	}
	readers.Wait()
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, ready, tailers)
	require.Greater(t, j.Stats().Segments, 10)
	require.NoError(t, j.Flush())
	require.Equal(t, j.CommittedPosition(), j.flushedPosition())
}
