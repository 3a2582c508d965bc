package message

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

// AddressLength is the most bytes of a mailbox name an Address holds.
const AddressLength = 32

// Address names the mailbox a reply goes to, for a Registry to resolve. It
// is a fixed-size field (the name's bytes, zero-padded), so a Fixed
// message can carry it: a request carries its sender's address, and the
// receiver replies to it.
type Address [AddressLength]byte

// ErrAddress reports a name that cannot be an Address (empty, longer than
// AddressLength, or holding a zero byte).
var ErrAddress = errors.New("message: bad address")

// ErrUnknownAddress reports an address the Registry cannot resolve.
var ErrUnknownAddress = errors.New("message: unknown address")

// AddressOf returns the address of the mailbox called name.
func AddressOf(name string) (Address, error) {
	var a Address
	if name == "" || len(name) > AddressLength || bytes.IndexByte([]byte(name), 0) >= 0 {
		return a, fmt.Errorf("%w: %q (1 to %d bytes, no zero byte)", ErrAddress, name, AddressLength)
	}
	copy(a[:], name)
	return a, nil
}

// String returns the name.
func (a Address) String() string {
	if i := bytes.IndexByte(a[:], 0); i >= 0 {
		return string(a[:i])
	}
	return string(a[:])
}

// IsZero reports whether a names nothing.
func (a Address) IsZero() bool { return a == Address{} }

// Registry resolves addresses to mailboxes: those registered in this
// process, and, when it has a directory, the mailbox files there, which
// it opens as a sender (ipc.OpenMailbox) the first time they are looked
// up and keeps open until Close. Lookups of a known address take no lock
// and allocate nothing; a Registry is safe for concurrent use.
type Registry struct {
	dir   string
	mu    sync.Mutex // serialises changes to known and opens
	known atomic.Pointer[map[Address]*mailbox.Mailbox]
	files map[Address]*ipc.MailboxFile
	opts  []ipc.Option
}

// NewRegistry returns a registry that resolves names registered with
// Register and, if dir is not "", mailbox files in dir, opened with opts.
func NewRegistry(dir string, opts ...ipc.Option) *Registry {
	r := &Registry{dir: dir, opts: opts}
	r.known.Store(&map[Address]*mailbox.Mailbox{})
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
	r.add(a, mb)
	return a, nil
}

// add publishes a copy of the map with a added; r.mu is held.
func (r *Registry) add(a Address, mb *mailbox.Mailbox) {
	cur := *r.known.Load()
	next := make(map[Address]*mailbox.Mailbox, len(cur)+1)
	for k, v := range cur {
		next[k] = v
	}
	next[a] = mb
	r.known.Store(&next)
}

// Lookup returns the mailbox at a. An address neither registered nor
// (with a directory) the name of a mailbox file there is an error
// wrapping ErrUnknownAddress; opening a file may wait for it to be ready,
// up to ctx (see ipc.OpenMailbox).
func (r *Registry) Lookup(ctx context.Context, a Address) (*mailbox.Mailbox, error) {
	if mb, ok := (*r.known.Load())[a]; ok {
		return mb, nil
	}
	return r.open(ctx, a)
}

func (r *Registry) open(ctx context.Context, a Address) (*mailbox.Mailbox, error) {
	if r.dir == "" || a.IsZero() {
		return nil, fmt.Errorf("%w: %q", ErrUnknownAddress, a)
	}
	name := a.String()
	if err := ipc.ValidateName(name); err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrUnknownAddress, name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if mb, ok := (*r.known.Load())[a]; ok {
		return mb, nil
	}
	mb, mf, err := ipc.OpenMailbox(ctx, filepath.Join(r.dir, name), r.opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrUnknownAddress, name, err)
	}
	if r.files == nil {
		r.files = make(map[Address]*ipc.MailboxFile)
	}
	r.files[a] = mf
	r.add(a, mb)
	return mb, nil
}

// Close closes the mailbox files the registry opened and forgets their
// addresses (a later Lookup opens them again); a mailbox looked up before
// is unusable afterwards (mailbox.ErrClosed). Registered mailboxes are
// left alone.
func (r *Registry) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	next := make(map[Address]*mailbox.Mailbox)
	for a, mb := range *r.known.Load() {
		if _, ok := r.files[a]; !ok {
			next[a] = mb
		}
	}
	r.known.Store(&next)
	var errs []error
	for _, mf := range r.files {
		errs = append(errs, mf.Close())
	}
	r.files = nil
	return errors.Join(errs...)
}
