package ipc

import (
	"context"
	"github.com/dutyrt/duty/internal/ipcfile"
	"os"
	"time"

	"github.com/dutyrt/duty/internal/fileapi"
	"github.com/dutyrt/duty/internal/procinfo"
)

// What layers built on the file layer inside ipc (ipc/publication) use of
// it beyond the exported API, installed in internal/fileapi.
func init() {
	fileapi.Install(fileapi.Funcs[File, Option]{
		Create: func(dir, name string, kind int32, sections []int, opts ...Option) (*File, error) {
			return create(dir, name, Kind(kind), sections, opts...)
		},
		Open: func(ctx context.Context, path string, opts ...Option) (*File, error) {
			return open(ctx, path, opts...)
		},
		SectionCount:    (*File).sectionCount,
		LivenessTimeout: (*File).livenessTimeout,
		LoadHeartbeat:   (*File).loadHeartbeat,
		HeartbeatMillis: (*File).heartbeatMillis,
		OwnerGone:       (*File).ownerGone,
		OwnerExited:     (*File).ownerExited,
		Refs:            (*File).refCount,
		PollInterval:    func(opts ...Option) time.Duration { return newConfig(opts).pollInterval },
		SelfProcess:     func() (int, uint64) { return os.Getpid(), selfStartTime() },
	})
}

// loadHeartbeat returns the owner's last heartbeat (ms since the Unix
// epoch), or ipcfile.HeartbeatClosed once the owner closed the file: one atomic
// load, for hot paths (a reader that polls for its writer's death).
// heartbeatMillis is the checked form. It takes no reference and no Guard:
// the caller must hold a reference (one it has not released), and on a
// file truncated under the mapping the load faults as a ring's hot path
// does (see the package documentation, Faults).
func (f *File) loadHeartbeat() int64 { return f.heartbeat.Load() }

// ownerGone reports whether the file's owner is provably finished with it
// at nowMillis (ms since the Unix epoch): it closed the file
// (ipcfile.HeartbeatClosed), or its heartbeat is older than the header's liveness
// timeout (or further than that in the future) and no process with its
// pid and start time runs: Liveness's OwnerClosed or OwnerDead. While the
// heartbeat is fresh it costs one atomic load and returns false; otherwise
// it reads the process table (/proc), which a caller that polls it
// rate-limits. As loadHeartbeat, it takes no reference and no Guard.
func (f *File) ownerGone(nowMillis int64) bool {
	hb := f.heartbeat.Load()
	if hb == ipcfile.HeartbeatClosed {
		return true
	}
	if age, timeout := nowMillis-hb, f.hdr.LivenessTimeout; age <= timeout && age >= -timeout {
		return false
	}
	return !procinfo.Running(int(f.hdr.OwnerPID), uint64(f.hdr.OwnerStartTime))
}
