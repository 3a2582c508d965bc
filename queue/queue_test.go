package queue

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/stretchr/testify/require"
)

func TestCapacityRoundedUp(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			for _, c := range []struct{ requested, want int }{
				{1, 1}, {2, 2}, {3, 4}, {4, 4}, {5, 8}, {1000, 1024}, {1024, 1024}, {1025, 2048},
			} {
				if c.requested < k.minCapacity {
					continue
				}
				p := newPipe[int](t, k, c.requested)
				require.Equal(t, c.want, p.Capacity(), "requested %d", c.requested)
				require.Equal(t, c.want, (p.Capacity() - p.Size()))
				require.Zero(t, p.Size())
				require.True(t, p.isEmpty())
			}
		})
	}
	got, err := roundCapacity(maxCapacity, 1)
	require.NoError(t, err)
	require.Equal(t, maxCapacity, got)
	got, err = roundCapacity(maxCapacity/2+1, 1)
	require.NoError(t, err)
	require.Equal(t, maxCapacity, got)
}

func TestInvalidCapacityIsAnError(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			bad := []int{0, -1, math.MinInt, maxCapacity + 1, math.MaxInt}
			if k.minCapacity == 2 {
				bad = append(bad, 1)
			}
			for _, c := range bad {
				_, err := tryNew[int](k, c)
				require.ErrorIs(t, err, ErrCapacity, "capacity %d", c)
				require.True(t, strings.HasPrefix(err.Error(), "queue: "), err.Error())
				require.Contains(t, err.Error(), fmt.Sprint(c))
			}
		})
	}
}

func TestFillFullAndEmptyInOrder(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			p := newPipe[int](t, k, 8)
			for i := range 8 {
				require.Equal(t, i, p.Size())
				require.Equal(t, 8-i, (p.Capacity() - p.Size()))
				require.True(t, p.Offer(100+i))
				require.False(t, p.isEmpty())
			}
			require.False(t, p.Offer(999), "offer to a full queue")
			require.Equal(t, 8, p.Size())
			require.Zero(t, (p.Capacity() - p.Size()))
			require.EqualValues(t, 8, p.addedCount(), "a refused offer is not counted")
			for i := range 8 {
				v, ok := p.Poll()
				require.True(t, ok)
				require.Equal(t, 100+i, v)
				require.Equal(t, 7-i, p.Size())
			}
			v, ok := p.Poll()
			require.False(t, ok)
			require.Zero(t, v)
			require.True(t, p.isEmpty())
			require.EqualValues(t, 8, p.addedCount())
			require.EqualValues(t, 8, p.removedCount())
			require.True(t, p.Offer(5), "room again after polls")
		})
	}
}

func TestWrapManyTimes(t *testing.T) {
	for _, k := range kinds {
		for _, capacity := range []int{k.minCapacity, 2, 4, 16} {
			t.Run(fmt.Sprintf("%s/%d", k.name, capacity), func(t *testing.T) {
				p := newPipe[int64](t, k, capacity)
				var next, want int64
				for round := range 3000 {
					// Fill by a varying amount, then poll a varying amount,
					// so that head and tail meet every slot at every lap.
					for range round%(capacity+1) + 1 {
						if !p.Offer(next) {
							require.Equal(t, capacity, p.Size())
							break
						}
						next++
					}
					for range (round*7)%(capacity+1) + 1 {
						v, ok := p.Poll()
						if !ok {
							require.Equal(t, next, want)
							break
						}
						require.Equal(t, want, v)
						want++
					}
					require.EqualValues(t, next-want, p.Size())
					require.Equal(t, next, p.addedCount())
					require.Equal(t, want, p.removedCount())
				}
				require.Greater(t, next, int64(50*capacity), "the queue wrapped many times")
			})
		}
	}
}

