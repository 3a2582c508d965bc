package ipc

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestNilArguments: a nil function to Guard and a nil context to every
// opener are ErrArgument, never a panic; for an opener both with a file
// that exists and with one it would wait for.
func TestNilArguments(t *testing.T) {
	dir := testDir(t)
	r, err := CreateRing(dir, "ring", 1024)
	require.NoError(t, err)
	defer r.Close()
	require.ErrorIs(t, r.File.Guard(nil), ErrArgument)

	var nilCtx context.Context
	for _, path := range []string{r.File.Path(), filepath.Join(dir, "missing")} {
		opts := []Option{WithWaitForFile()}
		_, err = OpenReadOnly(nilCtx, path, opts...)
		require.ErrorIs(t, err, ErrArgument, path)
		_, err = OpenRing(nilCtx, path, opts...)
		require.ErrorIs(t, err, ErrArgument, path)
		_, _, err = OpenMailbox(nilCtx, path, opts...)
		require.ErrorIs(t, err, ErrArgument, path)
		_, err = OpenCounters(nilCtx, path, opts...)
		require.ErrorIs(t, err, ErrArgument, path)
		_, err = OpenErrorLog(nilCtx, path, opts...)
		require.ErrorIs(t, err, ErrArgument, path)
		_, err = OpenHistograms(nilCtx, path, opts...)
		require.ErrorIs(t, err, ErrArgument, path)
	}
}
