package timer

import (
	"errors"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// expiry is one handler call seen by a recorder.
type expiry struct{ now, id int64 }

// recorder is a Handler that records what expired; it refuses (returns
// false) the ids in refuse once each.
type recorder struct {
	got    []expiry
	refuse map[int64]bool
}

func (r *recorder) handle(now, id int64) bool {
	if r.refuse[id] {
		delete(r.refuse, id)
		return false
	}
	r.got = append(r.got, expiry{now, id})
	return true
}

func (r *recorder) ids() []int64 {
	out := make([]int64, len(r.got))
	for i, e := range r.got {
		out[i] = e.id
	}
	return out
}

// place returns the tick on the wheel and the slot that id names (the
// layout of timerID), whatever its generation.
func place(w *Wheel, id int64) [2]int64 {
	return [2]int64{id >> w.slotBits & w.mask, id & (1<<w.slotBits - 1)}
}

func newWheel(t testing.TB, cfg Config) *Wheel {
	t.Helper()
	w, err := NewWheel(cfg)
	require.NoError(t, err)
	return w
}

// small is a wheel of 8 ticks of 16 units from 1000, 4 slots per tick.
func small(t testing.TB) *Wheel {
	return newWheel(t, Config{Start: 1000, Resolution: 16, TicksPerWheel: 8, TickAllocation: 4})
}

func schedule(t testing.TB, w *Wheel, deadline int64) int64 {
	t.Helper()
	id, err := w.Schedule(deadline)
	require.NoError(t, err)
	return id
}

func TestNewWheelValidates(t *testing.T) {
	ok := Config{Resolution: 1024, TicksPerWheel: 64}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want error
	}{
		{"resolution 0", func(c *Config) { c.Resolution = 0 }, ErrArgument},
		{"resolution 3", func(c *Config) { c.Resolution = 3 }, ErrArgument},
		{"resolution negative", func(c *Config) { c.Resolution = -1024 }, ErrArgument},
		{"resolution MinInt64", func(c *Config) { c.Resolution = math.MinInt64 }, ErrArgument},
		{"ticks 0", func(c *Config) { c.TicksPerWheel = 0 }, ErrArgument},
		{"ticks 12", func(c *Config) { c.TicksPerWheel = 12 }, ErrArgument},
		{"ticks negative", func(c *Config) { c.TicksPerWheel = -64 }, ErrArgument},
		{"ticks 2^31", func(c *Config) { c.TicksPerWheel = 1 << 31 }, ErrArgument},
		{"allocation 6", func(c *Config) { c.TickAllocation = 6 }, ErrArgument},
		{"allocation negative", func(c *Config) { c.TickAllocation = -16 }, ErrArgument},
		{"allocation above max", func(c *Config) { c.TickAllocation, c.MaxTickAllocation = 32, 16 }, ErrArgument},
		{"max allocation 24", func(c *Config) { c.MaxTickAllocation = 24 }, ErrArgument},
		{"max allocation 2^31", func(c *Config) { c.MaxTickAllocation = 1 << 31 }, ErrArgument},
		{"too much memory", func(c *Config) { c.TicksPerWheel, c.TickAllocation = 1<<30, 1<<30 }, ErrArgument},
		{"ticks x max allocation above 2^39", func(c *Config) { c.TicksPerWheel, c.MaxTickAllocation = 1<<10, 1<<30 }, ErrArgument},
		{"max ticks, max allocation above 2^9", func(c *Config) { c.TicksPerWheel, c.MaxTickAllocation = 1<<30, 1<<10 }, ErrArgument},
		{"initial slots above maxInitialSlots", func(c *Config) { c.TicksPerWheel, c.TickAllocation = 1<<30, 16 }, ErrArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := ok
			tc.edit(&cfg)
			w, err := NewWheel(cfg)
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, w)
			require.Regexp(t, "^timer: ", err.Error())
		})
	}
	w := newWheel(t, Config{Start: -5, Resolution: 1, TicksPerWheel: 1})
	require.Equal(t, defaultTickAllocation, w.Capacity())
	require.EqualValues(t, 1, w.resolution())
	require.Equal(t, 1, w.ticksPerWheel())
	require.EqualValues(t, -5, w.startTime())
	require.EqualValues(t, -4, w.CurrentTickTime())
	require.Zero(t, w.TimerCount())
}