func TestDrainLimits(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			p := newPipe[int](t, k, 16)
			for i := range 10 {
				require.True(t, p.Offer(i))
			}
			var got []int
			collect := func(v int) { got = append(got, v) }
			require.Zero(t, p.Drain(collect, 0))
			require.Zero(t, p.Drain(collect, -1))
			require.Zero(t, p.Drain(nil, 5), "nil fn removes nothing")
			require.Equal(t, 10, p.Size())
			require.Equal(t, 3, p.Drain(collect, 3))
			require.Equal(t, []int{0, 1, 2}, got)
			require.Equal(t, 7, p.Size())

			dst := make([]int, 0, 16)
			dst = p.DrainTo(dst, 0)
			require.Empty(t, dst)
			dst = p.DrainTo(dst, 4)
			require.Equal(t, []int{3, 4, 5, 6}, dst)
			dst = p.DrainTo(dst[:1], math.MaxInt)
			require.Equal(t, []int{3, 7, 8, 9}, dst, "DrainTo appends")
			require.True(t, p.isEmpty())
			require.Zero(t, p.Drain(collect, math.MaxInt))
			require.Len(t, p.DrainTo(nil, 3), 0)

			// A drain across the wrap point.
			for i := range 16 {
				require.True(t, p.Offer(20+i))
			}
			got = got[:0]
			require.Equal(t, 16, p.Drain(collect, math.MaxInt))
			for i, v := range got {
				require.Equal(t, 20+i, v)
			}
		})
	}
}

// The values a consumer removed are no longer referenced by the queue: the
// slot holds the zero value and the garbage collector can free them.
func TestRemovedSlotsAreZeroed(t *testing.T) {
	type payload [64]byte // large enough to be its own allocation
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			p := newPipe[*payload](t, k, 4)
			var weaks []weak.Pointer[payload]
			// Three laps, each removed through a different path.
			for lap := range 3 {
				for range 4 {
					v := new(payload)
					weaks = append(weaks, weak.Make(v))
					require.True(t, p.Offer(v))
				}
				switch lap {
				case 0:
					for range 4 {
						_, ok := p.Poll()
						require.True(t, ok)
					}
				case 1:
					require.Equal(t, 4, p.Drain(func(*payload) {}, 4))
				default:
					require.Len(t, p.DrainTo(nil, 4), 4)
				}
				for i, v := range slotValues(p) {
					require.Nil(t, v, "slot %d after lap %d", i, lap)
				}
			}
			runtime.GC()
			runtime.GC()
			for i, w := range weaks {
				require.Nil(t, w.Value(), "value %d is still reachable", i)
			}
		})
	}
}

func TestStructValuesKeepEveryField(t *testing.T) {
	type order struct {
		id    int64
		side  byte
		px    float64
		tag   string
		flags [3]uint16
	}
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			p := newPipe[order](t, k, 2)
			for i := range 100 {
				o := order{id: int64(i), side: byte(i % 2), px: float64(i) / 4, tag: fmt.Sprint("o", i), flags: [3]uint16{uint16(i), 1, 2}}
				require.True(t, p.Offer(o))
				got, ok := p.Poll()
				require.True(t, ok)
				require.Equal(t, o, got)
			}
			require.Equal(t, []order{{}, {}}, slotValues(p))
		})
	}
}

// A panic in fn loses the value fn was called with, and only that value.
func TestDrainPanicLosesOnlyThatValue(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			p := newPipe[int](t, k, 8)
			for i := range 5 {
				require.True(t, p.Offer(i))
			}
			var got []int
			func() {
				defer func() { require.Equal(t, "boom", recover()) }()
				p.Drain(func(v int) {
					if v == 2 {
						panic("boom")
					}
					got = append(got, v)
				}, 10)
			}()
			require.Equal(t, []int{0, 1}, got)
			require.Equal(t, 2, p.Size())
			require.Equal(t, 2, p.Drain(func(v int) { got = append(got, v) }, 10))
			require.Equal(t, []int{0, 1, 3, 4}, got)
			require.Equal(t, 8, (p.Capacity() - p.Size()))
		})
	}
}

