// Package idle provides the idle strategies that decide what an agent's
// thread does between duty cycles, after Agrona's IdleStrategy.
//
// # Contract
//
// The thread that runs an agent calls Idle with each cycle's work count:
//
//	for running {
//		s.Idle(agent.DoWork())
//	}
//
// After a cycle with work (count > 0) every strategy returns at once (and
// Backoff resets); after an idle cycle it performs one step: nothing
// (NoOp), a CPU spin-wait hint (BusySpin; x86 PAUSE), an OS-level yield
// (Yielding; sched_yield), a sleep (Sleeping), a step of the
// spin-yield-park state machine (Backoff), or whichever of these a shared
// status word selects (Controllable). A loop that tests for work itself
// calls Reset on finding none and then IdleOnce until work appears.
//
// Strategies keep state (Backoff's counters, the state each reports through
// StateReporter): one instance per agent, used by one goroutine. Parse
// builds a fresh instance from a spec such as "backoff" or "sleep-ns:2000",
// so a spec, not an instance, is what to share in configuration.
//
// Nothing here allocates, and every wait is bounded by the strategy's own
// period: strategies never block on channels.
//
// # Parking on Go
//
// Sleeping and Backoff park with a direct nanosleep(2) instead of
// time.Sleep: on a thread locked with runtime.LockOSThread, time.Sleep
// hands the P away and is woken through the runtime's timers, which costs
// far more than the nanosleep itself at the short periods a back-off
// parks for. The kernel still adds the thread's timer slack (50 µs by
// default) to each sleep; runner.WithTimerSlack lowers it. Parks under
// 64 µs are raw nanosleeps that keep the thread's P, as spinning would:
// told of them, the runtime would take the P back at every park and keep
// its monitor waking onto the agents' CPUs. Parks up to a millisecond are
// nanosleeps the runtime sees, whose P its monitor takes back; parks of a
// millisecond or more use time.Sleep after all, which hands the P over at
// once, so that an idle runner does not starve the process's other
// goroutines when GOMAXPROCS is small. docs/idle.md
// ("Parking on a locked thread") has the measurements
// and the command that reproduces them.
package idle
