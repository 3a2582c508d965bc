package main

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunDeliversEveryGreeting(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var out bytes.Buffer
	require.Equal(t, 0, run(ctx, &out), out.String())
	require.Contains(t, out.String(), "greeter  duty cycles")
	require.Contains(t, out.String(), "tally    duty cycles")
	require.Regexp(t, `greetings sent [1-9][0-9]*, received [1-9][0-9]*, out of order 0`, out.String())
}
