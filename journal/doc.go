// Package journal is duty's durable log: a sequence of fixed-size,
// preallocated, memory-mapped segment files in one directory, appended to
// by one writer and read by any number of Tailers, in this process or
// others, each at its own position. It records the messages a system
// received, so that a restart loses nothing committed and a replay
// reproduces a run. The design follows RocketMQ's commit log (segments
// named by position, an end-of-segment marker, reference-counted
// mappings), with CRC-checked records and explicit flush policies.
// docs/journal.md has the byte layouts, the durability table, the recovery
// rules and the failure table.
//
// # Writing
//
//	j, err := journal.Open(dir, journal.Options{Flush: journal.FlushPeriodic})
//	c, err := j.Claim(streamID, typeID, n) // a slot of n body bytes in the mapping
//	encode(c.Body())                          // fill it in place: zero copy
//	err = j.Commit()                        // CRC, then the length word (release)
//	f, err := runner.New(j.Flusher())       // an agent: flush policy, next segment, pre-faulting,
//	f.Start()                               // indexes, retention, on a thread of its own
//	f.Close(); j.Close()                    // flush, checkpoint, unlock, unmap
//
// On a hot path, claim through a Stream handle (Journal.Stream): it holds
// the stream's sequence counter, so a claim looks nothing up, and its
// ClaimAt takes the record's timestamp from the caller (a duty cycle's
// cached time) instead of reading the clock per record.
//
// One writer per directory: Open takes an exclusive flock on
// dir/journal.lock (ErrLocked for a second writer, in any process; the
// kernel drops it when the writer dies). The writer's methods (Claim,
// Commit, Abort, Append, Stream, Close) belong to one goroutine at a
// time, and so do the Stream handles. Claim and Commit allocate nothing. A record never spans segments:
// one that does not fit closes the segment with an end-of-segment marker
// and goes to the next, which is put in place (complete, made under a
// temporary name, then renamed; a Flusher makes it ahead of time) before
// the marker is written.
//
// # Reading
//
// NewTailer returns a Tailer at the oldest record; SeekPosition,
// SeekSequence (through the stream's index) and SeekTime move it. Next
// returns the next record, its Body aliasing the mapping (valid until the
// Tailer's next call), or ok == false at the live tail. A Tailer is used by one goroutine at a
// time; Tailers of one Journal run concurrently with each other, the
// writer and a Flusher. A Tailer checks the CRC of every record that came
// from disk: in a read-only journal all of them; in the writer's, those
// before the log's end at Open. The records this process's writer
// committed since are trusted (they never left its memory through a
// crash), which spares the live tail a pass over every record.
//
// Ordering: Commit stores the record's bytes, then its length word with a
// release store (internal/atomicbuf); Next loads the length word with an
// acquire load and reads the record only when it is non-zero. Bytes past the end
// of the log are zero (recovery and Abort zero what they discard), so a
// zero length word always means "nothing committed here yet". The same
// holds across processes: a reader opened with Options.ReadOnly maps the
// segments read-only and follows the writer's tail through the same words.
//
// # Mappings
//
// Segments are reference counted: the journal's table holds each, and a
// reader holds the one it reads. The last release unmaps. Close waits up
// to Options.CloseGrace for holders, then revokes their mappings (the
// pages become anonymous zero pages): a holder's next Next returns
// ErrReleased, and a Body it still has reads zeros. Nothing faults.
//
// # Durability and recovery
//
// Options.Flush chooses when committed records are synced (msync MS_SYNC
// of their pages): FlushOS, FlushPeriodic (every FlushBytes or
// FlushInterval, from a Flusher agent) or FlushEveryCommit. Flush syncs on
// demand; Close always does. Under FlushEveryCommit a record is published
// before its sync: a failed sync is ErrNotDurable, for a record that is
// committed all the same and must not be appended again. A checkpoint file records a flushed position;
// Open scans from there, verifying CRCs, cuts a torn tail (zeroing it),
// and reports what it did in Recovery. A corrupt record with valid records
// after it is an error naming its position (an error matching
// ErrCorrupt and duty.ErrCorrupt), unless Options.Recovery says to skip it
// (counted) or truncate there.
//
// # Stream indexes
//
// Per stream, a file of fixed-size entries (position, length, type) finds
// the Nth record of the stream with one read (Lookup, SeekSequence). The
// Flusher keeps the indexes up to date behind the appender; a writer's
// Open rebuilds them from the log when they are missing, behind or
// disagree with it.
//
// # Retention
//
// ApplyRetention (run by the Flusher when a rule is set) deletes whole
// segments, oldest first, by age or total size, never the one being
// written nor one a registered reader has yet to read; past
// Options.HardLimitBytes it deletes those too, counted, and their readers
// get ErrBehindRetention from their next Next.
//
// Every Tailer, in the writer's process or a read-only one, registers in
// the journal's reader registry (the "readers" file: a slot per reader
// with its pid, the process's start time, its position and a name), so
// the writer sees readers of every process. Next publishes its position
// with a release store (no allocation, no system call). A slot is freed
// by Tailer.Close and reclaimed by whoever finds its owner dead: no
// process with that pid, a zombie, or a process with that pid that
// started at another time (a reused pid); a live owner's slot never is.
// Retention publishes its cut in the registry (a proposal, a second scan,
// the floor) before it removes a file, and a reader stores its position
// before it checks the proposal, so a reader registering or seeking back
// meanwhile is never cut under. docs/journal.md, "Reader registry" has
// the layout and the rules.
//
// # Record and replay
//
// Package journal/replay has the agents: its Recorder records a
// mailbox's messages into the journal (and passes them on); its Replayer
// sends a journal's records back into a mailbox or any other Sink, as
// fast as it takes them or at the recorded pace. A multipart message is
// one record flagged multipart (AppendParts), which a Replayer sends back
// as the same parts (Record.Parts). Package journal/pubrecord does the
// same for IPC publications.
//
// # Tools
//
// The writer publishes its positions and counts in a status file, which
// the Flusher keeps current; cmd/dutystat describes a journal from its
// files (segments, that status, the indexes, the registered readers)
// without locking or writing anything, and cmd/dutyjournal lists and
// prints its records as a read-only reader.
//
// Nothing here starts a goroutine.
package journal