func TestScheduleIDsAreGenerationTickAndSlot(t *testing.T) {
	w := small(t) // 8 ticks (3 bits), slots up to 2^30 (30 bits)
	require.Equal(t, 30, w.generationBits())
	// gen<<33 | tick<<30 | slot; a slot's first timer is generation 1.
	// Tick 2 is [1032, 1048): 1040 lands in spoke 2, slots 0 and 1.
	require.Equal(t, int64(1)<<33|2<<30, schedule(t, w, 1040)) // slot 0
	require.Equal(t, int64(1)<<33|2<<30|1, schedule(t, w, 1047))
	// Tick 10 wraps onto spoke 10 & 7 = 2, slot 2.
	require.Equal(t, int64(1)<<33|2<<30|2, schedule(t, w, 1000+10*16))
	// Before the start and in tick 0: spoke 0.
	require.Equal(t, int64(1)<<33, schedule(t, w, 5))
	require.Equal(t, int64(1)<<33|1, schedule(t, w, math.MinInt64))
	require.Equal(t, 5, w.TimerCount())
	d, ok := w.Deadline(int64(1)<<33 | 2<<30 | 1)
	require.True(t, ok)
	require.EqualValues(t, 1047, d)
	// The next timer of a slot is its next generation.
	require.True(t, w.Cancel(int64(1)<<33|2<<30|1))
	require.Equal(t, int64(2)<<33|2<<30|1, schedule(t, w, 1047))
}

// TestIDLayout: the generation takes what the tick and slot fields leave
// of 63 bits, at most 32 and at least minGenerationBits; ids stay
// non-negative, and bits above the generation make an id foreign.
func TestIDLayout(t *testing.T) {
	for _, tc := range []struct {
		ticks, maxAlloc, gen int
	}{
		{1, 0, 32},       // 0 + 30 bits: 33 left, capped at 32
		{8, 0, 30},       // 3 + 30
		{1 << 10, 0, 24}, // 10 + 29: the default maximum is 2^39 / 2^10
		{1 << 10, 1 << 29, 24},
		{1 << 10, 1 << 21, 32}, // 10 + 21
		{1 << 10, 1 << 16, 32}, // 10 + 16: 5 bits unused
		{1 << 16, 0, 24},       // 16 + 23
	} {
		w := newWheel(t, Config{Resolution: 1, TicksPerWheel: tc.ticks, TickAllocation: 1, MaxTickAllocation: tc.maxAlloc})
		require.Equal(t, tc.gen, w.generationBits(), "%d ticks, max %d", tc.ticks, tc.maxAlloc)
		if tc.maxAlloc == 0 {
			require.Equal(t, min(maxTickSlots, 1<<39/tc.ticks), w.maxAlloc)
		}
		// The last tick, the last generation: the largest id is
		// non-negative, and the generation then wraps to 0.
		last := int64(tc.ticks - 1)
		w.spokes[last].gens[0] = w.genMask - 1
		id := schedule(t, w, last)
		require.GreaterOrEqual(t, id, int64(0))
		require.Equal(t, uint64(w.genMask), uint64(id)>>w.genShift)
		require.Equal(t, [2]int64{last, 0}, place(w, id))
		require.False(t, w.Cancel(id|1<<(w.genShift+uint(tc.gen))), "a bit above the generation")
		require.True(t, w.Cancel(id))
		id = schedule(t, w, last)
		require.Equal(t, last<<w.slotBits, id, "generation 0")
		require.True(t, w.Cancel(id))
	}
}

