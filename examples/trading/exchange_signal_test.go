package main

import (
	"context"
	"io"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

// TestExchangeProcessDrainBoundedAfterSignal: the exchange process (-role
// exchange) on SIGINT closes exchange.in and gives up after -drain. Here its
// output mailbox is full (the consumer, this test, is alive but not
// draining), so the agent cannot finish by itself: the process must still
// exit. (Its wait loop used to re-arm the drain timeout on every pass of
// the cancelled context, spinning a CPU and never exiting.) The 20 s bound
// is a hang guard for -drain 1s, not a speed requirement.
func TestExchangeProcessDrainBoundedAfterSignal(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dir := t.TempDir()
	var resp []*mailbox.Mailbox
	for _, name := range []string{fileStrategyResp, fileRiskResp} {
		m, f, err := ipc.CreateMailbox(dir, name, mailbox.Config{Name: name, Capacity: 1024})
		require.NoError(t, err)
		defer f.Close()
		resp = append(resp, m)
	}
	xcmd, xsc, xerr := demo(t, ctx, "-role", "exchange", "-dir", dir, "-instruments", "1", "-drain", "1s")
	defer xcmd.Process.Kill()
	in, inFile, err := ipc.OpenMailbox(ctx, filepath.Join(dir, fileExchangeIn), ipc.WithWaitForFile())
	require.NoError(t, err)
	defer inFile.Close()

	send := func(m *msg.NewOrder) {
		for {
			err := msg.NewOrders.Send(in, m)
			if err == nil {
				return
			}
			require.ErrorIs(t, err, mailbox.ErrBackPressured)
			time.Sleep(time.Millisecond)
		}
	}
	// 100 resting orders: 100 New reports, far more than 1 KiB of strategy.resp.
	for i := range 100 {
		send(&msg.NewOrder{OrderID: uint64(i + 1), Instrument: 0, Side: msg.Buy, TimeInForce: msg.Limit, Price: 100, Qty: 1})
		if i%10 == 0 {
			for _, m := range resp {
				require.NoError(t, m.Heartbeat())
			}
		}
	}
	// Stay alive (heartbeat) but never drain.
	hbDone := make(chan struct{})
	hbStop := make(chan struct{})
	go func() {
		defer close(hbDone)
		tk := time.NewTicker(100 * time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-hbStop:
				return
			case <-tk.C:
				for _, m := range resp {
					_ = m.Heartbeat()
				}
			}
		}
	}()
	defer func() { close(hbStop); <-hbDone }()
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, xcmd.Process.Signal(syscall.SIGINT))

	exited := make(chan struct{})
	go func() {
		for xsc.Scan() {
		}
		_ = xcmd.Wait()
		close(exited)
	}()
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		_ = xcmd.Process.Kill()
		<-exited
		t.Fatalf("the exchange process did not exit within 20s of SIGINT with -drain 1s; stderr: %s", xerr)
	}
}

// TestOrderRateFlagBound: flags the run cannot honour are usage errors:
// -order-rate above risk's 1e9 limit (it used to fail deep inside fx), and
// more instruments than maxInstruments (each book is preallocated: 65536
// asked for ~24 GB).
func TestOrderRateFlagBound(t *testing.T) {
	_, err := parseFlags([]string{"-order-rate", "2000000000"}, io.Discard)
	require.ErrorIs(t, err, errUsage)
	_, err = parseFlags([]string{"-instruments", "65536"}, io.Discard)
	require.ErrorIs(t, err, errUsage)
	_, err = parseFlags([]string{"-instruments", "1024", "-order-rate", "1000000000"}, io.Discard)
	require.NoError(t, err)
}
