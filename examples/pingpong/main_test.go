package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// TestMain doubles as the pong process of the cross-process test:
// crossProcess starts os.Executable() (this test binary) with -role pong.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "-role" {
		if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "pong:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func runFor(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // hang guard
	defer cancel()
	var out bytes.Buffer
	require.NoError(t, run(ctx, args, &out))
	return out.String()
}

func TestInProcess(t *testing.T) {
	out := runFor(t, "-n", "2000", "-idle", "backoff")
	require.Contains(t, out, "in-process round trips: 2000")
	require.Regexp(t, `p50 +[1-9][0-9]* ns`, out)
}

func TestCrossProcess(t *testing.T) {
	out := runFor(t, "-n", "2000", "-idle", "backoff", "-ipc")
	require.Contains(t, out, "cross-process round trips: 2000")
}

func TestBadFlags(t *testing.T) {
	require.Error(t, run(context.Background(), []string{"-idle", "nonsense"}, &bytes.Buffer{}))
	require.Error(t, run(context.Background(), []string{"-role", "nobody"}, &bytes.Buffer{}))
}
