package ipc

import (
	"os"
	"time"

	"github.com/dutyrt/duty/internal/procinfo"
)

// What layers built on the file layer (ipc/publication) need of it beyond
// Create, Open and the File accessors: the identity the layer records for
// a process, its owner's liveness on a hot path, and Open's poll interval.
// Thin wrappers around what the file layer itself uses.

// SelfProcess returns this process's identity as the file layer records an
// owner's in the header: its pid and its start time (clock ticks since
// boot, /proc/self/stat field 22; 0 where /proc cannot be read), so that a
// reused pid is not mistaken for it. A layer that records its own
// participants (a publication's subscribers) stores the same pair.
func SelfProcess() (pid int, start uint64) {
	return os.Getpid(), selfStartTime()
}

// LoadHeartbeat returns the owner's last heartbeat (ms since the Unix
// epoch), or HeartbeatClosed once the owner closed the file: one atomic
// load, for hot paths (a reader that polls for its writer's death).
// HeartbeatMillis is the checked form. LoadHeartbeat takes no reference and
// no Guard: the caller must hold a reference (one it has not released),
// and on a file truncated under the mapping the load faults as a ring's
// hot path does (see the package documentation, Faults).
func (f *File) LoadHeartbeat() int64 { return f.heartbeat.Load() }

// OwnerGone reports whether the file's owner is provably finished with it
// at nowMillis (ms since the Unix epoch): it closed the file
// (HeartbeatClosed), or its heartbeat is older than the header's liveness
// timeout (or further than that in the future) and no process with its
// pid and start time runs: Liveness's OwnerClosed or OwnerDead. While the heartbeat
// is fresh it costs one atomic load and returns false; otherwise it reads
// the process table (/proc), which a caller that polls it rate-limits. As
// LoadHeartbeat, it takes no reference and no Guard.
func (f *File) OwnerGone(nowMillis int64) bool {
	hb := f.heartbeat.Load()
	if hb == HeartbeatClosed {
		return true
	}
	if age, timeout := nowMillis-hb, f.hdr.livenessTimeout; age <= timeout && age >= -timeout {
		return false
	}
	return !procinfo.Running(int(f.hdr.ownerPID), uint64(f.hdr.ownerStartTime))
}

// PollInterval returns the poll interval opts set (WithPollInterval), else
// DefaultPollInterval: the pace at which Open waits for a file that is not
// ready, for a layer that then waits, bounded by the same options, for
// contents of its own in the file (a publication's metadata).
func PollInterval(opts ...Option) time.Duration {
	return newConfig(opts).pollInterval
}
