// Package errlog is Agrona's DistinctErrorLog and ErrorLogReader over a
// caller-supplied byte slice, with Agrona's record layout bit for bit
// (layout.go): each distinct error is stored once, with an observation
// count and the times of its first and last observation, so that a storm of
// the same error neither fills the buffer nor hides the other errors, and
// the log, in a shared file (ipc.CreateErrorLog), outlives a crash and is
// read by other processes (cmd/dutystat).
//
//	log, _ := errlog.New(buf)            // buf: 8-byte aligned, zero when fresh
//	ok := log.Record(err)                // false: no room for a new record
//	h := errlog.Handler(log, nil)        // for runner.WithErrorHandler
//	n, _ := errlog.Read(buf, since, func(o errlog.Observation) { ... })
//
// # Identity of an observation
//
// Agrona calls two exceptions the same observation when they have the same
// class, message and stack trace (class, method, file and line of every
// frame) and recursively equal causes. A Go error has no stack trace and no
// single cause, so Record compares what Go has:
//
//   - The error tree, walked as errors.Is walks it (Unwrap() error and
//     Unwrap() []error, depth first, in pre-order), up to 32 errors: for
//     each, its dynamic type, its depth in the tree and its message
//     (Error(), trimmed). Two errors.New("boom") are the same; a
//     *fs.PathError and a custom type with the same text are not;
//     fmt.Errorf("a: %w", x) and fmt.Errorf("a: %v", x) are not (one wraps
//     x, the other does not).
//   - The stack carried by any error of the tree, normalised to function,
//     file and line per frame (goroutine numbers, argument values and PC
//     offsets dropped): the Stack() of an error implementing Stacker, or a
//     goroutine dump in runtime/debug.Stack format embedded in its message
//     (runner.PanicError's: the message is then compared without it). Two
//     panics with the same value at the same place in the code are the
//     same observation on any goroutine.
//   - The stack of the Record call: up to 32 return addresses, compared
//     exactly (so the same line reached by another path is another
//     observation, and two calls on one line are two places). This is
//     Agrona's throw site as far as Go can say: where the error was
//     observed, not where it was made. Handler excludes its own frame, so
//     for a runner the site is the runner's reporting path.
//
// Messages are part of the identity: an error whose message holds a value
// that changes (an id, a time) is a new observation each time, as in Agrona.
// Wrap the variable part in an error of its own type with a constant message
// if that is not wanted.
//
// # Encoded text
//
// Each record's text (UTF-8) is what a Java stack trace would show: the
// error's type and message, "\tat function(file:line)" lines for the stack
// of the Record call, then a "caused by: type: message" line for each
// error it wraps, each followed by its carried stack if it has one (see
// encode.go for an example). Only the first observation's text is kept.
// The text is valid UTF-8: a run of invalid bytes in a message becomes
// U+FFFD (the identity compares the raw message).
//
// # Who may call what
//
//   - One Log per buffer, across all processes; a Log is safe for
//     concurrent use by any number of goroutines. New never writes to the
//     buffer; over a buffer that already holds records (left by a previous
//     writer) it appends after them.
//   - Read and HasErrors, from any goroutine or process, any number at a
//     time, concurrently with the Log. They never write.
//
// # Memory ordering
//
// Record compares and, for a new error, appends under the Log's mutex: it
// copies the text, stores the count (1) and both timestamps, stores 0 in the
// length word after the record, and last release-stores the record's
// length (atomicbuf.StoreRelease32), which publishes the record: a reader
// whose atomic load of a length sees it non-zero sees the whole record
// before it and the zero after it. An existing record's count and last
// time are updated after the mutex, with atomic compare-and-swap loops: the
// count stops at MaxInt32 (Agrona's int wraps), the last time only moves
// forward. Read loads the length, count and timestamps atomically; the text
// of a published record never changes.
//
// # Shared memory
//
// Read treats the buffer as hostile: a length below the header's 24 bytes
// (other than the terminating 0) or running past the end is ErrCorrupt,
// never a panic, and the walk visits at most len(buf)/8 records. A
// misaligned buffer is an error for New and Read; HasErrors reports
// false for it.
//
// # Allocation
//
// Recording an error already in the log allocates nothing when the errors
// of its tree allocate nothing in Error() (errors.New and fmt.Errorf
// errors do not; errors.Join's does) and none carries a stack via Stacker
// and in its message at once. A new record allocates its text and its
// in-memory identity; an error too large for the room left in the log is
// refused as soon as its text outgrows that room, and the Log keeps no
// scratch buffer above 64 KiB between calls. Read allocates one string per
// delivered observation.
// The package starts no goroutines.
package errlog
