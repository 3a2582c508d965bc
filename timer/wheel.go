package timer

import (
	"fmt"
	"math"
	"math/bits"
)

const (
	// nullDeadline marks an empty slot (Agrona's NULL_DEADLINE). It is never
	// a timer's deadline: Schedule rejects it (ErrArgument).
	nullDeadline int64 = math.MaxInt64

	// defaultTickAllocation is the number of slots per tick when
	// Config.TickAllocation is 0 (Agrona's INITIAL_TICK_ALLOCATION).
	defaultTickAllocation = 16

	// maxTicksPerWheel bounds Config.TicksPerWheel.
	maxTicksPerWheel = 1 << 30

	// maxTickSlots bounds the slots of one tick (Agrona's limit on the
	// whole wheel array). Config.MaxTickAllocation is also bounded by
	// 2^(63-minGenerationBits) / TicksPerWheel, and defaults to the smaller
	// of the two bounds.
	maxTickSlots = 1 << 30

	// minGenerationBits is the least number of bits of a timer id that
	// count the reuses of its slot (see the package documentation, Timer
	// ids): a stale id can name a later timer of its slot only after a
	// multiple of 2^minGenerationBits (16 777 216) timers took that slot.
	// The tick and the slot take the other 63-minGenerationBits = 39 bits,
	// so TicksPerWheel x maxTickSlots is at most 2^39.
	minGenerationBits = 24

	// maxInitialSlots bounds the slots NewWheel allocates at once,
	// TicksPerWheel x TickAllocation (12 bytes each: 12 GiB at the bound), as
	// Agrona bounds its wheel's array: a larger configuration is an error,
	// not an allocation that kills the process.
	maxInitialSlots = 1 << 30

	// maxGenerationBits: generations are stored as uint32.
	maxGenerationBits = 32

	// placeBits is the most bits the tick and slot fields of an id take.
	placeBits = 63 - minGenerationBits

	// maxTick keeps currentTick+1 from overflowing.
	maxTick = math.MaxInt64 - 1
)

// Handler is called by Poll for each expired timer with the time passed to
// Poll and the timer's id. Returning true consumes the timer; returning
// false keeps it scheduled under the same id and ends the poll (Agrona's
// TimerHandler.onTimerExpiry): the next Poll offers it again first.
type Handler func(now, id int64) bool

// Config describes a wheel. Times and durations are in the caller's unit
// (nanoseconds, milliseconds, ...); the wheel never reads a clock.
type Config struct {
	// Start is the time of the start of tick 0.
	Start int64
	// Resolution is the length of a tick, a positive power of two.
	Resolution int64
	// TicksPerWheel is the number of ticks in one rotation, a power of two
	// in [1, 2^30].
	TicksPerWheel int
	// TickAllocation is the initial number of slots per tick, a power of
	// two; 0 means 16 (Agrona's INITIAL_TICK_ALLOCATION).
	TickAllocation int
	// MaxTickAllocation bounds a tick's slots (a power of two, at least
	// TickAllocation, at most 2^30 and 2^39 / TicksPerWheel);
	// 0 means the largest allowed, the smaller of the two bounds (see the
	// package documentation, Timer ids). Schedule returns ErrCapacity
	// rather than grow a tick beyond it. A smaller bound leaves ids more
	// generation bits (see the package documentation, Timer ids).
	MaxTickAllocation int
}

// Wheel is a deadline timer wheel (Agrona's DeadlineTimerWheel): timers
// are deadlines stored in the slots of the tick their deadline falls in,
// modulo the number of ticks per wheel; Poll scans the slots of the current
// tick. See the package documentation for the contract.
//
// A Wheel is not safe for concurrent use and must not be copied.
type Wheel struct {
	_ noCopy

	start     int64
	shift     uint  // log2(resolution)
	mask      int64 // ticksPerWheel - 1
	maxAlloc  int
	slotBits  uint   // log2(maxAlloc): the slot field of an id
	genShift  uint   // slotBits + log2(ticksPerWheel): the generation field
	genMask   uint32 // 2^generation bits - 1
	tick      int64  // current tick, >= 0
	pollIndex int    // next slot of the current tick to look at
	count     int
	capacity  int
	added     uint64 // timers Schedule added, ever: ForEach counts f's

	// spokes[i] holds the timers in tick i (modulo the wheel). Spokes grow
	// independently.
	spokes []spokeSlots

	// While Poll runs: the time it was given, and the slot whose timer the
	// handler is being called for (-1 when none). That slot is empty but
	// reserved, so a Schedule from the handler cannot take it before Poll
	// knows whether to put the timer back.
	polling     bool
	pollNow     int64
	firingSpoke int
	firingSlot  int

	// deferred: this poll put a handler's due timer in the tick after the
	// current one (see Schedule). carry: a poll did so and then stopped
	// early, in its tick: the poll that leaves the tick scans the next one
	// too, so that those timers still expire on the next complete poll.
	deferred, carry bool
}

