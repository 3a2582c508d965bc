package ipc

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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

// ValidateName reports ErrName unless name can be a duty file's name in a
// directory: not empty, at most 200 bytes, no path separator or NUL, not
// "." or "..", and not starting with the temporary prefix Create uses.
func ValidateName(name string) error {
	switch {
	case name == "", name == ".", name == "..":
		return fmt.Errorf("%w: %q", ErrName, name)
	case len(name) > maxNameLength:
		return fmt.Errorf("%w: %d bytes, at most %d", ErrName, len(name), maxNameLength)
	case strings.ContainsAny(name, "/\x00") || strings.ContainsRune(name, filepath.Separator):
		return fmt.Errorf("%w: %q contains a path separator or NUL", ErrName, name)
	case strings.HasPrefix(name, tempPrefix):
		return fmt.Errorf("%w: %q uses the reserved prefix %q", ErrName, name, tempPrefix)
	}
	return nil
}