func TestPollExpiresAtDeadlineNeverBefore(t *testing.T) {
	w := small(t)
	id := schedule(t, w, 1037) // tick 2
	var r recorder
	for now := int64(1000); now < 1037; now++ {
		require.Zero(t, w.Poll(now, r.handle, 10), "now %d", now)
	}
	require.Equal(t, 1, w.TimerCount())
	require.Equal(t, 1, w.Poll(1037, r.handle, 10))
	require.Equal(t, []expiry{{1037, id}}, r.got)
	require.Zero(t, w.TimerCount())
	_, ok := w.Deadline(id)
	require.False(t, ok)
	require.False(t, w.Cancel(id), "an expired timer cannot be cancelled")
}

func TestPollAdvancesOneTickPerPoll(t *testing.T) {
	w := small(t)
	require.EqualValues(t, 1016, w.CurrentTickTime())
	var r recorder
	w.Poll(1015, r.handle, 10)
	require.EqualValues(t, 1016, w.CurrentTickTime(), "tick 0 has not ended")
	w.Poll(1016, r.handle, 10)
	require.EqualValues(t, 1032, w.CurrentTickTime())
	// Far behind: one tick per poll, with or without timers.
	w.Poll(5000, r.handle, 10)
	require.EqualValues(t, 1048, w.CurrentTickTime())
	schedule(t, w, 6000)
	w.Poll(5000, r.handle, 10)
	require.EqualValues(t, 1064, w.CurrentTickTime())
}

func TestPastDeadlineExpiresOnNextPoll(t *testing.T) {
	w := small(t)
	var r recorder
	for now := int64(1000); now <= 1100; now += 4 {
		w.Poll(now, r.handle, 10)
	}
	tick := w.CurrentTickTime()
	id := schedule(t, w, 1001) // long gone: goes to the current tick
	require.Equal(t, (tick-1000)/16-1&7, place(w, id)[0])
	require.Equal(t, 1, w.Poll(1101, r.handle, 10))
	require.Equal(t, []int64{id}, r.ids())
}

// Within a tick, timers expire in slot order, not deadline order (as in
// Agrona): the wheel's resolution is the tick.
func TestExpiryOrderWithinTickIsSlotOrder(t *testing.T) {
	w := small(t)
	a := schedule(t, w, 1045)
	b := schedule(t, w, 1033)
	c := schedule(t, w, 1040)
	var r recorder
	w.Poll(1040, r.handle, 10) // tick 0
	w.Poll(1040, r.handle, 10) // tick 1
	require.Equal(t, 2, w.Poll(1040, r.handle, 10), "tick 2, 1045 not yet")
	require.Equal(t, []int64{b, c}, r.ids())
	require.Equal(t, 1, w.Poll(1047, r.handle, 10))
	require.Equal(t, []int64{b, c, a}, r.ids())
}

func TestFarFutureDeadlineStaysAcrossRotations(t *testing.T) {
	w := small(t) // a rotation is 8 x 16 = 128
	deadline := int64(1000 + 3*128 + 5*16 + 7)
	id := schedule(t, w, deadline)
	require.EqualValues(t, 5, place(w, id)[0])
	var r recorder
	now := int64(1000)
	for ; now < deadline; now++ {
		require.Zero(t, w.Poll(now, r.handle, 10), "now %d", now)
	}
	require.Equal(t, 1, w.Poll(now, r.handle, 10))
	require.Equal(t, []expiry{{deadline, id}}, r.got)
}

func TestHandlerFalseKeepsTimerAndStopsPoll(t *testing.T) {
	w := small(t)
	a := schedule(t, w, 1001)
	b := schedule(t, w, 1002)
	r := recorder{refuse: map[int64]bool{b: true}}
	require.Equal(t, 1, w.Poll(1020, r.handle, 10), "a expired, b refused")
	require.Equal(t, []int64{a}, r.ids())
	require.Equal(t, 1, w.TimerCount())
	d, ok := w.Deadline(b)
	require.True(t, ok)
	require.EqualValues(t, 1002, d)
	require.EqualValues(t, 1016, w.CurrentTickTime(), "a refusal keeps the tick")
	c := schedule(t, w, 1003) // takes a's slot, behind the poll index
	require.Equal(t, place(w, a), place(w, c))
	require.NotEqual(t, a, c, "a new generation")
	require.Equal(t, 2, w.Poll(1020, r.handle, 10), "b first, then c after the wrap")
	require.Equal(t, []int64{a, b, c}, r.ids())
	require.EqualValues(t, 1032, w.CurrentTickTime())
}

