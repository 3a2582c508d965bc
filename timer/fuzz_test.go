package timer

import (
	"encoding/binary"
	"errors"
	"maps"
	"math"
	"slices"
	"testing"
)

// bytesIn hands out fuzz input, zeros once it runs out.
type bytesIn struct{ b []byte }

func (in *bytesIn) more() bool { return len(in.b) > 0 }

func (in *bytesIn) u8() byte {
	if len(in.b) == 0 {
		return 0
	}
	v := in.b[0]
	in.b = in.b[1:]
	return v
}

func (in *bytesIn) u16() uint16 { return uint16(in.u8()) | uint16(in.u8())<<8 }

// modelTimer is the model's view of a scheduled timer.
type modelTimer struct {
	deadline int64
	// budget counts the complete polls left before the timer must have
	// expired; -1 until a poll that starts after Schedule sees now >=
	// deadline (see the package documentation, Timing).
	budget int
}

// FuzzWheel runs random operations against a Wheel and a model (a map of
// scheduled deadlines, and the ids of the timers that expired or were
// cancelled) and checks, after every step: Schedule, Cancel, Deadline and
// TimerCount agree with the model; Schedule never returns an id it
// returned before (a slot's reuse is a new generation, and no input
// wraps one), and stale ids are rejected: Cancel of one is false and
// cancels nothing, Deadline of one reports nothing; every timer expires
// exactly once, never before its deadline, and no later than the bound of
// the package documentation: with c0 the current tick when the first poll
// starting after Schedule with now >= deadline starts, and k = (tick of the
// id - c0) mod TicksPerWheel, within the first k+1 complete polls from
// that one (complete: under the expiry limit, handler never false). At the
// end, TicksPerWheel+1 complete polls past every deadline expire all
// timers. Handlers refuse timers, schedule and cancel timers.
func FuzzWheel(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{2, 3, 1, 0, 0, 0, 10, 0, 20, 2, 5, 200, 2, 30, 200, 1, 0, 2, 40, 200})
	f.Add([]byte{4, 2, 0, 7, 7, 0, 255, 0, 128, 0, 1, 2, 200, 3, 2, 200, 2, 2, 255, 4, 2, 255, 1, 5, 0, 2, 255, 255})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 2, 1, 9, 2, 1, 9, 2, 1, 9})
	f.Add([]byte{1, 1, 0, 9, 9, 0, 50, 0, 60, 0, 70, 0, 80, 2, 100, 130, 6, 2, 100, 131, 2, 100, 4, 2, 200, 200})
	// One tick of one slot: schedule, cancel, schedule into the slot again,
	// cancel the stale id; expire, schedule again, cancel and read stale
	// ids.
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 26, 0, 3, 8, 0, 0, 0, 0, 26, 1, 26, 0, 14, 1, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		in := &bytesIn{data}
		cfg := Config{
			Start:          int64(int16(in.u16())),
			Resolution:     1 << (in.u8() % 6),
			TicksPerWheel:  1 << (in.u8() % 5),
			TickAllocation: 1 << (in.u8() % 3),
		}
		w, err := NewWheel(cfg)
		if err != nil {
			t.Fatal(err)
		}
		n := int64(cfg.TicksPerWheel)
		rotation := n * cfg.Resolution
		now := cfg.Start + int64(int8(in.u8()))
		model := map[int64]*modelTimer{}
		// issued: every id Schedule returned; stale: those of the timers
		// that expired, were cancelled or cleared, in that order.
		issued := map[int64]bool{}
		var stale []int64

		currentTick := func() int64 { return (w.CurrentTickTime()-w.startTime())/w.resolution() - 1 }
		check := func(what string) {
			t.Helper()
			if w.TimerCount() != len(model) {
				t.Fatalf("%s: TimerCount %d, model %d", what, w.TimerCount(), len(model))
			}
			for id, m := range model {
				if d, ok := w.Deadline(id); !ok || d != m.deadline {
					t.Fatalf("%s: Deadline(%x) = %d, %v; model %d", what, id, d, ok, m.deadline)
				}
			}
			for _, id := range stale[max(0, len(stale)-32):] {
				if d, ok := w.Deadline(id); ok || d != nullDeadline {
					t.Fatalf("%s: Deadline(%x) of a stale id = %d, %v", what, id, d, ok)
				}
			}
		}
		schedule := func(deadline int64) {
			t.Helper()
			id, err := w.Schedule(deadline)
			if err != nil {
				t.Fatalf("Schedule(%d): %v", deadline, err)
			}
			if _, dup := model[id]; dup {
				t.Fatalf("Schedule(%d) returned the id %x of a scheduled timer", deadline, id)
			}
			if issued[id] {
				t.Fatalf("Schedule(%d) returned the id %x of an earlier timer", deadline, id)
			}
			if p := place(w, id); id < 0 || p[0] >= n || int(p[1]) >= w.Capacity() || uint64(id)>>w.genShift > uint64(w.genMask) {
				t.Fatalf("Schedule(%d) returned a malformed id %x", deadline, id)
			}
			issued[id] = true
			model[id] = &modelTimer{deadline: deadline, budget: -1}
		}
		cancel := func(id int64) {
			t.Helper()
			_, want := model[id]
			if got := w.Cancel(id); got != want {
				t.Fatalf("Cancel(%x) = %v, model %v (stale: %v)", id, got, want, issued[id] && !want)
			}
			if want {
				delete(model, id)
				stale = append(stale, id)
			}
		}
		anyStale := func(i byte) (int64, bool) {
			if len(stale) == 0 {
				return 0, false
			}
			return stale[len(stale)-1-int(i)%len(stale)], true
		}
		anyID := func(i byte) (int64, bool) {
			k := int(i)
			for id := range model {
				if k == 0 {
					return id, true
				}
				k--
			}
			return 0, false
		}

		// poll polls once and checks the expiries; it reports whether the
		// poll was complete.
		poll := func(limit int, refuseAt, reenter byte) bool {
			t.Helper()
			c0 := currentTick()
			for id, m := range model {
				if m.budget < 0 && now >= m.deadline {
					m.budget = int((place(w, id)[0]-c0)%n+n)%int(n) + 1
				}
			}
			calls, refused := 0, false
			got := w.Poll(now, func(pnow, id int64) bool {
				calls++
				if pnow != now {
					t.Fatalf("handler got now %d, poll %d", pnow, now)
				}
				m, ok := model[id]
				if !ok {
					t.Fatalf("expired %x, which is not scheduled (twice, cancelled or never)", id)
				}
				if m.deadline > now {
					t.Fatalf("expired %x at %d before its deadline %d", id, now, m.deadline)
				}
				if d, ok := w.Deadline(id); ok || d != nullDeadline {
					t.Fatalf("Deadline(%x) of the expiring timer = %d, %v", id, d, ok)
				}
				if calls == int(refuseAt) {
					refused = true
					return false
				}
				delete(model, id)
				stale = append(stale, id)
				switch reenter % 4 {
				case 1: // reschedule, due now (counted as due from the next poll)
					schedule(now - int64(reenter>>2))
				case 2: // schedule later
					schedule(now + int64(reenter))
				case 3: // cancel another, or a stale id (this one, even)
					if other, ok := anyID(reenter >> 3); ok && reenter&4 == 0 {
						cancel(other)
					} else if old, ok := anyStale(reenter >> 3); ok {
						cancel(old)
					}
				}
				return true
			}, limit)
			want := calls
			if refused {
				want--
			}
			if got != want {
				t.Fatalf("Poll returned %d, handler accepted %d", got, want)
			}
			complete := !refused && got < limit
			for id, m := range model {
				if m.budget > 0 && complete {
					m.budget--
					if m.budget == 0 {
						t.Fatalf("timer %x (deadline %d) not expired by the complete poll at %d (tick %d -> %d)",
							id, m.deadline, now, c0, currentTick())
					}
				}
			}
			check("poll")
			return complete
		}

		for in.more() {
			switch op := in.u8(); op % 8 {
			case 0, 1: // schedule, from well in the past to several rotations ahead
				span := int64(int8(in.u8()))
				schedule(now + span*rotation/16 + int64(in.u8()%8))
			case 2: // cancel a scheduled timer, or a stale or made-up id
				k := in.u8()
				if id, ok := anyID(k); ok && op&8 == 0 {
					cancel(id)
				} else if id, ok := anyStale(k); ok && op&0x10 != 0 {
					cancel(id)
				} else {
					cancel(int64(binary.LittleEndian.Uint16([]byte{in.u8(), in.u8()})) << (3 * (op >> 4)))
				}
			case 3, 4, 5: // time passes, then a poll
				now += int64(in.u8()) * cfg.Resolution / 8
				limit := math.MaxInt
				if op&0x10 != 0 {
					limit = int(op>>5) + 1
				}
				refuseAt := byte(0)
				if op&0x08 != 0 {
					refuseAt = in.u8() % 4
				}
				poll(limit, refuseAt, in.u8())
			case 6: // Deadline of an arbitrary id, or one near the ids in use
				id := int64(in.u16()) | int64(in.u8())<<32
				if op&8 != 0 {
					id = int64(in.u8()%4)<<w.genShift | int64(in.u8())&w.mask<<w.slotBits | int64(in.u8()%8)
				}
				d, ok := w.Deadline(id)
				if m, in := model[id]; in != ok || (ok && d != m.deadline) || (!ok && d != nullDeadline) {
					t.Fatalf("Deadline(%x) = %d, %v; model %v", id, d, ok, m)
				}
			case 7: // rarely: reset, set tick time or clear
				switch in.u8() % 8 {
				case 0:
					err := w.ResetStartTime(now - int64(in.u8()))
					if (len(model) > 0) != errors.Is(err, ErrBusy) || (len(model) == 0 && err != nil) {
						t.Fatalf("ResetStartTime with %d timers: %v", len(model), err)
					}
				case 1:
					before := w.CurrentTickTime()
					err := w.SetCurrentTickTime(now)
					if (len(model) > 0) != errors.Is(err, ErrBusy) || (len(model) == 0 && err != nil) {
						t.Fatalf("SetCurrentTickTime with %d timers: %v", len(model), err)
					}
					if w.CurrentTickTime() < before {
						t.Fatalf("SetCurrentTickTime moved back from %d to %d", before, w.CurrentTickTime())
					}
				case 2:
					w.Clear()
					stale = append(stale, slices.Sorted(maps.Keys(model))...)
					clear(model)
				default:
					seen := 0
					w.ForEach(func(deadline, id int64) {
						seen++
						if m, ok := model[id]; !ok || m.deadline != deadline {
							t.Fatalf("ForEach gave %x at %d, not in the model", id, deadline)
						}
					})
					if seen != len(model) {
						t.Fatalf("ForEach gave %d timers, model %d", seen, len(model))
					}
				}
			}
			check("step")
		}

		// Drain: past every deadline, TicksPerWheel+1 complete polls expire
		// everything, whatever the lag of the wheel.
		for _, m := range model {
			now = max(now, m.deadline)
		}
		for range n + 1 {
			if !poll(math.MaxInt, 0, 0) {
				t.Fatal("a drain poll was not complete")
			}
		}
		if len(model) != 0 {
			t.Fatalf("%d timers left after draining", len(model))
		}
		for _, id := range stale {
			if w.Cancel(id) {
				t.Fatalf("Cancel(%x) of a stale id after draining", id)
			}
		}
	})
}

