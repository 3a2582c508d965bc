package counters

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/countertype"
)

func TestAllocateDenseIDsAndRegistrationIDs(t *testing.T) {
	m, _, _ := mustManager(t, 4, Config{})
	require.Equal(t, 3, m.maxID)
	require.Equal(t, 4, m.available())
	for i := range 4 {
		c := allocate(t, m, "c", 1, nil)
		require.Equal(t, i, c.ID())
		require.Equal(t, int64(i+1), c.RegistrationID())
		require.Equal(t, int64(0), c.Get())
	}
	require.Equal(t, 0, m.available())
	_, err := m.Allocate("one too many", 1, nil)
	require.ErrorIs(t, err, ErrFull)
	require.ErrorContains(t, err, "maxCounterId=3")
}

func TestFreeReusesOnlyAfterDeadline(t *testing.T) {
	clock := newClock(1_000)
	m, _, _ := mustManager(t, 2, Config{FreeToReuseTimeout: 500 * time.Millisecond, Clock: clock})
	r := m.Reader()
	a := allocate(t, m, "a", 1, nil)
	b := allocate(t, m, "b", 1, nil)
	a.Set(42)
	a.setOwnerID(9)
	a.setReferenceID(8)

	require.NoError(t, a.Close())
	require.True(t, a.isClosed())
	s, err := r.stateOf(0)
	require.NoError(t, err)
	require.Equal(t, StateReclaimed, s)
	d, err := r.deadlineOf(0)
	require.NoError(t, err)
	require.Equal(t, int64(1_500), d)
	v, err := r.Value(0)
	require.NoError(t, err)
	require.Equal(t, int64(42), v, "the value stays until reuse")
	require.Equal(t, 0, m.available())

	clock.Set(1_499)
	_, err = m.Allocate("too early", 1, nil)
	require.ErrorIs(t, err, ErrFull, "1 ms before the deadline")

	clock.Set(1_500)
	require.Equal(t, 1, m.available())
	c := allocate(t, m, "c", 2, nil)
	require.Equal(t, 0, c.ID(), "reused at the deadline")
	require.Equal(t, int64(3), c.RegistrationID(), "registration ids keep increasing across reuse")
	require.Equal(t, int64(0), c.Get(), "value reset on reuse")
	require.Equal(t, int64(0), c.ownerID())
	require.Equal(t, int64(0), c.referenceID())
	require.Equal(t, "c", c.label())
	require.Equal(t, int32(2), c.typeID())
	require.Equal(t, int64(2), b.RegistrationID())
	require.Equal(t, 1, b.ID())
}

func TestFreeListReusesEarliestDeadlineFirst(t *testing.T) {
	clock := newClock(0)
	m, _, _ := mustManager(t, 3, Config{FreeToReuseTimeout: 10 * time.Millisecond, Clock: clock})
	cs := []*Counter{allocate(t, m, "0", 1, nil), allocate(t, m, "1", 1, nil), allocate(t, m, "2", 1, nil)}
	require.NoError(t, cs[2].Close()) // deadline 10
	clock.Set(5)
	require.NoError(t, cs[0].Close()) // deadline 15
	clock.Set(12)
	c := allocate(t, m, "x", 1, nil)
	require.Equal(t, 2, c.ID())
	_, err := m.Allocate("y", 1, nil)
	require.ErrorIs(t, err, ErrFull, "id 0 not yet")
	clock.Set(15)
	require.Equal(t, 0, allocate(t, m, "y", 1, nil).ID())
}

func TestZeroTimeoutReusesAtOnce(t *testing.T) {
	m, _, _ := mustManager(t, 1, Config{})
	a := allocate(t, m, "a", 1, nil)
	require.NoError(t, a.Close())
	b := allocate(t, m, "b", 1, nil)
	require.Equal(t, 0, b.ID())
	require.Equal(t, int64(2), b.RegistrationID())
}

func TestCloseOnceAndStaleClose(t *testing.T) {
	m, _, _ := mustManager(t, 2, Config{})
	a := allocate(t, m, "a", 1, nil)
	require.NoError(t, a.Close())
	require.NoError(t, a.Close(), "second Close does nothing")

	// Free by id, the id is reused, then the stale Counter is closed: the
	// new incarnation must survive.
	b := allocate(t, m, "b", 1, nil)
	require.NoError(t, m.freeID(b.ID()))
	c := allocate(t, m, "c", 1, nil)
	require.Equal(t, b.ID(), c.ID())
	require.ErrorIs(t, b.Close(), ErrCorrupt)
	s, err := m.Reader().stateOf(c.ID())
	require.NoError(t, err)
	require.Equal(t, StateAllocated, s)

	require.ErrorIs(t, m.freeID(1), ErrCorrupt, "never allocated")
	require.NoError(t, m.freeID(c.ID()))
	require.ErrorIs(t, m.freeID(c.ID()), ErrCorrupt, "double free")
	require.ErrorIs(t, m.freeID(-1), ErrArgument)
	require.ErrorIs(t, m.freeID(2), ErrArgument)
}