func TestExpiryLimit(t *testing.T) {
	w := small(t)
	for range 5 {
		schedule(t, w, 1010)
	}
	var r recorder
	require.Zero(t, w.Poll(2000, r.handle, 0))
	require.EqualValues(t, 1016, w.CurrentTickTime(), "limit 0 does nothing")
	require.Equal(t, 2, w.Poll(2000, r.handle, 2))
	require.EqualValues(t, 1016, w.CurrentTickTime(), "limit reached: tick kept")
	require.Equal(t, 2, w.Poll(2000, r.handle, 2))
	require.EqualValues(t, 1016, w.CurrentTickTime())
	require.Equal(t, 1, w.Poll(2000, r.handle, 2))
	require.EqualValues(t, 1032, w.CurrentTickTime())
	require.Len(t, r.got, 5)
	seen := map[int64]bool{}
	for _, id := range r.ids() {
		require.False(t, seen[id], "expired twice: %x", id)
		seen[id] = true
	}
}

func TestFullTickGrowsAlone(t *testing.T) {
	w := newWheel(t, Config{Start: 0, Resolution: 8, TicksPerWheel: 4, TickAllocation: 2, MaxTickAllocation: 8})
	require.Equal(t, 8, w.Capacity())
	var ids []int64
	for i := range 8 {
		ids = append(ids, schedule(t, w, int64(8+i%8))) // tick 1
	}
	for i, id := range ids {
		require.Equal(t, [2]int64{1, int64(i)}, place(w, id))
	}
	require.Equal(t, 2+2+8+2, w.Capacity(), "only tick 1 grew: 2 -> 4 -> 8")
	_, err := w.Schedule(9)
	require.ErrorIs(t, err, ErrCapacity)
	require.Equal(t, 8, w.TimerCount())
	id := schedule(t, w, 17) // tick 2 still has room
	require.Equal(t, [2]int64{2, 0}, place(w, id))
	// Free slots are reused before growing, under a new id.
	require.True(t, w.Cancel(ids[3]))
	again := schedule(t, w, 9)
	require.Equal(t, place(w, ids[3]), place(w, again))
	require.NotEqual(t, ids[3], again)
	require.False(t, w.Cancel(ids[3]))
	var r recorder
	n := 0
	for now := int64(0); now < 40; now++ {
		n += w.Poll(now, r.handle, 100)
	}
	require.Equal(t, 9, n)
	require.Zero(t, w.TimerCount())
}

func TestCancel(t *testing.T) {
	w := small(t)
	a := schedule(t, w, 1040)
	b := schedule(t, w, 1041)
	require.True(t, w.Cancel(a))
	require.False(t, w.Cancel(a), "twice")
	require.Equal(t, 1, w.TimerCount())
	_, ok := w.Deadline(a)
	require.False(t, ok)
	var r recorder
	for now := int64(1000); now < 1100; now++ {
		w.Poll(now, r.handle, 10)
	}
	require.Equal(t, []int64{b}, r.ids(), "a cancelled timer never expires")
	// After a cancel the next timer of that tick takes the slot under a
	// new id: the stale id does not cancel it.
	c := schedule(t, w, 1040+128)
	require.True(t, w.Cancel(c))
	d := schedule(t, w, 1041+128)
	require.Equal(t, place(w, c), place(w, d))
	require.NotEqual(t, c, d)
	require.False(t, w.Cancel(c))
	require.True(t, w.Cancel(d))
	require.Zero(t, w.TimerCount())
}

