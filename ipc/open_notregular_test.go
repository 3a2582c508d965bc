package ipc

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// openByPath is every entry point that opens a duty file by its path, each
// closing what it opened on success.
var openByPath = map[string]func(ctx context.Context, path string) error{
	"Open":         func(ctx context.Context, p string) error { return closeIf(open(ctx, p)) },
	"OpenReadOnly": func(ctx context.Context, p string) error { return closeIf(OpenReadOnly(ctx, p)) },
	"OpenRing":     func(ctx context.Context, p string) error { return closeIf(OpenRing(ctx, p)) },
	"OpenMailbox": func(ctx context.Context, p string) error {
		_, f, err := OpenMailbox(ctx, p)
		return closeIf(f, err)
	},
	"OpenCounters": func(ctx context.Context, p string) error { return closeIf(OpenCounters(ctx, p)) },
	"OpenErrorLog": func(ctx context.Context, p string) error { return closeIf(OpenErrorLog(ctx, p)) },
}

func closeIf[T io.Closer](c T, err error) error {
	if err == nil {
		return errors.Join(errors.New("opened"), c.Close())
	}
	return err
}

// TestOpenNotARegularFile: every entry point that opens by path, given a
// directory (which open(2) refuses for writing with a bare EISDIR), a
// symbolic link to one, or a socket (ENXIO), fails at once with
// ErrNotDutyFile and the path, even when told to wait for the file.
func TestOpenNotARegularFile(t *testing.T) {
	dir := testDir(t)
	sub := filepath.Join(dir, "sub")
	require.NoError(t, os.Mkdir(sub, 0o700))
	link := filepath.Join(dir, "link-to-sub")
	require.NoError(t, os.Symlink(sub, link))
	loop := filepath.Join(dir, "loop")
	require.NoError(t, os.Symlink(loop, loop))
	paths := map[string]string{"directory": sub, "link to a directory": link, "link to itself": loop}
	if sock := filepath.Join(dir, "s"); len(sock) < 100 { // sun_path is about 104 bytes
		l, err := net.Listen("unix", sock)
		require.NoError(t, err)
		defer l.Close()
		paths["socket"] = sock
	}
	for what, path := range paths {
		t.Run(what, func(t *testing.T) {
			for name, open := range openByPath {
				t.Run(name, func(t *testing.T) {
					err := open(ctxT(t), path)
					require.ErrorIs(t, err, ErrNotDutyFile)
					require.Contains(t, err.Error(), path)
					require.False(t, errors.Is(err, ErrNotReady), "did not wait: %v", err)
				})
			}
			// Waiting for a file to appear does not make Open wait for
			// this one to become a file.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := open(ctx, path, WithWaitForFile())
			require.ErrorIs(t, err, ErrNotDutyFile)
			require.NoError(t, ctx.Err())
		})
	}
}
