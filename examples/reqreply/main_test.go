package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv("REQREPLY_SERVER_DIR"); dir != "" {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := serveProcess(ctx, dir); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(1)
		}
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

// Every mode delivers every reply, none late.
func TestEveryMode(t *testing.T) {
	const n = 5000
	want := "5000 quotes, 12502500 filled, 0 timed out\n"
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for name, run := range map[string]func(*bytes.Buffer) error{
		"in process": func(out *bytes.Buffer) error { return inProcess(ctx, n, out) },
		"fx":         func(out *bytes.Buffer) error { return withFx(ctx, n, out) },
		"two processes": func(out *bytes.Buffer) error {
			return crossProcess(ctx, n, out, func(dir string) *exec.Cmd {
				cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
				cmd.Env = append(os.Environ(), "REQREPLY_SERVER_DIR="+dir)
				return cmd
			})
		},
	} {
		t.Run(name, func(t *testing.T) {
			var out bytes.Buffer
			require.NoError(t, run(&out))
			require.Equal(t, want, out.String())
		})
	}
}