// TestStaleIDIsRejectedAfterSlotReuse: once a timer expired or was
// cancelled, its id is stale even after a later Schedule reuses its slot:
// Cancel of the stale id is false and cancels nothing, Deadline reports
// nothing, and the new timer, under its own id, still expires.
func TestStaleIDIsRejectedAfterSlotReuse(t *testing.T) {
	for _, end := range []string{"expired", "cancelled"} {
		t.Run(end, func(t *testing.T) {
			w := newWheel(t, Config{Start: 0, Resolution: 16, TicksPerWheel: 1, TickAllocation: 1, MaxTickAllocation: 1})
			var r recorder
			old := schedule(t, w, 5)
			if end == "expired" {
				require.Equal(t, 1, w.Poll(5, r.handle, 10))
				require.Equal(t, []int64{old}, r.ids())
			} else {
				require.True(t, w.Cancel(old))
			}
			// One tick of one slot: the new timer must reuse old's slot.
			fresh := schedule(t, w, 40)
			require.False(t, w.Cancel(old), "the stale id cancels nothing")
			require.NotEqual(t, old, fresh, "a reused slot gets a new id")
			d, ok := w.Deadline(old)
			require.False(t, ok)
			require.Equal(t, nullDeadline, d)
			require.Equal(t, 1, w.TimerCount())
			d, ok = w.Deadline(fresh)
			require.True(t, ok)
			require.EqualValues(t, 40, d)
			r.got = nil
			for now := int64(0); now <= 40; now += 8 {
				w.Poll(now, r.handle, 10)
			}
			require.Equal(t, []expiry{{40, fresh}}, r.got, "the new timer still expires")
			require.False(t, w.Cancel(fresh))
			require.False(t, w.Cancel(old))
		})
	}
}

func TestCancelAndDeadlineRejectForeignIDs(t *testing.T) {
	w := small(t) // ids: gen<<33 | tick<<30 | slot
	id := schedule(t, w, 1040)
	require.Equal(t, int64(1)<<33|2<<30, id)
	for _, bad := range []int64{
		-1, math.MinInt64, math.MaxInt64, -id, id | math.MinInt64,
		2 << 30,               // generation 0 of the slot: not yet taken
		2<<33 | 2<<30,         // the next generation
		1<<33 | 3<<30,         // another tick
		1<<33 | 2<<30 | 1,     // a free slot
		1<<33 | 2<<30 | 4,     // a slot the tick does not have
		1<<33 | 2<<30 | 1<<29, // far beyond the tick's slots
		id | 1<<62,            // the top generation bit
		8 << 32,               // generation 4
	} {
		require.False(t, w.Cancel(bad), "%x", bad)
		d, ok := w.Deadline(bad)
		require.False(t, ok)
		require.Equal(t, nullDeadline, d)
	}
	require.Equal(t, 1, w.TimerCount())
	require.True(t, w.Cancel(id))
}

func TestScheduleRejectsNullDeadline(t *testing.T) {
	w := small(t)
	_, err := w.Schedule(nullDeadline)
	require.ErrorIs(t, err, ErrArgument)
	require.Zero(t, w.TimerCount())
	id := schedule(t, w, math.MaxInt64-1)
	var r recorder
	require.Zero(t, w.Poll(math.MaxInt64-2, r.handle, 10))
	// Polling at the end of time expires real timers only: no empty slot
	// looks due (Agrona's now >= NULL_DEADLINE would).
	for range 20 {
		w.Poll(math.MaxInt64, r.handle, 100)
	}
	require.Equal(t, []int64{id}, r.ids())
	require.Zero(t, w.TimerCount())
}

func TestExtremeStartAndDeadlines(t *testing.T) {
	for _, start := range []int64{math.MinInt64, -1, 0, math.MaxInt64 - 1, math.MaxInt64} {
		w := newWheel(t, Config{Start: start, Resolution: 1 << 20, TicksPerWheel: 4, TickAllocation: 1})
		n := 0
		for _, d := range []int64{math.MinInt64, -1, 0, 1, start, math.MaxInt64 - 1} {
			if d != nullDeadline {
				schedule(t, w, d)
				n++
			}
		}
		var r recorder
		for range 10 {
			w.Poll(math.MaxInt64, r.handle, 100)
		}
		require.Len(t, r.got, n, "start %d", start)
		require.NoError(t, w.SetCurrentTickTime(math.MaxInt64))
		w.Poll(math.MaxInt64, r.handle, 100)
		require.GreaterOrEqual(t, w.CurrentTickTime(), w.startTime())
		require.NoError(t, w.ResetStartTime(math.MinInt64))
		require.Equal(t, int64(math.MinInt64+1<<20), w.CurrentTickTime())
	}
}

