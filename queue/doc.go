// Package queue holds Agrona's bounded, lock-free object queues for Go
// values: in-process mailboxes that pass pointers or small structs between
// goroutines (agents) without copying them into bytes, without locks, and
// without allocating per element.
//
//	q, err := queue.NewManyToOne[*Order](1024) // rounded up to a power of two
//	ok := q.Offer(o)                           // false when full: never blocks, never allocates
//	n := q.Drain(func(o *Order) { handle(o) }, 256)
//	o, ok := q.Poll()
//
// Three queues, one per shape of traffic:
//
//   - OneToOne: one producer, one consumer (Agrona's
//     OneToOneConcurrentArrayQueue). The cheapest: no CAS, and each side
//     reads the other's index only when its cached copy says full or empty.
//   - ManyToOne: any number of producers, one consumer (Agrona's
//     ManyToOneConcurrentArrayQueue): producers claim a position with a CAS
//     of tail. The usual mailbox of an agent.
//   - ManyToMany: any number of producers and consumers (Agrona's
//     ManyToManyConcurrentArrayQueue, Vyukov's bounded queue): producers
//     and consumers each CAS their index; every slot has a sequence word.
//
// Compared with the neighbours: package mailbox carries bytes through an
// Agrona ring that can live in shared memory and be read by another
// process or by Java; these queues carry Go values (a pointer costs one
// word, nothing is encoded) and exist only inside one process. A buffered
// channel is the blocking alternative: it parks goroutines, which an agent
// on a locked thread must not do (waking a parked locked thread is a
// hand-off between OS threads), and every send and receive takes its lock.
//
// # Who calls what
//
//   - OneToOne: Offer from one goroutine at a time (the producer); Poll,
//     Drain and DrainTo from one goroutine at a time (the consumer); the
//     producer and the consumer may be different goroutines running at the
//     same time. "One at a time" means the calls are ordered by
//     happens-before (one goroutine, or a hand-over through a mutex,
//     channel or atomic); two concurrent producers or two concurrent
//     consumers corrupt the queue.
//   - ManyToOne: Offer from any goroutine at any time; Poll, Drain and
//     DrainTo from one goroutine at a time (the consumer).
//   - ManyToMany: every method from any goroutine at any time.
//   - All: Size and Capacity from any goroutine at any time. Size is re-read until
//     consistent and clamped to [0, Capacity()]; with concurrent producers
//     or consumers Size is a snapshot, stale when it returns.
//
// # Guarantees
//
// An Offer that returns true happens before the Poll (or Drain, DrainTo)
// that returns its value: whatever the producer wrote before the Offer,
// such as the fields of the object it passes, is visible to the consumer
// that receives it. Each value is received at most once and, unless a
// consumer drops it, exactly once. Values offered by one goroutine are
// received in the order offered (with several consumers, each consumer
// sees its share in that order).
//
// Offer on a full queue returns false at once; Poll on an empty one
// returns the zero value and false. Neither spins, blocks or allocates:
// the caller's idle strategy decides what to do next (package idle). In a
// ManyToOne or ManyToMany queue an Offer is two steps, a claim of a
// position (tail) and the publication of the value in it, so Poll may
// return false while Size() > 0: a producer is
// between the two steps. As in Agrona this is deliberate (no spinning
// inside Poll); the value arrives on a later Poll. Likewise a ManyToMany
// Offer may return false while a consumer is between its claim and its
// release of the last free slot.
//
// # Draining
//
// Drain(fn, limit) removes up to limit values in order and calls fn with
// each on the caller's goroutine. As in Agrona, a value is removed before
// fn is called with it: if fn panics, that value is gone (it is not
// redelivered, so a value that makes its handler panic cannot wedge the
// consumer in a loop) and the values behind it stay queued. fn may Poll or
// Drain the same queue. DrainTo appends to a slice the caller owns instead
// and allocates only when the slice has to grow. A limit below 1 removes
// nothing. In a duty cycle pass a bound, Capacity() at most: with
// math.MaxInt a Drain goes on for as long as producers keep up (and
// DrainTo's slice grows with it), so the agent's other work waits.
//
// # Memory
//
// Capacity is rounded up to a power of two; the slot array is allocated
// once by the constructor. A slot is reset to T's zero value when its
// value is removed, so the queue never keeps a polled pointer (or what it
// references) reachable. The producers' words (tail, head cache) and the
// consumers' words (head, tail cache) sit on separate cache lines, padded
// from each other and from the read-only fields. docs/queue.md explains
// the publication protocol of each queue, the differences from Agrona and
// the measured costs against channels.
package queue