// fn runs on the consumer's goroutine and may poll the same queue: the
// drain continues after what fn took, nothing is delivered twice.
func TestDrainReentrantPoll(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			p := newPipe[int](t, k, 8)
			for i := range 8 {
				require.True(t, p.Offer(i))
			}
			var got []int
			n := p.Drain(func(v int) {
				got = append(got, v)
				if v%3 == 0 {
					w, ok := p.Poll()
					require.True(t, ok)
					got = append(got, -w)
				}
			}, math.MaxInt)
			require.Equal(t, []int{0, -1, 2, 3, -4, 5, 6, -7}, got)
			require.Equal(t, 5, n, "Drain counts what it removed itself")
			require.True(t, p.isEmpty())
		})
	}
}

// A many-producer offer claims tail, then publishes: in between, Poll
// reports nothing while Size and isEmpty count the claim (as in Agrona).
func TestPollDuringHalfDoneOffer(t *testing.T) {
	m2o, err := NewManyToOne[int](4)
	require.NoError(t, err)
	m2m, err := NewManyToMany[int](4)
	require.NoError(t, err)
	for _, c := range []struct {
		name    string
		p       testPipe[int]
		tail    *atomic.Int64
		publish func(pos int64, v int)
	}{
		{"ManyToOne", m2o, &m2o.tail, func(pos int64, v int) {
			s := &m2o.buf[pos&m2o.mask]
			s.v = v
			s.seq.Store(pos + 1)
		}},
		{"ManyToMany", m2m, &m2m.tail, func(pos int64, v int) {
			s := &m2m.buf[pos&m2m.mask]
			s.v = v
			s.seq.Store(pos + 1)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.True(t, c.p.Offer(1))
			require.Equal(t, 1, c.p.Drain(func(int) {}, 1))
			pos := c.tail.Add(1) - 1 // a producer's claim, not yet published
			require.True(t, c.p.Offer(2), "producers claim past the half-done offer")
			require.Equal(t, 2, c.p.Size())
			require.False(t, c.p.isEmpty())
			_, ok := c.p.Poll()
			require.False(t, ok, "the head position is claimed, not published")
			require.Zero(t, c.p.Drain(func(int) { t.Fatal("delivered") }, 10))
			require.Empty(t, c.p.DrainTo(nil, 10))
			c.publish(pos, 7)
			require.Equal(t, []int{7, 2}, c.p.DrainTo(nil, 10), "claim order")
		})
	}
}

func TestSizeIsClamped(t *testing.T) {
	var head, tail atomic.Int64
	head.Store(10)
	tail.Store(5)
	require.Zero(t, size(&head, &tail, 8), "tail behind head reads as empty")
	tail.Store(30)
	require.Equal(t, 8, size(&head, &tail, 8), "at most the capacity")
	tail.Store(13)
	require.Equal(t, 3, size(&head, &tail, 8))
}

func TestErrCapacityIsASentinel(t *testing.T) {
	_, err := NewOneToOne[int](0)
	require.True(t, errors.Is(err, ErrCapacity))
	require.Equal(t, "queue: invalid capacity: 0 (want 1..1073741824)", err.Error())
	_, err = NewManyToMany[int](1)
	require.Equal(t, "queue: invalid capacity: 1 (want 2..1073741824)", err.Error())
}

// A capacity within maxCapacity whose slot array cannot exist in the
// address space (large elements, or 8-byte ones on a 32-bit platform) is
// an invalid argument: ErrCapacity, not make's panic (duty reports invalid
// arguments as errors and never panics on them).
func TestSlotArrayBeyondAddressSpaceIsAnError(t *testing.T) {
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { _, err = tryNew[[1 << 20]byte](k, maxCapacity) })
			require.ErrorIs(t, err, ErrCapacity)
			require.Contains(t, err.Error(), fmt.Sprint(maxCapacity))
		})
	}
}