// spokeSlots is the slots of one tick: deadlines, nullDeadline in free slots,
// and in gens the generation of each slot, the number of timers that took
// it modulo 2^generation bits, which tells a timer's id from the ids of
// the earlier timers of its slot. Both have the same length.
type spokeSlots struct {
	deadlines []int64
	gens      []uint32
}

// noCopy makes go vet report copies of a Wheel.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

func isPow2(v int64) bool { return v > 0 && v&(v-1) == 0 }

// NewWheel returns an empty wheel whose current tick is tick 0, the one
// starting at cfg.Start. It allocates all ticks' initial slots at once.
func NewWheel(cfg Config) (*Wheel, error) {
	if !isPow2(cfg.Resolution) {
		return nil, fmt.Errorf("%w: %d", ErrArgument, cfg.Resolution)
	}
	if !isPow2(int64(cfg.TicksPerWheel)) || cfg.TicksPerWheel > maxTicksPerWheel {
		return nil, fmt.Errorf("%w: %d", ErrArgument, cfg.TicksPerWheel)
	}
	alloc, maxAlloc := cfg.TickAllocation, cfg.MaxTickAllocation
	if alloc == 0 {
		alloc = defaultTickAllocation
	}
	tickBits := uint(bits.TrailingZeros64(uint64(cfg.TicksPerWheel)))
	if maxAlloc == 0 {
		maxAlloc = min(maxTickSlots, 1<<(placeBits-tickBits))
	}
	if !isPow2(int64(maxAlloc)) || maxAlloc > maxTickSlots {
		return nil, fmt.Errorf("%w: maximum %d", ErrArgument, cfg.MaxTickAllocation)
	}
	slotBits := uint(bits.TrailingZeros64(uint64(maxAlloc)))
	if tickBits+slotBits > placeBits {
		return nil, fmt.Errorf("%w: maximum %d with %d ticks: TicksPerWheel x maxTickSlots exceeds 2^%d, leaving ids fewer than %d generation bits",
			ErrArgument, maxAlloc, cfg.TicksPerWheel, placeBits, minGenerationBits)
	}
	if !isPow2(int64(alloc)) || alloc > maxAlloc {
		return nil, fmt.Errorf("%w: %d (maximum %d)", ErrArgument, cfg.TickAllocation, maxAlloc)
	}
	if uint64(cfg.TicksPerWheel)*uint64(alloc) > maxInitialSlots {
		return nil, fmt.Errorf("%w: %d ticks of %d slots exceed the %d initial slots a wheel may allocate", ErrArgument, cfg.TicksPerWheel, alloc, maxInitialSlots)
	}
	genBits := min(maxGenerationBits, 63-tickBits-slotBits)
	w := &Wheel{
		start:       cfg.Start,
		shift:       uint(bits.TrailingZeros64(uint64(cfg.Resolution))),
		mask:        int64(cfg.TicksPerWheel - 1),
		maxAlloc:    maxAlloc,
		slotBits:    slotBits,
		genShift:    slotBits + tickBits,
		genMask:     uint32(1<<genBits - 1),
		capacity:    cfg.TicksPerWheel * alloc,
		spokes:      make([]spokeSlots, cfg.TicksPerWheel),
		firingSpoke: -1,
		firingSlot:  -1,
	}
	// One array of each for the initial slots; a spoke that grows moves
	// out.
	all := make([]int64, w.capacity)
	for i := range all {
		all[i] = nullDeadline
	}
	gens := make([]uint32, w.capacity)
	for i := range w.spokes {
		w.spokes[i] = spokeSlots{
			deadlines: all[i*alloc : (i+1)*alloc : (i+1)*alloc],
			gens:      gens[i*alloc : (i+1)*alloc : (i+1)*alloc],
		}
	}
	return w, nil
}

// tickOf returns the tick t falls in, 0 for times before the start, at
// most maxTick. Unsigned arithmetic keeps any pair of int64 exact.
func (w *Wheel) tickOf(t int64) int64 {
	if t < w.start {
		return 0
	}
	tick := (uint64(t) - uint64(w.start)) >> w.shift
	if tick > maxTick {
		return maxTick
	}
	return int64(tick)
}

