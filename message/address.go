package message

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/mailbox"
)

// addressLength is the most bytes of a mailbox name an Address holds.
const addressLength = 32

// Address names the mailbox a reply goes to, for a Registry to resolve. It
// is a fixed-size field (the name's bytes, zero-padded), so a Fixed
// message can carry it: a request carries its sender's address, and the
// receiver replies to it.
type Address [addressLength]byte

// ErrAddress reports a name that cannot be an Address (empty, longer than
// 32 bytes, or holding a zero byte).
var ErrAddress = errors.New("message: bad address")

// ErrUnknownAddress reports an address the Registry cannot resolve.
var ErrUnknownAddress = errors.New("message: unknown address")

// AddressOf returns the address of the mailbox called name.
func AddressOf(name string) (Address, error) {
	var a Address
	if name == "" || len(name) > addressLength || bytes.IndexByte([]byte(name), 0) >= 0 {
		return a, fmt.Errorf("%w: %q (1 to %d bytes, no zero byte)", ErrAddress, name, addressLength)
	}
	copy(a[:], name)
	return a, nil
}

// String returns the name. The zero Address names nothing.
func (a Address) String() string {
	if i := bytes.IndexByte(a[:], 0); i >= 0 {
		return string(a[:i])
	}
	return string(a[:])
}

// A Directory opens, by name, mailboxes that live beyond this process, for
// a Registry: ipc.Dir is the mailbox files of a directory. OpenMailbox
// returns a sender of the mailbox and what releases it, or an error.
type Directory interface {
	OpenMailbox(ctx context.Context, name string) (*mailbox.Mailbox, io.Closer, error)
}

// Registry resolves addresses to mailboxes: those registered in this
// process, and, when it has a Directory, the mailboxes there, which it
// opens as a sender the first time they are looked up and keeps open
// until Close. A mailbox it opened that has gone stale (its Closer has a
// Stale method, as ipc's does, that reports true: the consumer's process
// is gone, or the name now names another mailbox, a restarted consumer's)
// is opened again at the next Lookup; the stale one stays open, for the
// senders that still hold it, until Close. Lookups of a known address take
// no lock and allocate nothing; a Registry is safe for concurrent use.
type Registry struct {
	dir     Directory
	mu      sync.Mutex // serialises changes to known, files, retired and restarting
	known   atomic.Pointer[map[Address]entry]
	files   map[Address]io.Closer
	retired []io.Closer // stale mailboxes' closers, closed by Close
	// restarting holds the addresses whose mailbox went stale and has not
	// been opened again: a Lookup with a deadline waits for their
	// consumer's restart (open).
	restarting map[Address]bool
}

// entry is a known address: its mailbox and, for a mailbox the Directory
// opened, what tells whether it is stale.
type entry struct {
	mb    *mailbox.Mailbox
	stale staler // nil: registered, or a Closer without Stale
}

// staler is what a Directory's Closer may also be: Stale reports that the
// mailbox no longer reaches the consumer its name names. Lookup asks it
// every time, so it must be cheap.
type staler interface{ Stale() bool }

// NewRegistry returns a registry that resolves names registered with
// Register and, if dir is not nil, the mailboxes dir opens by name
// (message.NewRegistry(ipc.Dir(path)) for the mailbox files in path).
func NewRegistry(dir Directory) *Registry {
	r := &Registry{dir: dir}
	r.known.Store(&map[Address]entry{})
	return r
}

