// Package ipc is duty's shared-memory file layer: self-describing files in
// a directory (by default /dev/shm/duty-<uid>), mapped by several processes
// on one host, and the Agrona many-to-one rings that live in them.
//
// This file layer is what the cross-process mailbox and the IPC publication
// (package ipc/publication) build on. docs/ipc.md has the byte layout, the
// lifecycle and the failure table; internal/ipcfile is the single source of
// every offset.
//
// # Lifecycle
//
//	r, err := ipc.CreateRing(dir, "orders", n) // owner: O_EXCL, fallocate, mmap, header, version last
//	r.File.Heartbeat(time.Now().UnixMilli())   // owner, from its duty cycle, < liveness timeout apart
//	p, err := ipc.OpenRing(ctx, path)          // others: wait while not ready, validate, mmap
//	err = p.Write(typeID, payload)             // the ring's methods, on the mapping
//	p.Close(); r.Close()                       // the last close unmaps
//	ipc.Cleanup(dir)                           // removes files of dead owners only
//
// A *Ring embeds the ringbuf many-to-one ring and the *File that maps it;
// every typed file here (Ring, MailboxFile, CountersFile, ErrorLogFile,
// HistogramsFile) embeds its *File: its path, kind, owner, heartbeat,
// liveness, guard, sections and Close. OpenReadOnly opens a file of any
// kind for inspection.
//
// On this layer:
//
//   - CreateMailbox and OpenMailbox: an ordinary *mailbox.Mailbox whose
//     ring and shared words live in a file, with a *MailboxFile handle for
//     the file (the mailbox's mailbox.Host). Any number of processes send;
//     the owner drains, with the same Drain or mailbox.NewActor as on the heap,
//     which keep the file's heartbeats. Senders learn of a dead consumer by
//     its heartbeat (mailbox.ErrConsumerDead); the owner unblocks claims of
//     dead senders.
//   - CreateCounters and OpenCounters: a counters file in Agrona's layout
//     (package counters), written by its owner, read by anyone
//     (OpenReadOnly maps it PROT_READ); cmd/dutystat prints it.
//
// # Concurrency contract
//
//   - A File's methods are safe for concurrent use from any goroutine.
//     Heartbeat and Remove belong to the owner (the process that created the
//     file); Close is idempotent.
//   - A Ring follows ringbuf's contract: any number of producers in any
//     processes, one consumer (which alone calls Read and Unblock).
//   - Nothing here starts a goroutine. Open's wait is a polling loop on the
//     caller's goroutine, bounded by its context. Heartbeats are explicit
//     calls: an owner's drains keep a mailbox file's, and a Keeper (an
//     agent, on a runner) keeps those of any files a process owns.
//
// # Ownership and liveness
//
// The creator is the owner. It keeps an exclusive flock(2) on the file
// until it closes it (the kernel drops it if the process dies), and stores
// its pid, its start time (from /proc on Linux, sysctl on darwin, so a
// reused pid is not mistaken for it) and a heartbeat (epoch ms) in the
// header. Liveness reports OwnerAlive, OwnerUnconfirmed, OwnerHung,
// OwnerClosed or OwnerDead from these. A file is removed by RemoveIfStale
// or Cleanup only when nobody holds its lock and its owner is OwnerClosed
// or OwnerDead (pid gone or reused AND heartbeat stale); a file whose owner
// may be alive is never deleted or reinitialised by another process
// (ErrOwnerAlive). A create with WithReplaceStale replaces a stale file under
// the same rules. For layers that poll for their owner's death on a hot
// path, the owner is OwnerClosed or OwnerDead at the cost of one
// atomic load while the heartbeat is fresh.
//
// # Memory ordering
//
// The creator writes the magic (one atomic 8-byte store), then the header
// with plain stores, and last the layout version with sync/atomic: a reader
// that loads a non-zero version (atomically) sees the whole header.
// The heartbeat is a release store (internal/atomicbuf) read with an atomic
// load; readers only compare its value with their clock. Ring words follow
// ringbuf's rules. Other header fields never change after creation; Open
// keeps a validated copy and never re-reads them from shared memory.
//
// # Faults
//
// Files are preallocated, so a full file system fails at Create
// (syscall.ENOSPC), never with SIGBUS on first touch. A file truncated under a
// live mapping is the one case Go cannot make safe everywhere: touching a
// page past the new end raises SIGBUS. File.Guard runs a function with
// debug.SetPanicOnFault(true) and turns such a fault into an error matching
// ErrFault (and ErrTruncated when the file shrank); the
// package's own cold paths (header snapshot, Heartbeat, the owner's Close)
// use it. Ring hot paths are not guarded (it would cost a deferred call per
// operation): there, a fault kills the process with Go's "unexpected fault
// address ... fatal error: fault [signal SIGBUS ...]" (exit status 2), unless
// the caller wraps its own loop in File.Guard. Heartbeat starts with one
// fstat, which detects a truncation before the hot path touches it.
//
// # Errors
//
// Every failure is a sentinel usable with errors.Is (ErrNotDutyFile,
// ErrVersion, ErrTruncated, ErrNotReady, ErrCorrupt, ErrKind, ErrOwnerAlive,
// ErrOwnerDead, ErrNotOwner, ErrClosed, ErrFault, ErrArgument; the file
// system's own fs.ErrPermission, fs.ErrExist, fs.ErrNotExist and
// syscall.ENOSPC), wrapped with the path and the numbers involved. No header, section table
// or ring content written by another process can make this package panic,
// hang or read outside its mapping.
package ipc
