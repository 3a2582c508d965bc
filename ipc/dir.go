package ipc

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/dutyrt/duty/mailbox"
)

// tempPrefix starts the name of a file Create is building before it links
// it to its final name. Names with this prefix are refused by Create and
// recognised by Cleanup.
const tempPrefix = ".duty-creating-"

// maxNameLength leaves room in a 255-byte directory entry for the
// temporary name (prefix, pid and a random suffix).
const maxNameLength = 200

// DefaultDir returns the directory duty files go in when the caller has no
// preference: /dev/shm/duty-<uid> where /dev/shm is a directory (a tmpfs on
// Linux: memory, not disk), else <os.TempDir()>/duty-<uid>. It does not
// create it; Create does (mode 0700) when it is missing.
func DefaultDir() string {
	base := os.TempDir()
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		base = "/dev/shm"
	}
	return filepath.Join(base, "duty-"+strconv.Itoa(os.Getuid()))
}

// validateName reports ErrArgument unless name can be a duty file's name in a
// directory: not empty, at most 200 bytes, no path separator or NUL, not
// "." or "..", and not starting with the temporary prefix Create uses.
func validateName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("%w: %q", errName, name)
	case len(name) > maxNameLength:
		return fmt.Errorf("%w: %d bytes, at most %d", errName, len(name), maxNameLength)
	case strings.ContainsAny(name, "/\x00") || strings.ContainsRune(name, filepath.Separator):
		return fmt.Errorf("%w: %q contains a path separator or NUL", errName, name)
	case strings.HasPrefix(name, tempPrefix):
		return fmt.Errorf("%w: %q uses the reserved prefix %q", errName, name, tempPrefix)
	}
	return nil
}

// Dir is the mailbox files of a directory, opened by name as a sender
// (OpenMailbox with its options) for a message.Registry. A name that
// cannot be a file's name (validateName) is refused.
func Dir(path string, opts ...Option) MailboxDir {
	return MailboxDir{path: path, opts: opts}
}

// MailboxDir is what Dir returns.
type MailboxDir struct {
	path string
	opts []Option
}

// OpenMailbox opens the mailbox file called name in the directory as a
// sender; the Closer releases it, and its Stale method tells a
// message.Registry when the mailbox no longer reaches a consumer by that
// name (MailboxFile's stale: the consumer's process is gone or closed the
// file, or the name now names another file), so that it opens the name
// again.
func (d MailboxDir) OpenMailbox(ctx context.Context, name string) (*mailbox.Mailbox, io.Closer, error) {
	if err := validateName(name); err != nil {
		return nil, nil, err
	}
	mb, mf, err := OpenMailbox(ctx, filepath.Join(d.path, name), d.opts...)
	if err != nil {
		return nil, nil, err
	}
	return mb, dirMailbox{mf}, nil
}

// dirMailbox is a mailbox file a MailboxDir opened: its Close, and Stale
// for a message.Registry.
type dirMailbox struct{ *MailboxFile }

// Stale is MailboxFile's stale.
func (d dirMailbox) Stale() bool { return d.MailboxFile.stale() }