// tickEnd returns the time tick ends (the start of tick+1), saturated at
// math.MaxInt64. tick is in [0, maxTick].
func (w *Wheel) tickEnd(tick int64) int64 {
	n := uint64(tick) + 1
	if n > math.MaxUint64>>w.shift {
		return math.MaxInt64
	}
	off := n << w.shift
	if room := uint64(math.MaxInt64) - uint64(w.start); off > room {
		return math.MaxInt64
	}
	return int64(uint64(w.start) + off)
}

// timerID is Agrona's timerIdForSlot with a generation: from the top, the
// slot's generation, the tick on the wheel, and the slot, in fields of
// 63-genShift, log2(TicksPerWheel) and slotBits bits.
// (The shift counts are below 64; the masks tell the compiler so.)
func (w *Wheel) timerID(spoke, slot int, gen uint32) int64 {
	return int64(gen)<<(w.genShift&63) | int64(spoke)<<(w.slotBits&63) | int64(slot)
}

// take gives slot of spoke its next generation, for a timer Schedule puts
// there, and returns the timer's id.
func (w *Wheel) take(spoke, slot int) int64 {
	gens := w.spokes[spoke].gens
	gen := (gens[slot] + 1) & w.genMask
	gens[slot] = gen
	return w.timerID(spoke, slot, gen)
}

// locate returns the spoke and slot id names, and false if id cannot name
// a slot of this wheel or names an earlier timer of the slot (an older
// generation). The slot may be free.
func (w *Wheel) locate(id int64) (s *spokeSlots, slot int, ok bool) {
	// A negative id fails this test too: its generation field has bit
	// 63-genShift set, above genMask (genShift <= 63-minGenerationBits).
	gen := uint64(id) >> (w.genShift & 63)
	if gen > uint64(w.genMask) {
		return nil, 0, false
	}
	s = &w.spokes[id>>(w.slotBits&63)&w.mask]
	slot = int(id & (1<<(w.slotBits&63) - 1))
	if slot >= len(s.gens) || s.gens[slot] != uint32(gen) {
		return nil, 0, false
	}
	return s, slot, true
}

// Schedule adds a timer that expires at deadline and returns its id. A
// deadline in the past or in the current tick expires on the next Poll
// whose now is at or after it. The id names the timer's slot and the
// slot's generation: it is valid until the timer expires or is cancelled;
// then it is stale, and a later timer that reuses the slot gets another
// id (see the package documentation, Timer ids).
//
// Schedule allocates only to grow a full tick (doubling its slots); it
// fails with ErrCapacity if that would exceed the maximum tick allocation,
// and with ErrArgument for math.MaxInt64.
func (w *Wheel) Schedule(deadline int64) (int64, error) {
	if deadline == nullDeadline {
		return 0, errDeadline
	}
	tick := max(w.tickOf(deadline), w.tick)
	if w.polling && tick == w.tick && w.pollNow >= w.tickEnd(w.tick) && tick < maxTick {
		// A handler schedules a timer that is already due into the tick
		// Poll is about to leave: its slot may be behind the scan, and
		// Agrona would find it only a rotation later. The next tick's
		// spoke is scanned on the next poll (by this one, after leaving
		// the tick, if it stops early: see carry).
		tick++
		w.deferred = true
	}
	spoke := int(tick & w.mask)
	slots := w.spokes[spoke].deadlines
	for i, d := range slots {
		if d == nullDeadline && (i != w.firingSlot || spoke != w.firingSpoke) {
			slots[i] = deadline
			w.count++
			w.added++
			return w.take(spoke, i), nil
		}
	}
	return w.grow(spoke, deadline)
}

// grow doubles a full spoke and puts deadline in the first new slot.
func (w *Wheel) grow(spoke int, deadline int64) (int64, error) {
	old := w.spokes[spoke]
	n := 2 * len(old.deadlines)
	if n > w.maxAlloc {
		return 0, fmt.Errorf("%w: %d slots in a tick", ErrCapacity, len(old.deadlines))
	}
	slots := make([]int64, n)
	copy(slots, old.deadlines)
	for i := len(old.deadlines); i < n; i++ {
		slots[i] = nullDeadline
	}
	slots[len(old.deadlines)] = deadline
	gens := make([]uint32, n)
	copy(gens, old.gens)
	w.spokes[spoke] = spokeSlots{deadlines: slots, gens: gens}
	w.capacity += n - len(old.deadlines)
	w.count++
	w.added++
	return w.take(spoke, len(old.deadlines)), nil
}