// FuzzCancelDeadline throws arbitrary ids at Cancel and Deadline of a wheel
// with a few timers: no panic, and a true answer only for an id Schedule
// returned and that is still scheduled.
func FuzzCancelDeadline(f *testing.F) {
	for _, id := range []int64{0, 1, -1, 1 << 32, 3<<32 | 1, math.MaxInt64, math.MinInt64, 1 << 31, 7<<32 | 1<<31, -(1 << 32)} {
		f.Add(id, uint8(3))
	}
	f.Fuzz(func(t *testing.T, id int64, grow uint8) {
		w, err := NewWheel(Config{Start: -100, Resolution: 4, TicksPerWheel: 8, TickAllocation: 2})
		if err != nil {
			t.Fatal(err)
		}
		ids := map[int64]int64{}
		for i := range int64(grow%32) + 1 {
			d := -100 + i*i%40
			got, err := w.Schedule(d)
			if err != nil {
				t.Fatal(err)
			}
			ids[got] = d
		}
		want, ok := ids[id]
		if d, got := w.Deadline(id); got != ok || (ok && d != want) || (!ok && d != nullDeadline) {
			t.Fatalf("Deadline(%x) = %d, %v; scheduled: %v", id, d, got, ok)
		}
		if w.Cancel(id) != ok {
			t.Fatalf("Cancel(%x) != %v", id, ok)
		}
		if w.Cancel(id) {
			t.Fatalf("Cancel(%x) twice", id)
		}
		if _, got := w.Deadline(id); got {
			t.Fatalf("Deadline(%x) found a cancelled timer", id)
		}
		if ok {
			delete(ids, id)
			// The next timer of that deadline takes the freed slot: the
			// cancelled id stays stale.
			again, err := w.Schedule(want)
			if err != nil {
				t.Fatal(err)
			}
			if again == id || w.Cancel(id) {
				t.Fatalf("the stale id %x names the timer %x that reused its slot", id, again)
			}
			ids[again] = want
		}
		if w.TimerCount() != len(ids) {
			t.Fatalf("TimerCount %d, want %d", w.TimerCount(), len(ids))
		}
	})
}
