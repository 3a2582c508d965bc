package errlog

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// recordShared and recordOwn are two call sites: the same error recorded
// from each is two observations.
//
//go:noinline
func recordShared(l *Log, err error) bool { return l.Record(err) }

//go:noinline
func recordOwn(l *Log, err error) bool { return l.Record(err) }

// Several goroutines record the same and different errors while readers
// read: every observation a reader sees is whole (count >= 1, first <=
// last, a text it knows), and at the end the counts add up exactly.
func TestConcurrentRecordAndRead(t *testing.T) {
	const (
		writers = 4
		rounds  = 2000
		shared  = 5 // distinct shared messages
	)
	buf := newBuf(1 << 18)
	clock := &tickingClock{}
	l := mustLog(t, buf, WithClock(clock))

	var stop atomic.Bool
	var readers sync.WaitGroup
	var reads atomic.Int64
	for range 2 {
		readers.Go(func() {
			for !stop.Load() {
				_, err := Read(buf, 0, func(o Observation) {
					if o.Count < 1 || o.First.After(o.Last) ||
						!(strings.HasPrefix(o.Text, "*errors.errorString: shared ") || strings.HasPrefix(o.Text, "*fmt.wrapError: own ")) {
						t.Errorf("torn observation: %+v", o)
					}
				})
				if err != nil {
					t.Error(err)
				}
				reads.Add(1)
			}
		})
	}
	var writersWG sync.WaitGroup
	for w := range writers {
		writersWG.Go(func() {
			for i := range rounds {
				if !recordShared(l, fmt.Errorf("shared %d", i%shared)) {
					t.Error("full")
				}
				if i%4 == 0 && !recordOwn(l, fmt.Errorf("own %d: %w", w, errors.New("x"))) {
					t.Error("full")
				}
			}
		})
	}
	writersWG.Wait()
	stop.Store(true)
	readers.Wait()
	require.Positive(t, reads.Load())

	counts := map[string]int64{}
	var total int64
	for _, o := range readAll(t, buf) {
		line, _, _ := strings.Cut(o.Text, "\n")
		_, dup := counts[line]
		require.False(t, dup, "one record per observation: %s", line)
		counts[line] = o.Count
		total += o.Count
	}
	require.Len(t, counts, shared+writers)
	for i := range shared {
		require.Equal(t, int64(writers*rounds/shared), counts[fmt.Sprintf("*errors.errorString: shared %d", i)])
	}
	for w := range writers {
		require.Equal(t, int64(rounds/4), counts[fmt.Sprintf("*fmt.wrapError: own %d: x", w)])
	}
	require.Equal(t, int64(writers*rounds+writers*rounds/4), total)
}

// tickingClock's wall clock moves one millisecond at every reading.
type tickingClock struct{ ms atomic.Int64 }

func (c *tickingClock) EpochMillis() int64 { return c.ms.Add(1) }
func (c *tickingClock) Nanos() int64       { return c.ms.Load() * 1e6 }
