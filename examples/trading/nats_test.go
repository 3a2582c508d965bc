package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
)

func TestNATSFlag(t *testing.T) {
	cfg, err := parseFlags([]string{"-nats"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, natsEmbedded, cfg.NATS)
	require.True(t, cfg.IPC, "-nats runs the exchange in a second process")

	cfg, err = parseFlags([]string{"-nats", "nats://h:4222", "-duration", "3s"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "nats://h:4222", cfg.NATS)
	require.Equal(t, 3*time.Second, cfg.Duration, "the flags after the URL are parsed")

	cfg, err = parseFlags([]string{"-duration", "3s", "-nats=nats://a:1,nats://b:2"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "nats://a:1,nats://b:2", cfg.NATS)

	cfg, err = parseFlags([]string{"-duration", "3s"}, io.Discard)
	require.NoError(t, err)
	require.Empty(t, cfg.NATS)
	require.False(t, cfg.IPC)

	for _, args := range [][]string{
		{"-nats", "-ipc"},  // two ways to run the exchange
		{"-nats", "stray"}, // not a URL: an unexpected argument
		{"-nats", "nats://h:1", "-nope"},
	} {
		_, err := parseFlags(args, io.Discard)
		require.ErrorIs(t, err, errUsage, "%q", args)
	}
}

// TestNATS runs the demo with -nats: the exchange process (this binary
// again) connected only through NATS, to a server the demo embeds; the
// end reconciles both sides. With a URL the demo uses that server (one
// this test runs).
func TestNATS(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	require.NoError(t, err)
	srv.Start()
	defer func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	}()
	require.True(t, srv.ReadyForConnections(10*time.Second))
	for name, mode := range map[string][]string{
		"embedded": {"-nats"},
		"url":      {"-nats", srv.ClientURL()},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			dir := t.TempDir()
			args := append(mode, "-dir", dir, "-duration", "1s", "-instruments", "4", "-rate", "30000")
			cmd, sc, stderr := demo(t, ctx, args...)
			out, code := finish(t, cmd, sc, "")
			t.Logf("%s%s", out, stderr)
			require.Equal(t, 0, code)
			requireReconciled(t, out)
			require.Contains(t, out, "; nats (exchange in a second process, mailboxes bridged through NATS);")
			require.Contains(t, stderr.String(), "nats: the exchange process is connected through")
			require.Contains(t, stderr.String(), "exchange process: ")
			require.Regexp(t, `natsbridge-in-strategy.resp: [1-9]\d* delivered, 0 dropped, 0 batches lost`, stderr.String())
			left, err := filepath.Glob(filepath.Join(dir, "*"))
			require.NoError(t, err)
			require.Equal(t, []string{filepath.Join(dir, fileSummary)}, left, "no shared mailbox files")
		})
	}
}

// TestNATSSeparateExchange starts the exchange process by hand with the
// server's URL, as a user would on another terminal, and the demo with
// -spawn=false.
func TestNATSSeparateExchange(t *testing.T) {
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true})
	require.NoError(t, err)
	srv.Start()
	defer func() {
		srv.Shutdown()
		srv.WaitForShutdown()
	}()
	require.True(t, srv.ReadyForConnections(10*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	dir := t.TempDir()
	xcmd, xsc, xerr := demo(t, ctx, "-role", "exchange", "-dir", dir, "-instruments", "3", "-nats="+srv.ClientURL())
	cmd, sc, stderr := demo(t, ctx, "-nats", srv.ClientURL(), "-spawn=false", "-dir", dir, "-duration", "1s", "-instruments", "3", "-rate", "30000")
	out, code := finish(t, cmd, sc, "")
	t.Logf("%s%s", out, stderr)
	xout, xcode := finish(t, xcmd, xsc, "")
	t.Logf("exchange process: %s%s", xout, xerr)
	require.Equal(t, 0, code)
	require.Equal(t, 0, xcode)
	requireReconciled(t, out)
	require.Contains(t, xout, "exchange process: ")
}