func TestResetStartTimeAndSetCurrentTickTime(t *testing.T) {
	w := small(t)
	require.NoError(t, w.SetCurrentTickTime(1100))
	require.EqualValues(t, 1112, w.CurrentTickTime(), "tick 6 is [1096, 1112)")
	require.NoError(t, w.SetCurrentTickTime(900))
	require.EqualValues(t, 1112, w.CurrentTickTime(), "never back")
	id := schedule(t, w, 2000)
	require.ErrorIs(t, w.ResetStartTime(0), ErrBusy)
	require.ErrorIs(t, w.SetCurrentTickTime(5000), ErrBusy)
	require.EqualValues(t, 1000, w.startTime())
	require.True(t, w.Cancel(id))
	require.NoError(t, w.ResetStartTime(64))
	require.EqualValues(t, 64, w.startTime())
	require.EqualValues(t, 80, w.CurrentTickTime())
	id = schedule(t, w, 100) // tick 2 from the new start
	require.EqualValues(t, 2, place(w, id)[0])

	var errs []error
	w.Poll(200, func(now, id int64) bool {
		errs = append(errs, w.ResetStartTime(0), w.SetCurrentTickTime(now))
		return true
	}, 10)
	w.Poll(200, func(now, id int64) bool {
		errs = append(errs, w.ResetStartTime(0), w.SetCurrentTickTime(now))
		return true
	}, 10)
	w.Poll(200, func(now, id int64) bool {
		errs = append(errs, w.ResetStartTime(0), w.SetCurrentTickTime(now))
		return true
	}, 10)
	require.Len(t, errs, 2, "expired once, at tick 2")
	for _, err := range errs {
		require.ErrorIs(t, err, ErrBusy)
	}
	require.EqualValues(t, 64, w.startTime())
}

func TestClearAndForEach(t *testing.T) {
	w := small(t)
	want := map[int64]int64{}
	for _, d := range []int64{1001, 1040, 1041, 1300, 999999} {
		want[schedule(t, w, d)] = d
	}
	got := map[int64]int64{}
	w.ForEach(func(deadline, id int64) { got[id] = deadline })
	require.Equal(t, want, got)
	// f may cancel, including timers it has not reached yet.
	n := 0
	w.ForEach(func(deadline, id int64) {
		n++
		if deadline == 1040 {
			for other, d := range want {
				if d == 1041 {
					require.True(t, w.Cancel(other))
				}
			}
		}
	})
	require.Equal(t, 4, n)
	w.Clear()
	require.Zero(t, w.TimerCount())
	w.ForEach(func(deadline, id int64) { t.Fatalf("timer %x left after Clear", id) })
	var r recorder
	for now := int64(1000); now < 3000; now += 8 {
		w.Poll(now, r.handle, 10)
	}
	require.Empty(t, r.got)
	require.NoError(t, w.ResetStartTime(0))
}