// Register makes mb reachable at the address of name and returns it. A
// name registered already is refused (ErrAddress).
func (r *Registry) Register(name string, mb *mailbox.Mailbox) (Address, error) {
	a, err := AddressOf(name)
	if err != nil {
		return a, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := (*r.known.Load())[a]; ok {
		return a, fmt.Errorf("%w: %q is registered already", ErrAddress, name)
	}
	r.publish(a, entry{mb: mb})
	return a, nil
}

// publish publishes a copy of the map with a set to e (removed when e.mb
// is nil); r.mu is held.
func (r *Registry) publish(a Address, e entry) {
	cur := *r.known.Load()
	next := make(map[Address]entry, len(cur)+1)
	for k, v := range cur {
		next[k] = v
	}
	if e.mb == nil {
		delete(next, a)
	} else {
		next[a] = e
	}
	r.known.Store(&next)
}

// Lookup returns the mailbox at a. An address neither registered nor
// (with a Directory) the name of a mailbox there is an error wrapping
// ErrUnknownAddress and the Directory's error (mailbox.ErrConsumerDead for
// a mailbox whose consumer is gone); opening one may wait up to ctx (see
// ipc.Dir).
//
// A Lookup that races the restart of a consumer it had resolved (the old
// mailbox stale, the new one not created yet: the Directory finds the
// dead consumer's mailbox, or none) waits for it, trying again in short
// sleeps, while ctx has a deadline that has not passed; it then fails as
// above, with the last attempt's error. Without a deadline it fails at
// once, as does a Lookup of a name it never resolved.
func (r *Registry) Lookup(ctx context.Context, a Address) (*mailbox.Mailbox, error) {
	if e, ok := (*r.known.Load())[a]; ok && (e.stale == nil || !e.stale.Stale()) {
		return e.mb, nil
	}
	return r.open(ctx, a)
}

// How a Lookup waits for a restarting consumer: sleeps from restartPollMin
// doubling to restartPollMax, until its context's deadline.
const (
	restartPollMin = 100 * time.Microsecond
	restartPollMax = 20 * time.Millisecond
)

func (r *Registry) open(ctx context.Context, a Address) (*mailbox.Mailbox, error) {
	if r.dir == nil || a == (Address{}) {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAddress, a)
	}
	_, hasDeadline := ctx.Deadline()
	for pause := restartPollMin; ; pause = min(2*pause, restartPollMax) {
		mb, restarting, err := r.tryOpen(ctx, a)
		if err == nil || !restarting || !hasDeadline || !restartable(err) {
			return mb, err
		}
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// restartable reports an error of a Directory that a consumer's restart
// ends: its mailbox is the dead consumer's, or there is none yet (a
// consumer replacing a dead one's file removes it, then creates its own).
func restartable(err error) bool {
	return errors.Is(err, mailbox.ErrConsumerDead) || errors.Is(err, fs.ErrNotExist)
}

// tryOpen is one attempt of open: it retires a's stale mailbox, if any,
// and opens a in the Directory. restarting reports an address whose
// mailbox went stale and has not been opened again since.
func (r *Registry) tryOpen(ctx context.Context, a Address) (mb *mailbox.Mailbox, restarting bool, err error) {
	name := a.String()
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := (*r.known.Load())[a]; ok {
		if e.stale == nil || !e.stale.Stale() {
			return e.mb, false, nil
		}
		// Senders may still hold the stale mailbox: it stays mapped
		// (its sends report the dead consumer) until Close.
		r.retired = append(r.retired, r.files[a])
		delete(r.files, a)
		r.publish(a, entry{})
		if r.restarting == nil {
			r.restarting = make(map[Address]bool)
		}
		r.restarting[a] = true
	}
	mb, mf, err := r.dir.OpenMailbox(ctx, name)
	if err != nil {
		return nil, r.restarting[a], fmt.Errorf("%w: %q: %w", ErrUnknownAddress, name, err)
	}
	if r.files == nil {
		r.files = make(map[Address]io.Closer)
	}
	r.files[a] = mf
	delete(r.restarting, a)
	st, _ := mf.(staler)
	r.publish(a, entry{mb: mb, stale: st})
	return mb, false, nil
}

// Close closes the mailboxes the registry's Directory opened (stale ones
// included) and forgets their addresses (a later Lookup opens them again);
// a mailbox looked up before is unusable afterwards (mailbox.ErrClosed).
// Registered mailboxes are left alone.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := make(map[Address]entry)
	for a, e := range *r.known.Load() {
		if _, ok := r.files[a]; !ok {
			next[a] = e
		}
	}
	r.known.Store(&next)
	var errs []error
	for _, mf := range r.files {
		errs = append(errs, mf.Close())
	}
	for _, mf := range r.retired {
		errs = append(errs, mf.Close())
	}
	r.files, r.retired, r.restarting = nil, nil, nil
	return errors.Join(errs...)
}
