// Package journalfile is the files of package journal, apart from what
// the journal does with them: the layouts (segment header, record,
// end-of-segment marker and padding, checkpoint, stream index, status
// file, reader registry) with their encoders and checks; segment files
// (made complete under a temporary name, mapped, reference counted,
// revoked); the checkpoint's atomic replacement; the stream index files
// (batched entries, the position file, trimming behind retention); the
// writer's status file; the reader registry's claim, free, reclaim and
// liveness protocol; and Inspect, the read-only view of a journal's
// directory that the operators' tools (cmd/dutystat) use.
//
// docs/journal.md, "Layout" and "Reader registry", is the reference; the
// journal's package documentation states the contract users see. The
// sentinel errors here are package journal's (journal.ErrCorrupt is
// ErrCorrupt).
package journalfile
