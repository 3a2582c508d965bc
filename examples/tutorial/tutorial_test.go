package tutorial

import (
	"context"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("TUTORIAL_ADDER_DIR"); dir != "" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		if err := Serve(ctx, dir); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

const n = 2000

// 0+1 + 1+1 + ... + (n-1)+1
const want = int64(n*(n-1)/2 + n)

func TestInProcess(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	total, err := InProcess(ctx, n)
	require.NoError(t, err)
	require.Equal(t, want, total)
}

func TestWithFx(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	total, err := WithFx(ctx, n)
	require.NoError(t, err)
	require.Equal(t, want, total)
}

func TestTwoProcesses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	adder := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	adder.Env = append(os.Environ(), "TUTORIAL_ADDER_DIR="+dir)
	adder.Stderr = os.Stderr
	total, err := Ask(ctx, dir, n, adder)
	require.NoError(t, err)
	require.Equal(t, want, total)
}
