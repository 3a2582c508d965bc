package publication

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/ipc"
)

// TestNilContext: Open and OpenSubscription with a nil context are
// ipc.ErrArgument, never a panic, for a file that exists and for one they
// would wait for.
func TestNilContext(t *testing.T) {
	p := newTestPublication(t, 4096)
	var nilCtx context.Context
	for _, path := range []string{p.File().Path(), filepath.Join(filepath.Dir(p.File().Path()), "missing")} {
		opts := []Option{WithFileOptions(ipc.WithWaitForFile())}
		_, err := Open(nilCtx, path, opts...)
		require.ErrorIs(t, err, ipc.ErrArgument, path)
		_, err = OpenSubscription(nilCtx, path, opts...)
		require.ErrorIs(t, err, ipc.ErrArgument, path)
	}
}
