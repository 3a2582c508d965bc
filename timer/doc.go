// Package timer provides Wheel, a deadline timer wheel after Agrona's
// org.agrona.DeadlineTimerWheel: how an agent implements timeouts without
// threads. Schedule and Cancel are O(1) (a scan of one tick's slots), and
// the agent expires timers by polling the wheel from its duty cycle.
// docs/timer.md has figures, the timing bound derived step by step, and
// benchmarks.
//
// # Contract
//
// A Wheel is a state machine driven by its caller, like etcd's raft.Node
// without the goroutine: it owns no goroutine, reads no clock, and keeps
// no time of its own besides the tick it has reached. It is owned by one
// agent and used from that agent's goroutine only (no method is safe for
// concurrent use). Every time it sees comes from the caller (the now
// passed to Poll, the deadlines passed to Schedule), in whatever unit the
// caller chose for Config (nanoseconds from a cached clock, typically).
// Given the same calls, a wheel does the same thing: tests drive it with
// made-up times, step by step.
//
// The owner's obligations, on each duty cycle:
//
//  1. read the time once (a cached clock) and call Poll(now, h, limit);
//     now must never go backwards;
//  2. in h, act on the expired timer (the id is the one Schedule
//     returned) and return true, or return false to keep it and stop this
//     poll (the resource it needs is busy: the next poll offers it again);
//  3. count Poll's result as work done, so the idle strategy does not
//     sleep while timers are expiring;
//  4. forget an id once its timer expired or was cancelled. The id is
//     then stale: Cancel of it returns false and cancels nothing, and
//     Deadline of it reports nothing, even after a later timer took its
//     slot (see Timer ids). So a late Cancel, after the timer fired, is
//     harmless; but a stale id is told apart only until its slot's
//     generation wraps, so do not hoard ids either.
//
// Poll the wheel at least once per tick (Resolution) to keep it in step:
// each Poll advances at most one tick, so a wheel polled less often falls
// behind and catches up one tick per poll.
//
// # Timer ids
//
// An id names the timer's slot and the slot's generation, the number of
// timers that took the slot (modulo 2^g, below). From the top of a
// non-negative int64:
//
//	| 0 | generation: g bits | tick on the wheel: t bits | slot: s bits |
//
// where t = log2(TicksPerWheel), s = log2(MaxTickAllocation) (the
// configured or default maximum, not the tick's current size), and g =
// min(32, 63 - t - s), at least 24: NewWheel refuses a configuration
// with TicksPerWheel x MaxTickAllocation above 2^39, and the default
// MaxTickAllocation is min(2^30, 2^39 / TicksPerWheel). A
// timer that takes a slot gets the slot's next generation, so ids are
// unique among scheduled timers and a stale id is told from the id of a
// later timer of its slot, until the generation wraps: only after a
// multiple of 2^g (at least 16 777 216) timers took that one slot can an
// old id name a timer again. A wheel with a smaller MaxTickAllocation
// gets a wider generation, up to 32 bits.
// A timer a Handler refuses stays under its id. Ids are not Agrona's
// (tick << 32 | slot), and their exact values are not an interface:
// compare them, do not decode them.
//
// # Timing
//
// A timer never expires before its deadline: Poll expires a timer only if
// now >= deadline. Polled at least once per tick, the wheel expires a
// timer on the first Poll whose now is at or after the deadline, or at
// the latest on the Poll after it (when that first Poll still had to
// finish the previous tick). In general, let P0 be the first Poll that
// starts after Schedule returned with now >= deadline, and k = (the
// timer's tick on the wheel - current tick when P0 starts) mod
// TicksPerWheel: the timer expires within the first k+1 complete polls
// counted from P0, a complete poll being one that reached neither the
// expiry limit nor a false from the handler; so within TicksPerWheel
// complete polls. FuzzWheel asserts this bound.
//
// A deadline far in the future (more than a rotation, TicksPerWheel x
// Resolution, away) sits in its tick modulo the wheel: each rotation's
// poll of that tick looks at it and leaves it. A busy tick costs Schedule
// a longer scan for a free slot and Poll a longer scan; Schedule doubles a
// full tick, which is the only allocation.
//
// # Differences from Agrona
//
//   - Ticks grow independently: a full tick doubles its own slots, not
//     every tick's (Agrona doubles the whole wheel, so one burst of timers
//     at one tick multiplies the memory of all ticks). Capacity reports the
//     slots of all ticks.
//   - Schedule returns an error instead of throwing: ErrCapacity when the
//     tick cannot grow (Config.MaxTickAllocation, default 2^30 slots), and
//     ErrArgument for math.MaxInt64, which marks empty
//     slots (Agrona silently loses such a timer).
//   - Ids carry their slot's generation (see Timer ids): Cancel and
//     Deadline of the id of a timer that expired or was cancelled return
//     false even after a later timer took the slot (in Agrona the id is
//     the slot's, and the stale Cancel cancels the later timer).
//     TicksPerWheel x MaxTickAllocation is bounded by 2^39 to leave room
//     for the generation; MaxTickAllocation defaults to
//     min(2^30, 2^39 / TicksPerWheel).
//   - Cancel and Deadline accept any int64 and return false for ids that
//     name no timer (Agrona throws for negative ones). Deadline returns an
//     ok flag besides the deadline (math.MaxInt64 when there is none).
//   - Poll at now == math.MaxInt64 does not expire empty slots, and the
//     tick arithmetic saturates instead of overflowing for extreme starts
//     and deadlines.
//   - Inside a Handler the slot of the timer being expired is reserved, so
//     a timer scheduled from h never takes it (in Agrona, h returning
//     false after such a Schedule overwrites the new timer). A timer h
//     schedules that is already due goes to the next tick when Poll is
//     about to leave the current one (its now is past the tick's end), so
//     it expires on the next poll (Agrona may put it behind the scan and
//     find it a rotation later). If the poll then stops early (the expiry
//     limit, or h returning false) and stays in its tick, the poll that
//     leaves the tick also scans the next one, so the timer still expires
//     on the next poll that completes.
//     ResetStartTime and SetCurrentTickTime fail with ErrBusy in h, and
//     a nested Poll returns 0.
//   - SetCurrentTickTime fails with ErrBusy while timers are
//     scheduled (Agrona allows it, and the timers of the ticks it skips
//     wait up to a rotation).
//   - The handler gets (now, id); there is no TimeUnit: the unit is the
//     caller's.
package timer