func TestKeyAndLabelLimits(t *testing.T) {
	m, _, _ := mustManager(t, 8, Config{})
	r := m.Reader()

	_, err := m.Allocate("k", 1, make([]byte, maxKeyLength+1))
	require.ErrorIs(t, err, ErrArgument)
	require.Equal(t, 8, m.available(), "a rejected allocation takes no id")

	full := bytes.Repeat([]byte{0xAB}, maxKeyLength)
	c := allocate(t, m, "k", 1, full)
	k, err := r.keyOf(c.ID())
	require.NoError(t, err)
	require.Equal(t, full, k)

	long := strings.Repeat("x", 500)
	c = allocate(t, m, long, 1, nil)
	require.Equal(t, long[:maxLabelLength], c.label())

	// 379 ASCII bytes then a 3-byte rune: cutting at 380 would split it.
	multi := strings.Repeat("a", 379) + "€" + "tail"
	c = allocate(t, m, multi, 1, nil)
	require.Equal(t, strings.Repeat("a", 379), c.label())
	require.True(t, utf8.ValidString(c.label()))

	// Runes of 1..4 bytes at every alignment: always valid, never longer
	// than the limit, and a prefix of the input.
	rng := rand.New(rand.NewPCG(1, 2))
	runes := []string{"a", "é", "€", "𝄞"}
	for range 200 {
		var sb strings.Builder
		for sb.Len() < 400 {
			sb.WriteString(runes[rng.IntN(len(runes))])
		}
		in := sb.String()
		got := truncateLabel(in)
		require.LessOrEqual(t, len(got), maxLabelLength)
		require.Greater(t, len(got), maxLabelLength-4)
		require.True(t, utf8.ValidString(got))
		require.True(t, strings.HasPrefix(in, got))
	}

	c = allocate(t, m, "", 1, nil)
	require.Equal(t, "", c.label())
}

func TestNewManagerRefusesLiveRegions(t *testing.T) {
	m, meta, vals := mustManager(t, 4, Config{})
	allocate(t, m, "live", 1, nil)
	_, err := NewManager(meta, vals, Config{})
	require.ErrorIs(t, err, ErrInUse)

	_, err = NewManager(meta, vals, Config{FreeToReuseTimeout: -time.Millisecond})
	require.ErrorIs(t, err, ErrArgument)
}

func TestConstructorsNeverWrite(t *testing.T) {
	meta, vals := newRegions(t, 4)
	m, err := NewManager(meta, vals, Config{})
	require.NoError(t, err)
	a := allocate(t, m, "a", 1, []byte("k"))
	allocate(t, m, "b", 2, nil)
	a.Set(5)
	require.NoError(t, a.Close())
	metaBefore, valsBefore := bytes.Clone(meta), bytes.Clone(vals)

	_, _, err = Recover(meta, vals, Config{})
	require.NoError(t, err)
	_, err = NewReader(meta, vals)
	require.NoError(t, err)
	_, err = NewManager(meta, vals, Config{})
	require.ErrorIs(t, err, ErrInUse)
	require.Equal(t, metaBefore, meta)
	require.Equal(t, valsBefore, vals)
}