func TestHandlerMayScheduleAndCancel(t *testing.T) {
	w := small(t)
	a := schedule(t, w, 1001)
	b := schedule(t, w, 1002)
	c := schedule(t, w, 1003)
	require.True(t, w.Cancel(a)) // slot 0 free, behind the scan once b expires
	var got []int64
	var again int64 = -1
	h := func(now, id int64) bool {
		got = append(got, id)
		require.False(t, w.Cancel(id), "the expiring timer is not scheduled")
		_, ok := w.Deadline(id)
		require.False(t, ok)
		if id == b {
			require.True(t, w.Cancel(c))
			// Due, in the tick this poll is leaving: it must not sit in
			// slot 0, behind the scan, for a rotation.
			again = schedule(t, w, 1010)
			require.NotEqual(t, place(w, b), place(w, again), "the expiring slot is reserved")
		}
		return true
	}
	require.Equal(t, 1, w.Poll(1016, h, 10))
	require.Equal(t, []int64{b}, got)
	require.EqualValues(t, 1032, w.CurrentTickTime())
	require.Equal(t, [2]int64{1, 0}, place(w, again), "moved to the next tick")
	require.Equal(t, 1, w.Poll(1016, h, 10), "expires on the next poll")
	require.Equal(t, []int64{b, again}, got)

	// Not about to leave the tick: a due timer stays in it, and the next
	// poll of the same tick finds it.
	x := schedule(t, w, 1020)
	d := schedule(t, w, 1020)
	require.True(t, w.Cancel(x))
	got = got[:0]
	h2 := func(now, id int64) bool {
		got = append(got, id)
		if id == d {
			again = schedule(t, w, 1017)
		}
		return true
	}
	require.Equal(t, 1, w.Poll(1021, h2, 10))
	require.Equal(t, place(w, x), place(w, again), "slot 0, behind the scan")
	require.NotEqual(t, x, again)
	require.False(t, w.Cancel(x))
	require.EqualValues(t, 1032, w.CurrentTickTime())
	require.Equal(t, 1, w.Poll(1021, h2, 10))
	require.Equal(t, []int64{d, again}, got)
}

func TestHandlerScheduleThenRefuse(t *testing.T) {
	w := small(t)
	a := schedule(t, w, 1001)
	var b int64
	refuse := true
	h := func(now, id int64) bool {
		if id == a && refuse {
			refuse = false
			b = schedule(t, w, 1005) // not due, same tick: may not take a's slot
			return false
		}
		return true
	}
	require.Zero(t, w.Poll(1003, h, 10))
	require.NotEqual(t, place(w, a), place(w, b))
	require.Equal(t, 2, w.TimerCount())
	da, ok := w.Deadline(a)
	require.True(t, ok)
	require.EqualValues(t, 1001, da)
	db, ok := w.Deadline(b)
	require.True(t, ok)
	require.EqualValues(t, 1005, db)
	require.Equal(t, 1, w.Poll(1003, h, 10))
	require.Equal(t, 1, w.Poll(1005, h, 10))
	require.Zero(t, w.TimerCount())
}

func TestHandlerClearThenRefuse(t *testing.T) {
	w := small(t)
	schedule(t, w, 1001)
	schedule(t, w, 1002)
	n := w.Poll(1003, func(now, id int64) bool {
		w.Clear()
		require.Zero(t, w.Poll(now, func(int64, int64) bool { panic("nested poll ran") }, 10))
		return false
	}, 10)
	require.Zero(t, n)
	require.Zero(t, w.TimerCount(), "a cleared timer is not put back")
	w.ForEach(func(deadline, id int64) { t.Fatalf("timer %x left", id) })
}

// TestHandlerClearThenScheduleIntoFiringSlot: after Clear in h the slot
// of the expiring timer is free; a timer h schedules there gets a new id,
// and the expiring timer's id is stale whatever h returns.
func TestHandlerClearThenScheduleIntoFiringSlot(t *testing.T) {
	for _, accept := range []bool{true, false} {
		w := newWheel(t, Config{Start: 0, Resolution: 16, TicksPerWheel: 1, TickAllocation: 1, MaxTickAllocation: 1})
		a := schedule(t, w, 1)
		var b int64
		w.Poll(2, func(now, id int64) bool {
			require.Equal(t, a, id)
			w.Clear()
			b = schedule(t, w, 100) // the only slot
			return accept
		}, 10)
		require.Equal(t, place(w, a), place(w, b))
		require.NotEqual(t, a, b)
		require.Equal(t, 1, w.TimerCount())
		require.False(t, w.Cancel(a))
		d, ok := w.Deadline(b)
		require.True(t, ok)
		require.EqualValues(t, 100, d)
		var r recorder
		for now := int64(0); now <= 100; now += 10 {
			w.Poll(now, r.handle, 10)
		}
		require.Equal(t, []int64{b}, r.ids())
	}
}

