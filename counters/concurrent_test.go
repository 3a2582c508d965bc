package counters

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/countertype"
)

func TestConcurrentIncrementsSumExactly(t *testing.T) {
	m, _, _ := mustManager(t, 2, Config{})
	c := allocate(t, m, "hits", countertype.TotalWork, nil)
	other := allocate(t, m, "neighbour", countertype.TotalWork, nil)
	const writers, perWriter = 4, 20_000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				if (w+i)%2 == 0 {
					c.Add(1)
				} else {
					c.Add(3)
				}
			}
		})
	}
	// A reader from "another process" watches the word grow monotonically.
	r := m.Reader()
	stop := make(chan struct{})
	var readerErr error
	var rwg sync.WaitGroup
	rwg.Go(func() {
		last := int64(0)
		for {
			select {
			case <-stop:
				return
			default:
			}
			v, err := r.Value(0)
			if err == nil && v < last {
				err = fmt.Errorf("value went backwards: %d after %d", v, last)
			}
			if err != nil {
				readerErr = err
				return
			}
			last = v
		}
	})
	wg.Wait()
	close(stop)
	rwg.Wait()
	require.NoError(t, readerErr)
	require.Equal(t, int64(writers*perWriter/2*(1+3)), c.Get())
	require.Equal(t, int64(0), other.Get(), "no spill into the neighbouring record")
}

// labelFor, keyFor and typeFor derive a counter's metadata from its
// registration id, so a reader can tell a consistent record from a torn
// one (bytes of two incarnations).
func labelFor(reg int64) string {
	n := int(reg*37) % (maxLabelLength + 20) // some labels truncated
	s := fmt.Sprintf("reg=%d|", reg)
	return s + strings.Repeat(string(rune('a'+reg%26)), max(0, n-len(s)))
}

func keyFor(reg int64) []byte {
	k := make([]byte, 8+int(reg%(maxKeyLength-8)))
	binary.LittleEndian.PutUint64(k, uint64(reg))
	for i := 8; i < len(k); i++ {
		k[i] = byte(reg) ^ byte(i)
	}
	return k
}

func typeFor(reg int64) int32 { return int32(reg%1000) + 1 }

func checkRecord(c Record) error {
	reg := c.RegistrationID
	if want := truncateLabel(labelFor(reg)); string(c.Label) != want {
		return fmt.Errorf("id %d reg %d: torn label %q", c.ID, reg, c.Label)
	}
	want := make([]byte, maxKeyLength)
	copy(want, keyFor(reg))
	if !bytes.Equal(c.Key, want) {
		return fmt.Errorf("id %d reg %d: torn key %x", c.ID, reg, c.Key)
	}
	if c.TypeID != typeFor(reg) {
		return fmt.Errorf("id %d reg %d: type %d, want %d", c.ID, reg, c.TypeID, typeFor(reg))
	}
	return nil
}

// hangGuard bounds a wait that only a broken reader makes long.
const hangGuard = 10 * time.Second

// Owners allocate and free as fast as they can, with immediate reuse (the
// worst case: a slot is rewritten while a reader copies it); readers
// iterate and must only ever see consistent records.
func TestReaderWhileOwnerAllocatesAndFrees(t *testing.T) {
	const n = 16
	m, meta, vals := mustManager(t, n, Config{})
	const owners, rounds = 2, 3000
	var done atomic.Bool
	var wg, rwg sync.WaitGroup
	errs := make(chan error, 8)
	var delivered atomic.Int64
	for range 2 {
		r, err := NewReader(meta, vals)
		require.NoError(t, err)
		rwg.Go(func() {
			for !done.Load() {
				err := r.ForEachRecord(func(c Record) bool {
					delivered.Add(1)
					if err := checkRecord(c); err != nil {
						errs <- err
						return false
					}
					return true
				})
				if err != nil {
					errs <- err
				}
				// Per-id reads include reclaimed records (whose key free
				// zeroed): label and type id must still match the
				// registration id, also while the record is being reused.
				var rec Record
				var label [maxLabelLength]byte
				var key [maxKeyLength]byte
				for id := 0; id <= r.MaxCounterID(); id++ {
					s, err := r.snapshot(id, &rec, label[:], key[:], true)
					if err != nil {
						errs <- err
					} else if s == StateReclaimed {
						clear(key[:])
						copy(key[:], keyFor(rec.RegistrationID))
						if err := checkRecord(rec); err != nil {
							errs <- fmt.Errorf("reclaimed: %w", err)
						}
					}
				}
				if len(errs) > 0 {
					return
				}
			}
		})
	}
	for o := range owners {
		wg.Go(func() {
			var live []*Counter
			for i := range rounds {
				if len(live) < n/owners && (i+o)%3 != 0 {
					// Registration ids are assigned under the manager's
					// mutex: allocate with the metadata of the next one.
					c, err := allocateDerived(m)
					if err != nil {
						errs <- err
						return
					}
					live = append(live, c)
				} else if len(live) > 0 {
					k := i % len(live)
					if err := live[k].Close(); err != nil {
						errs <- err
						return
					}
					live = append(live[:k], live[k+1:]...)
				}
			}
			// The rounds can end before a reader has run once (a fast,
			// uninstrumented build): keep this owner's live counters (its
			// pattern of allocations always leaves some) until a reader
			// has delivered one, so that the check below tests readers
			// rather than the scheduler. hangGuard only bounds a broken
			// reader.
			for deadline := time.Now().Add(hangGuard); delivered.Load() == 0 && len(live) > 0 && time.Now().Before(deadline); {
				runtime.Gosched()
			}
			for _, c := range live {
				if err := c.Close(); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	done.Store(true)
	rwg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Positive(t, delivered.Load())
	require.Equal(t, n, m.available(), "everything freed")
}

// allocMu makes "next registration id" and Allocate one step, so that the
// label can be derived from the registration id the manager will assign.
var allocMu sync.Mutex

func allocateDerived(m *Manager) (*Counter, error) {
	allocMu.Lock()
	defer allocMu.Unlock()
	m.mu.Lock()
	reg := m.nextRegID
	m.mu.Unlock()
	c, err := m.Allocate(labelFor(reg), typeFor(reg), keyFor(reg))
	if err == nil && c.RegistrationID() != reg {
		err = fmt.Errorf("registration id %d, want %d", c.RegistrationID(), reg)
	}
	return c, err
}

// Several goroutines allocate and free through one Manager: no two live
// counters share an id, registration ids are unique.
func TestManagerConcurrentAllocateFree(t *testing.T) {
	const n = 8
	m, _, _ := mustManager(t, n, Config{})
	const workers, rounds = 4, 2000
	var regs sync.Map
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				c, err := m.Allocate("w", int32(w), nil)
				if err != nil {
					errs <- err
					return
				}
				if _, dup := regs.LoadOrStore(c.RegistrationID(), true); dup {
					errs <- fmt.Errorf("registration id %d handed out twice", c.RegistrationID())
					return
				}
				// Exclusive ownership: nobody else touches this id's value
				// while we hold it.
				base := int64(w)<<32 | int64(i)
				c.Set(base)
				for range 3 {
					c.AddSingleWriter(1)
				}
				if got := c.Get(); got != base+3 {
					errs <- fmt.Errorf("id %d shared: value %x, want %x", c.ID(), got, base+3)
					return
				}
				if err := c.Close(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, n, m.available())
}