// Cancel removes the timer id and reports whether it was scheduled. It is
// false for an id that names no slot of this wheel (any int64 is safe),
// for a stale id (its timer expired or was cancelled, even if a later
// timer took its slot: that timer stays), and, inside a Handler, for the
// timer being expired.
func (w *Wheel) Cancel(id int64) bool {
	s, slot, ok := w.locate(id)
	if !ok || s.deadlines[slot] == nullDeadline {
		return false
	}
	s.deadlines[slot] = nullDeadline
	w.count--
	return true
}

// Deadline returns the deadline of timer id, and false if no timer is
// scheduled under id (then the deadline is math.MaxInt64): a stale id
// reports nothing, even if a later timer took its slot.
func (w *Wheel) Deadline(id int64) (int64, bool) {
	s, slot, ok := w.locate(id)
	if !ok {
		return nullDeadline, false
	}
	d := s.deadlines[slot]
	return d, d != nullDeadline
}

// Poll expires timers of the current tick whose deadline is at or before
// now, calling h for each, at most expiryLimit of them, and returns how
// many expired (those h returned false for are not counted). This is
// Agrona's algorithm:
//
//   - the current tick's slots are scanned once, starting where the last
//     poll of this tick stopped; a timer whose deadline is later (a later
//     rotation of the wheel, or later in this tick) stays;
//   - an expired timer's slot is freed before h is called; if h returns
//     false the timer is put back and Poll returns at once, and the next
//     poll starts with it;
//   - the wheel moves to the next tick only if the scan of the current
//     one did not reach the limit, h never returned false in it, and now
//     is at or after the end of the current tick. One Poll advances at
//     most one tick.
//
// One addition to Agrona's algorithm: a due timer that h schedules while
// now is past the end of the tick goes to the next tick (see the package
// documentation). If the poll then stops early (the limit, or h returning
// false) and stays in its tick, the poll that later leaves that tick goes
// on to scan the tick it moved to, within what is left of its limit, so
// that such timers expire on that poll.
//
// h may call Schedule, Cancel, Deadline, TimerCount and ForEach. A nested
// Poll returns 0 and does nothing. With no timers, Poll only advances the
// tick. Poll allocates nothing.
func (w *Wheel) Poll(now int64, h Handler, expiryLimit int) int {
	if w.polling {
		return 0
	}
	if w.count == 0 {
		w.carry = false
		w.advance(now)
		return 0
	}
	w.polling, w.pollNow, w.deferred = true, now, false
	defer w.endPoll()
	expired, complete := w.scan(now, h, expiryLimit)
	if complete && w.advance(now) {
		w.deferred = false // those timers are in the new current tick
		if w.carry {
			// An earlier poll of the tick just left stopped early after
			// putting due timers in this one: scan it now.
			w.carry = false
			n, _ := w.scan(now, h, expiryLimit-expired)
			expired += n
		}
	}
	if w.deferred {
		w.carry = true
	}
	return expired
}

// advance moves to the next tick if now is at or after the end of the
// current one, and reports whether it did.
func (w *Wheel) advance(now int64) bool {
	if now >= w.tickEnd(w.tick) && w.tick < maxTick {
		w.tick++
		w.pollIndex = 0
		return true
	}
	return false
}

// scan is one pass of Poll over the current tick's slots, from pollIndex:
// it returns how many timers expired and whether it was complete (under
// limit, h never false).
func (w *Wheel) scan(now int64, h Handler, limit int) (expired int, complete bool) {
	spoke := int(w.tick & w.mask)
	length := len(w.spokes[spoke].deadlines)
	if w.pollIndex >= length {
		w.pollIndex = 0
	}
	for i := 0; i < length && expired < limit; i++ {
		slot := w.pollIndex
		// Re-read the spoke: h may have grown it.
		if d := w.spokes[spoke].deadlines[slot]; d != nullDeadline && now >= d {
			w.spokes[spoke].deadlines[slot] = nullDeadline
			w.count--
			expired++
			w.firingSpoke, w.firingSlot = spoke, slot
			// The slot keeps its generation while h runs: if h refuses,
			// the timer goes back under the same id; a later timer that
			// takes the slot gets the next generation.
			if !h(now, w.timerID(spoke, slot, w.spokes[spoke].gens[slot])) {
				if w.firingSlot == slot { // not cleared by Clear in h
					w.spokes[spoke].deadlines[slot] = d
					w.count++
				}
				w.firingSpoke, w.firingSlot = -1, -1
				return expired - 1, false
			}
			w.firingSpoke, w.firingSlot = -1, -1
		}
		if w.pollIndex++; w.pollIndex >= length {
			w.pollIndex = 0
		}
	}
	return expired, expired < limit
}

