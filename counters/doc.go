// Package counters is Agrona's counters (CountersManager,
// ConcurrentCountersManager, CountersReader, AtomicCounter) over two
// caller-supplied byte slices, a metadata region and a values region, with
// Agrona's byte layout bit for bit (layout.go): a duty process, a Java
// process using Agrona's classes, and a stat tool can share them through one
// mapped file.
//
// A counter is an int64 in its own 128-byte value record (value,
// registration id, owner id, reference id), described by a 512-byte
// metadata record (state, type id, free-for-reuse deadline, 112-byte key,
// label of up to 380 bytes). Counter id i owns value record i and metadata
// record i.
//
// # Regions
//
// Both regions must start 8-byte aligned (ErrArgument) and the metadata
// region must be at least metadataToValuesRatio (4) times as long as the
// values region (ErrArgument). Layout computes the two regions of n counters
// placed in one buffer, metadata then values, and Split cuts such a buffer;
// NewRegions allocates them on the heap. Constructors never write to the
// regions: a reader in another process, or a late one, must not wipe live
// counters. New memory is zero, which is the empty state.
//
// # Who may call what
//
//   - Exactly one Manager per pair of regions, across all processes: the
//     owner. NewManager is for fresh (zero) regions and refuses regions
//     whose record 0 is in use (ErrInUse), because a second manager over
//     live regions hands out ids already in use (Agrona issue #293).
//     Recover is for an owner restarting over regions left by a previous
//     owner that has gone: it rebuilds the high-water mark, the free list
//     and the next registration id from the metadata, and hands back the
//     counters still allocated. The Manager itself is safe for concurrent
//     use: Allocate and Counter.Close take its mutex. Allocation is cold.
//   - A Counter's value operations take no lock and allocate nothing: Get,
//     Add and Set from any number of goroutines (and processes);
//     AddSingleWriter and ProposeMax only from the counter's single writer. Word exposes the value as a *atomic.Int64
//     for packages that keep a bare word (idle.Controllable, a runner's
//     live statistics, mailbox statistics). A Counter must not be used after
//     Close: its id may belong to another counter by then.
//   - Any number of Readers, in any process, never writing. Record and
//     Value are safe for concurrent use; ForEachRecord uses the Reader's
//     scratch space, so one iteration at a time per Reader.
//
// # Allocation, free, reuse
//
// Ids are handed out densely from 0 (a high-water mark) so that a scan can
// stop at the first unused record. Closing a Counter marks its record
// RECLAIMED, zeroes its key and sets its free-for-reuse deadline to now + Config.FreeToReuseTimeout
// (epoch ms from Config.Clock); its value, label and registration id stay.
// Allocate reuses the freed id whose deadline has passed first, resetting its
// value record (registration id, owner id, reference id, value to 0), and
// otherwise takes the next never-used id; with neither, ErrFull. Each
// allocation gets a registration id one higher than the manager's previous
// one (from 1; Recover continues after the highest found), so a reader that
// remembered (id, registration id) notices when the slot is reused.
//
// # Memory ordering
//
// Every word is accessed with sync/atomic (internal/atomicbuf), including
// the key and label bytes, which are copied as 4-byte atomic words: readers
// race with the manager by design, and the race detector sees no data race.
// Allocate writes the record, then release-stores the label length, the
// registration id and last the state ALLOCATED: a reader that loads
// ALLOCATED sees a complete record. A free release-stores RECLAIMED first.
// Reuse stores the deadline notFreeToReuse and registration id 0 before any
// byte of the record changes. A Reader copies a record between two loads of
// its state, deadline and registration id and retries (a bounded number of
// times, then skips the record) if any changed or if a reclaimed record's
// deadline is notFreeToReuse (a free or reuse in progress), so it never
// delivers a label or key torn by a free or a reuse. The ordering argument
// is the seqlock's: the manager's stores become visible in program order
// (x86-TSO for the plain-MOV release stores on amd64, sequential consistency
// elsewhere) and the reader's loads are performed in program order. Records
// written by a foreign manager with registration id 0 throughout are
// protected only by their state and deadline.
//
// # Shared memory
//
// Readers bounds-check everything: a state other than UNUSED, ALLOCATED or
// RECLAIMED, or a label length outside 0..380, is ErrCorrupt,
// never a panic, and every call does work bounded by MaxCounterID. Ids
// passed in are checked against 0..MaxCounterID (ErrArgument).
//
// # Allocation
//
// Counter.Get, Set, Add, AddSingleWriter, ProposeMax and Word, and the
// Reader's Value and ForEachRecord do not allocate; Reader.Record copies
// the key and label it returns.
package counters