func TestRecoverRebuildsState(t *testing.T) {
	clock := newClock(10_000)
	cfg := Config{FreeToReuseTimeout: time.Second, Clock: clock}
	old, meta, vals := mustManager(t, 6, cfg)
	var cs []*Counter
	for i := range 5 {
		cs = append(cs, allocate(t, old, "old", int32(i), nil))
	}
	cs[3].Set(33)
	require.NoError(t, cs[1].Close()) // deadline 11_000
	clock.Set(10_500)
	require.NoError(t, cs[4].Close()) // deadline 11_500
	// The old owner goes away; a new one recovers.

	m, live, err := Recover(meta, vals, cfg)
	require.NoError(t, err)
	require.Equal(t, 1, m.available(), "id 5 never used; 1 and 4 not past their deadlines")
	require.Len(t, live, 3, "the previous owner's live counters 0, 2, 3")

	c := allocate(t, m, "new", 1, nil)
	require.Equal(t, 5, c.ID(), "no collision with live ids 0, 2, 3")
	require.Equal(t, int64(6), c.RegistrationID(), "registration ids continue after the highest found")
	_, err = m.Allocate("full", 1, nil)
	require.ErrorIs(t, err, ErrFull)

	clock.Set(11_000)
	require.Equal(t, 1, allocate(t, m, "reuse", 1, nil).ID())
	clock.Set(11_500)
	require.Equal(t, 4, allocate(t, m, "reuse", 1, nil).ID())

	// The previous owner's live counters come back, to keep or free.
	ad := live[2]
	require.Equal(t, 3, ad.ID())
	require.Equal(t, int64(33), ad.Get())
	require.Equal(t, int64(4), ad.RegistrationID())
	require.Equal(t, "old", ad.label())
	require.NoError(t, ad.Close())
	require.NoError(t, ad.Close(), "second Close does nothing")
	require.Equal(t, []int{0, 2}, []int{live[0].ID(), live[1].ID()})
	require.NoError(t, live[0].Close())
}

func TestRecoverFreeInterruptedBeforeDeadline(t *testing.T) {
	clock := newClock(100)
	old, meta, vals := mustManager(t, 2, Config{})
	allocate(t, old, "a", 1, nil)
	put32(meta, 0, StateReclaimed) // state stored, deadline still NOT_FREE_TO_REUSE
	m, _, err := Recover(meta, vals, Config{FreeToReuseTimeout: 50 * time.Millisecond, Clock: clock})
	require.NoError(t, err)
	clock.Set(149)
	require.Equal(t, 1, allocate(t, m, "b", 1, nil).ID())
	_, err = m.Allocate("c", 1, nil)
	require.ErrorIs(t, err, ErrFull)
	clock.Set(150)
	require.Equal(t, 0, allocate(t, m, "c", 1, nil).ID(), "the delay started at recovery")
}

func TestRecoverCorrupt(t *testing.T) {
	m, meta, vals := mustManager(t, 3, Config{})
	allocate(t, m, "a", 1, nil)
	allocate(t, m, "b", 1, nil)
	put32(meta, 512, 7)
	_, _, err := Recover(meta, vals, Config{})
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, "counter 1: state 7")

	put32(meta, 512, StateAllocated)
	put64(vals, 128+8, 1<<63-1)
	_, _, err = Recover(meta, vals, Config{})
	require.ErrorIs(t, err, ErrCorrupt)
}

func TestCounterOps(t *testing.T) {
	m, _, _ := mustManager(t, 1, Config{})
	c := allocate(t, m, "ops", countertype.DutyCycles, nil)
	require.Equal(t, int64(1), c.Add(1))
	require.Equal(t, int64(11), c.Add(10))
	require.Equal(t, int64(12), c.AddSingleWriter(1))
	require.Equal(t, int64(7), c.AddSingleWriter(-5))
	c.Set(100)
	require.Equal(t, int64(100), c.Get())
	require.False(t, c.ProposeMax(100))
	require.False(t, c.ProposeMax(99))
	require.True(t, c.ProposeMax(101))
	require.Equal(t, int64(101), c.Get())
	c.Word().Store(-3)
	require.Equal(t, int64(-3), c.Get())
	v, err := m.Reader().Value(c.ID())
	require.NoError(t, err)
	require.Equal(t, int64(-3), v, "the word is the shared value")
	require.Equal(t, countertype.DutyCycles, c.typeID())
}

func TestDefaultClockDeadline(t *testing.T) {
	m, _, _ := mustManager(t, 1, Config{FreeToReuseTimeout: time.Hour})
	c := allocate(t, m, "a", 1, nil)
	before := time.Now().UnixMilli()
	require.NoError(t, c.Close())
	d, err := m.Reader().deadlineOf(0)
	require.NoError(t, err)
	require.GreaterOrEqual(t, d, before+time.Hour.Milliseconds())
	require.LessOrEqual(t, d, time.Now().UnixMilli()+time.Hour.Milliseconds())
	_, err = m.Allocate("b", 1, nil)
	require.True(t, errors.Is(err, ErrFull))
}

func TestDeadlineSaturates(t *testing.T) {
	clock := newClock(notFreeToReuse - 10)
	m, _, _ := mustManager(t, 1, Config{FreeToReuseTimeout: time.Second, Clock: clock})
	c := allocate(t, m, "a", 1, nil)
	require.NoError(t, c.Close())
	d, err := m.Reader().deadlineOf(0)
	require.NoError(t, err)
	require.Equal(t, notFreeToReuse-1, d, "no overflow into a negative deadline")
}
