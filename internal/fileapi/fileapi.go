// Package fileapi is the part of package ipc's file layer that the layers
// built on it inside ipc (ipc/publication) use and an application does not:
// the generic Create and Open of a file of any kind, the section count, the
// owner's heartbeat word and liveness on a hot path, and this process's
// identity as the file layer records an owner's.
//
// Package ipc installs its functions when it is initialised (before any
// package that imports it runs); Get returns them typed with ipc's own
// types, so a caller writes fileapi.Get[ipc.File, ipc.Option]() once and
// keeps the result.
package fileapi

import (
	"context"
	"time"
)

// HeartbeatClosed is the heartbeat word of a file whose owner closed it
// (no clock reads it: a heartbeat is milliseconds since the Unix epoch;
// docs/layouts.md, the file header's heartbeat word).
const HeartbeatClosed int64 = -1

// Funcs are the file layer's functions over F (ipc.File) and O (ipc.Option).
type Funcs[F, O any] struct {
	// Create creates dir/name as a file of kind with sections of the given
	// lengths (ipc's Create).
	Create func(dir, name string, kind int32, sections []int, opts ...O) (*F, error)
	// Open opens the file at path, of any kind (ipc's Open).
	Open func(ctx context.Context, path string, opts ...O) (*F, error)
	// SectionCount returns the number of sections.
	SectionCount func(f *F) int
	// LivenessTimeout returns the owner liveness timeout in the header.
	LivenessTimeout func(f *F) time.Duration
	// LoadHeartbeat returns the owner's last heartbeat (ms since the Unix
	// epoch), or HeartbeatClosed: one atomic load, for hot paths. It takes
	// no reference and no guard: the caller holds a reference.
	LoadHeartbeat func(f *F) int64
	// HeartbeatMillis is LoadHeartbeat with a reference and a guard taken.
	HeartbeatMillis func(f *F) (int64, error)
	// OwnerGone reports whether the owner closed the file, or its heartbeat
	// is stale and no process with its pid and start time runs. While the
	// heartbeat is fresh it is one atomic load; otherwise it reads the
	// process table, which a caller that polls it rate-limits.
	OwnerGone func(f *F, nowMillis int64) bool
	// OwnerExited reports whether the owner's process has provably
	// finished with the file, whatever its heartbeat: nobody holds the
	// file's lock (the owner holds it until it closes the file; the kernel
	// drops it when the owner dies) and no process with its pid and start
	// time runs. While the owner holds its lock it is one failing
	// flock(2), without allocation; a caller that polls it rate-limits it.
	// Never true in the owner's own File.
	OwnerExited func(f *F) bool
	// Refs returns the number of references held on the mapping (0 once
	// unmapped).
	Refs func(f *F) int64
	// PollInterval returns the pace at which Open waits for a file that is
	// not ready, as opts set it.
	PollInterval func(opts ...O) time.Duration
	// SelfProcess returns this process's identity as the file layer
	// records an owner's: its pid and its start time (0 where the platform
	// cannot tell), so that a reused pid is not mistaken for it.
	SelfProcess func() (pid int, start uint64)
}

var installed any

// Install is package ipc's: it records its functions.
func Install[F, O any](f Funcs[F, O]) { installed = f }

// Get returns the functions package ipc installed.
func Get[F, O any]() Funcs[F, O] { return installed.(Funcs[F, O]) }
