package ipc

import (
	"context"
	"errors"
	"fmt"

	"github.com/dutyrt/duty/counters"
)

// CountersFile is a KindCounters file: one section holding the metadata and
// values regions of a fixed number of counters, laid out by counters.Layout
// (metadata first, then values: Agrona's layout, as in Aeron's CnC file).
//
// The process that creates it (CreateCounters) is the owner: it alone
// allocates and frees counters, through Manager, and heartbeats the file
// (File.Heartbeat). Any other process opens it with OpenCounters, which
// maps it read-only (PROT_READ): its Reader can never write to the file, and
// an accidental store faults instead of corrupting the owner's counters.
//
// The CountersFile holds one reference to its File; Close releases it.
// Counters, their Words, the Manager and the Reader alias the mapping: none
// of them may be used after Close (when that was the last reference, the
// memory is unmapped and the access faults). Close the users of the
// counters (runners, mailboxes) first.
type CountersFile struct {
	*File
	manager  *counters.Manager // owner only
	reader   *counters.Reader
	readOnly bool
}

// CreateCounters creates dir/name (see Create, which reads opts) as a
// KindCounters file with room for n counters (1..counters.MaxCounters) and
// returns it with the owner's Manager over its fresh, zero section.
//
// cfg configures the Manager; nil means counters.DefaultFreeToReuseTimeout
// (Aeron's 1 s) and the wall clock, which is what counters read by other
// processes need: a freed id is not reused until readers holding it have
// had the time to notice. A zero Config reuses freed ids at once.
//
// The owner heartbeats the file as any owner does (File.Heartbeat), and
// a restarted owner creates a new file (WithReplaceStale replaces the old
// one once its owner is provably dead).
func CreateCounters(dir, name string, n int, cfg *counters.Config, opts ...Option) (*CountersFile, error) {
	r, err := counters.Layout(n)
	if err != nil {
		return nil, fmt.Errorf("%w: %d counters: %w", ErrArgument, n, err)
	}
	c := counters.Config{FreeToReuseTimeout: counters.DefaultFreeToReuseTimeout}
	if cfg != nil {
		c = *cfg
	}
	if c.FreeToReuseTimeout < 0 {
		return nil, fmt.Errorf("%w: free-to-reuse timeout %s (%w)", ErrArgument, c.FreeToReuseTimeout, counters.ErrArgument)
	}
	f, err := create(dir, name, KindCounters, []int{r.Length}, opts...)
	if err != nil {
		return nil, err
	}
	cf, err := wrapCounters(f, false)
	if err != nil {
		return nil, err
	}
	meta, vals, _ := counters.Split(mustSection(f))
	if cf.manager, err = counters.NewManager(meta, vals, c); err != nil {
		// A fresh file cannot hold counters: leave nothing behind.
		return nil, errors.Join(fmt.Errorf("ipc: %s: counters manager: %w", f.Path(), err), f.Remove(), f.Close())
	}
	return cf, nil
}

// OpenCounters opens the KindCounters file at path read-only (see
// OpenReadOnly, which reads opts) and returns it with a Reader over its
// counters; Manager returns nil. A file of another kind gives ErrKind, a
// section that is not n*640 bytes gives ErrCorrupt.
func OpenCounters(ctx context.Context, path string, opts ...Option) (*CountersFile, error) {
	f, err := OpenReadOnly(ctx, path, opts...)
	if err != nil {
		return nil, err
	}
	if f.Kind() != KindCounters {
		_ = f.Close()
		return nil, fmt.Errorf("%w: %s has kind %d, want %d (counters)", ErrKind, path, f.Kind(), KindCounters)
	}
	return wrapCounters(f, true)
}

// wrapCounters checks f's single section and builds the Reader over it.
// On failure it closes f.
func wrapCounters(f *File, readOnly bool) (*CountersFile, error) {
	b, err := f.Section(0)
	if err == nil {
		var meta, vals []byte
		if meta, vals, err = counters.Split(b); err == nil {
			var r *counters.Reader
			if r, err = counters.NewReader(meta, vals); err == nil {
				return &CountersFile{File: f, reader: r, readOnly: readOnly}, nil
			}
		}
		err = fmt.Errorf("%w: %s: counters section of %d bytes: %w", ErrCorrupt, f.Path(), len(b), err)
	}
	return nil, errors.Join(err, f.Close())
}

// mustSection returns section 0 of a File the caller holds a reference to.
func mustSection(f *File) []byte {
	b, _ := f.Section(0)
	return b
}

// Manager returns the owner's Manager, or nil for a file opened with
// OpenCounters.
func (c *CountersFile) Manager() *counters.Manager { return c.manager }

// Reader returns a Reader over the file's counters. Its iterations use the
// Reader's scratch space: goroutines iterating concurrently each build
// their own with NewReader.
func (c *CountersFile) Reader() *counters.Reader { return c.reader }

// newReader returns a new Reader over the file's counters, for a goroutine
// of its own.
func (c *CountersFile) newReader() (*counters.Reader, error) {
	b, err := c.File.Section(0)
	if err != nil {
		return nil, err
	}
	meta, vals, err := counters.Split(b)
	if err != nil {
		return nil, err
	}
	return counters.NewReader(meta, vals)
}

// ReadOnly reports whether the file is mapped read-only (OpenCounters).
func (c *CountersFile) isReadOnly() bool { return c.readOnly }

// OpenReadOnly is Open for processes that only look: the file is opened
// O_RDONLY and mapped PROT_READ, so a store through the File (or any slice
// of it) faults (SIGSEGV, which Guard turns into an error matching ErrFault) instead of
// corrupting the owner's data; read permission suffices. It waits and
// validates exactly as Open does, with the same options and errors. The
// File is not the owner (Heartbeat and Remove give ErrNotOwner, Close only
// releases), and structures whose readers write (a ring's consumer) cannot
// be used through it.
func OpenReadOnly(ctx context.Context, path string, opts ...Option) (*File, error) {
	return openWith(ctx, path, false, opts)
}