func (w *Wheel) endPoll() {
	w.polling = false
	w.firingSpoke, w.firingSlot = -1, -1
}

// TimerCount returns the number of scheduled timers.
func (w *Wheel) TimerCount() int { return w.count }

// Capacity returns the number of slots of all ticks, the wheel's memory in
// units of 12 bytes (a deadline and a generation per slot).
func (w *Wheel) Capacity() int { return w.capacity }

// generationBits returns the number of bits of this wheel's timer ids
// that hold the slot's generation, 63 - log2(TicksPerWheel) -
// log2(maxAlloc) but at most 32, and at least minGenerationBits.
func (w *Wheel) generationBits() int { return bits.OnesCount32(w.genMask) }

// startTime returns the time of the start of tick 0.
func (w *Wheel) startTime() int64 { return w.start }

// resolution returns the length of a tick.
func (w *Wheel) resolution() int64 { return 1 << w.shift }

// ticksPerWheel returns the number of ticks in one rotation.
func (w *Wheel) ticksPerWheel() int { return int(w.mask) + 1 }

// CurrentTickTime returns the end of the current tick, the time at which a
// Poll moves the wheel to the next tick (Agrona's currentTickTime():
// (currentTick+1)*resolution + start), saturated at math.MaxInt64.
func (w *Wheel) CurrentTickTime() int64 { return w.tickEnd(w.tick) }

// SetCurrentTickTime moves the wheel forward to the tick now falls in (it
// never moves back), as after polls at every tick up to now. Unlike
// Agrona it fails with ErrBusy while timers are scheduled, because
// jumping ticks would leave their timers for up to a rotation, and
// inside a Handler.
func (w *Wheel) SetCurrentTickTime(now int64) error {
	if err := w.checkIdle(); err != nil {
		return err
	}
	if t := w.tickOf(now); t > w.tick {
		w.tick = t
		w.pollIndex = 0
	}
	w.carry = false
	return nil
}

// ResetStartTime makes start the start of tick 0 and tick 0 current. It
// fails with ErrBusy while timers are scheduled (as Agrona) and inside a
// Handler.
func (w *Wheel) ResetStartTime(start int64) error {
	if err := w.checkIdle(); err != nil {
		return err
	}
	w.start = start
	w.tick = 0
	w.pollIndex = 0
	w.carry = false
	return nil
}

func (w *Wheel) checkIdle() error {
	if w.polling {
		return errInPoll
	}
	if w.count > 0 {
		return fmt.Errorf("%w: %d", ErrBusy, w.count)
	}
	return nil
}

// Clear cancels all timers. Ticks keep the slots they grew to; the current
// tick and start time are unchanged. From a Handler it also cancels the
// timer being expired, which is then not put back if h returns false.
func (w *Wheel) Clear() {
	left := w.count
	for _, s := range w.spokes {
		if left == 0 {
			break
		}
		slots := s.deadlines
		for i, d := range slots {
			if d != nullDeadline {
				slots[i] = nullDeadline
				left--
			}
		}
	}
	w.count = 0
	w.firingSpoke, w.firingSlot = -1, -1
}

// ForEach calls f with the deadline and id of every scheduled timer, in
// slot order (not deadline order). f may cancel timers, which are then
// skipped if not yet visited; timers f schedules may or may not be
// visited, and do not make ForEach miss any of the others.
func (w *Wheel) ForEach(f func(deadline, id int64)) {
	// left bounds the timers not visited yet, so the scan can stop early:
	// the timers f schedules add to it (they may land ahead of the scan),
	// the ones it cancels do not take from it (they may have been visited).
	left := w.count
	for s := 0; s < len(w.spokes) && left > 0; s++ {
		for i := 0; i < len(w.spokes[s].deadlines) && left > 0; i++ {
			if d := w.spokes[s].deadlines[i]; d != nullDeadline {
				added := w.added
				f(d, w.timerID(s, i, w.spokes[s].gens[i]))
				left += int(w.added-added) - 1
			}
		}
	}
}
