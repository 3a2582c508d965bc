package runner

import (
	"bytes"
	"log/slog"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSetMaxProcsLogsAtDebugOnly(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	t.Cleanup(func() { slog.SetDefault(old) })

	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	before := runtime.GOMAXPROCS(0)
	SetMaxProcs()
	require.Empty(t, buf.String(), "nothing at info level")
	require.GreaterOrEqual(t, runtime.GOMAXPROCS(0), 1)
	runtime.GOMAXPROCS(before)

	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	SetMaxProcs()
	require.Contains(t, buf.String(), "maxprocs")
	runtime.GOMAXPROCS(before)
}
