package ipc

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/dutyrt/duty/errlog"
)

// ErrorLogFile is a KindErrorLog file: one section holding a distinct error
// log (package errlog: Agrona's DistinctErrorLog record layout), so that
// other processes (cmd/dutystat) can read a process's errors while it runs
// and after it has died.
//
// The process that creates it (CreateErrorLog) is the owner: it alone
// records errors, through Log (errlog.Handler adapts it to a runner's error
// handler), and heartbeats the file (File.Heartbeat). Any other process
// opens it with OpenErrorLog, which maps it read-only (PROT_READ): Log
// returns nil and Read never writes.
//
// The ErrorLogFile holds one reference to its File; Close releases it. The
// Log aliases the mapping: it may not be used after Close (when that was
// the last reference, the memory is unmapped and a Record faults). Stop
// whatever records into it (runners, handlers) first.
type ErrorLogFile struct {
	*File
	log      *errlog.Log // owner only
	readOnly bool
}

// maxErrorLogLength is the longest error log section: Agrona's buffers are
// int-indexed, and a record's length is an int32.
const maxErrorLogLength = math.MaxInt32

// minErrorLogLength is the shortest error log: one record header (the
// errlog record layout in docs/layouts.md).
const minErrorLogLength = 24

// CreateErrorLog creates dir/name (see Create, which reads opts) as a
// KindErrorLog file whose section holds length bytes of error log
// (minErrorLogLength to math.MaxInt32; Aeron's default is 1 MiB), and
// returns it with the owner's Log over the fresh, zero section. The Log
// timestamps observations with the clock WithClock gives (default
// time.Now), in ms since the Unix epoch.
//
// The owner heartbeats the file as any owner does (File.Heartbeat), and
// a restarted owner creates a new file (WithReplaceStale replaces the old
// one once its owner is provably dead: read the old one first if its
// errors matter).
func CreateErrorLog(dir, name string, length int, opts ...Option) (*ErrorLogFile, error) {
	if length < minErrorLogLength || length > maxErrorLogLength {
		return nil, fmt.Errorf("%w: error log of %d bytes, want %d to %d", ErrArgument, length, minErrorLogLength, maxErrorLogLength)
	}
	f, err := create(dir, name, KindErrorLog, []int{length}, opts...)
	if err != nil {
		return nil, err
	}
	log, err := errlog.New(mustSection(f), errlog.WithClock(newConfig(opts).clock))
	if err != nil {
		// A fresh, page-aligned, zero section cannot be refused: leave
		// nothing behind if it is.
		return nil, errors.Join(fmt.Errorf("ipc: %s: error log: %w", f.Path(), err), f.Remove(), f.Close())
	}
	return &ErrorLogFile{File: f, log: log}, nil
}

// OpenErrorLog opens the KindErrorLog file at path read-only (see
// OpenReadOnly, which reads opts); Log returns nil. A file of another kind
// gives ErrKind. The records themselves are checked as they are read
// (Read): the section's contents come from another process.
func OpenErrorLog(ctx context.Context, path string, opts ...Option) (*ErrorLogFile, error) {
	f, err := OpenReadOnly(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	if f.Kind() != KindErrorLog {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s has kind %d, want %d (error log)", ErrKind, path, f.Kind(), KindErrorLog)
	}
	return &ErrorLogFile{File: f, readOnly: true}, nil
}

// Log returns the owner's Log, or nil for a file opened with OpenErrorLog.
func (e *ErrorLogFile) Log() *errlog.Log { return e.log }

// ReadOnly reports whether the file is mapped read-only (OpenErrorLog).
func (e *ErrorLogFile) isReadOnly() bool { return e.readOnly }

// Read is errlog.Read over the file's section (see it for since, the order
// and the corruption checks), under Guard: a file truncated under the
// mapping gives an error (ErrFault, ErrTruncated) instead of a SIGBUS. It
// returns ErrClosed after Close. Any number of goroutines may read at once.
func (e *ErrorLogFile) Read(since int64, fn func(errlog.Observation)) (int, error) {
	n := 0
	err := e.File.Guard(func() error {
		b, err := e.File.Section(0)
		if err != nil {
			return err
		}
		n, err = errlog.Read(b, since, fn)
		return err
	})
	return n, err
}