func TestHandlerGrowsCurrentTick(t *testing.T) {
	w := newWheel(t, Config{Resolution: 16, TicksPerWheel: 2, TickAllocation: 1})
	first := schedule(t, w, 1)
	var got []int64
	h := func(now, id int64) bool {
		got = append(got, id)
		if id == first {
			schedule(t, w, 10) // slot 0 reserved: the tick grows
			schedule(t, w, 11)
		}
		return true
	}
	require.Equal(t, 1, w.Poll(5, h, 10))
	require.Equal(t, 4, w.Capacity()-w.ticksPerWheel()+1, "tick 0 grew to 4")
	require.Equal(t, 2, w.Poll(12, h, 10))
	require.Len(t, got, 3)
}

func TestHandlerPanicLeavesWheelUsable(t *testing.T) {
	w := small(t)
	schedule(t, w, 1001)
	id := schedule(t, w, 1002)
	func() {
		defer func() { require.NotNil(t, recover()) }()
		w.Poll(1003, func(int64, int64) bool { panic("boom") }, 10)
	}()
	var r recorder
	require.Equal(t, 1, w.Poll(1003, r.handle, 10), "the panicking timer counts as expired")
	require.Equal(t, []int64{id}, r.ids())
	require.NoError(t, w.ResetStartTime(0))
}

func TestErrorsAreDistinct(t *testing.T) {
	all := []error{ErrArgument, ErrCapacity, ErrBusy}
	for i, a := range all {
		for j, b := range all {
			require.Equal(t, i == j, errors.Is(a, b))
		}
	}
}

// TestForEachVisitsEveryTimerWhenFSchedules: a timer f schedules ahead of
// the scan must not use up the visit of a timer that was already there.
func TestForEachVisitsEveryTimerWhenFSchedules(t *testing.T) {
	w := small(t)
	a := schedule(t, w, 1001)      // tick 0
	b := schedule(t, w, 1000+5*16) // tick 5
	seen := map[int64]bool{}
	w.ForEach(func(deadline, id int64) {
		seen[id] = true
		if id == a {
			schedule(t, w, 1000+2*16) // tick 2: between a and b
			require.True(t, w.Cancel(a), "f cancels the visited timer too")
		}
	})
	require.True(t, seen[b], "ForEach skipped a timer scheduled before it was called: %v", seen)
	require.Len(t, seen, 3)
}

// TestHandlerDueTimerExpiresOnNextPollAfterEarlyStop: a due timer that h
// schedules while the poll's now is past the tick goes to the next tick;
// if the poll then stops early (the expiry limit, or h refusing a later
// timer) and stays in its tick, the next poll, which leaves that tick,
// must still expire it, as Agrona's next poll would (its scan of the tick
// wraps round to the slot).
func TestHandlerDueTimerExpiresOnNextPollAfterEarlyStop(t *testing.T) {
	for _, stop := range []string{"limit", "refusal"} {
		t.Run(stop, func(t *testing.T) {
			w := small(t)
			a := schedule(t, w, 1001)
			b := schedule(t, w, 1002)
			var x int64 = -1
			refuse := stop == "refusal"
			expired := map[int64]int{}
			h := func(now, id int64) bool {
				if id == b && refuse {
					refuse = false
					return false
				}
				expired[id]++
				if id == a {
					x = schedule(t, w, 1003) // due, tick 0
				}
				return true
			}
			limit := math.MaxInt
			if stop == "limit" {
				limit = 2
			}
			w.Poll(1016, h, limit)
			require.EqualValues(t, 1016, w.CurrentTickTime(), "stopped early: still in tick 0")
			require.Zero(t, expired[x])
			w.Poll(1016, h, math.MaxInt)
			require.EqualValues(t, 1032, w.CurrentTickTime(), "left tick 0")
			require.Equal(t, map[int64]int{a: 1, b: 1, x: 1}, expired, "x expired on the next poll")
			require.Zero(t, w.TimerCount())
		})
	}
}
