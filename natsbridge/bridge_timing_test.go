package natsbridge

import (
	"encoding/binary"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent/clock"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

func BenchmarkBatchEncode32B(b *testing.B) {
	bt, _ := NewBatch(DefaultBatchBytes)
	payload := make([]byte, 32)
	b.SetBytes(32)
	b.ReportAllocs()
	for b.Loop() {
		if bt.Append(1, payload) == ErrBatchFull {
			bt.Seal(1, 1)
			bt.Reset()
		}
	}
}

func BenchmarkReaderDecode32B(b *testing.B) {
	bt, _ := NewBatch(DefaultBatchBytes)
	payload := make([]byte, 32)
	for bt.Append(1, payload) == nil {
	}
	frame := bt.Seal(1, 1)
	var r Reader
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Reset(frame); err != nil {
			b.Fatal(err)
		}
		for r.Next() {
		}
	}
}

// BenchmarkCoreBridge32B: b.N messages of 32 bytes from one mailbox to
// another through the bridge and a loopback server (core mode), both agents
// driven on the benchmark's goroutine; compare with
// BenchmarkNaivePublish32B, one NATS message per message.
func BenchmarkCoreBridge32B(b *testing.B) {
	s := runServer(b, server.Options{})
	src, dst := newMailboxMax(b, 1<<20, 1024), newMailbox(b, 1<<22)
	cfg := testConfig(s, "bench")
	in, err := NewInbound(ctx(b), cfg, dst)
	require.NoError(b, err)
	out, err := NewOutbound(ctx(b), cfg, src)
	require.NoError(b, err)
	payload := make([]byte, 32)
	var got atomic.Int64
	stop := make(chan struct{})
	drained := make(chan struct{})
	go func() { // the receiving side's consumer, on a goroutine of its own
		defer close(drained)
		drain := func(*mailbox.Message) mailbox.Action { got.Add(1); return mailbox.Continue }
		for {
			if n, _ := dst.Drain(drain, 1<<20); n == 0 {
				select {
				case <-stop:
					return
				default:
					time.Sleep(20 * time.Microsecond)
				}
			}
		}
	}()
	b.SetBytes(32)
	b.ResetTimer()
	sent := 0
	pump(b, func() bool { return got.Load()+in.Stats().Dropped >= int64(b.N) }, doerFunc(func() (int, error) {
		k := 0
		for ; sent < b.N && src.Send(1, payload) == nil; sent++ {
			k++
		}
		return k, nil
	}), out)
	close(stop)
	<-drained
	b.StopTimer()
	require.NoError(b, out.OnClose())
	require.NoError(b, in.OnClose())
	// Core mode drops what the receiving mailbox refuses: ns/op counts
	// messages sent; %delivered says how many of them arrived.
	b.ReportMetric(100*float64(got.Load())/float64(b.N), "%delivered")
}

func BenchmarkNaivePublish32B(b *testing.B) {
	s := runServer(b, server.Options{})
	pub, err := nats.Connect(s.ClientURL())
	require.NoError(b, err)
	defer pub.Close()
	sub, err := nats.Connect(s.ClientURL())
	require.NoError(b, err)
	defer sub.Close()
	var got atomic.Int64
	done := make(chan struct{})
	n := int64(b.N)
	_, err = sub.Subscribe("naive", func(*nats.Msg) {
		if got.Add(1) == n {
			close(done)
		}
	})
	require.NoError(b, err)
	require.NoError(b, sub.Flush())
	payload := make([]byte, 32)
	b.SetBytes(32)
	b.ResetTimer()
	for range b.N {
		require.NoError(b, pub.Publish("naive", payload))
	}
	require.NoError(b, pub.Flush())
	<-done
}

// BenchmarkCoreBridgeLatency: one 32-byte message every 50 µs or more (a
// moderate rate; the sender sleeps between messages) through the bridge in core mode, the outbound agent on a runner
// thread with the backoff idle strategy, the receiving mailbox drained by a
// goroutine; reports end-to-end latency percentiles (send to drain).
func BenchmarkCoreBridgeLatency(b *testing.B) {
	benchLatency(b, 0)
}

// BenchmarkCoreBridgeLatencyFlush20us is the same with a 20 µs flush bound.
func BenchmarkCoreBridgeLatencyFlush20us(b *testing.B) {
	benchLatency(b, 20*time.Microsecond)
}

func benchLatency(b *testing.B, flush time.Duration) {
	s := runServer(b, server.Options{})
	src, dst := newMailboxMax(b, 1<<16, 1024), newMailbox(b, 1<<20)
	cfg := testConfig(s, "latency")
	cfg.FlushInterval = flush
	in, err := NewInbound(ctx(b), cfg, dst)
	require.NoError(b, err)
	defer func() { require.NoError(b, in.OnClose()) }()
	out, err := NewOutbound(ctx(b), cfg, src)
	require.NoError(b, err)
	r, err := runner.New(out, runner.WithIdle(idle.Backoff()))
	require.NoError(b, err)
	require.NoError(b, r.Start())
	defer func() { require.NoError(b, r.Close()) }()

	h := hdrhistogram.New(1, int64(time.Second), 3)
	var got atomic.Int64
	stop := make(chan struct{})
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		record := func(m *mailbox.Message) mailbox.Action {
			sent := int64(binary.LittleEndian.Uint64(m.Payload()))
			_ = h.RecordValue(clock.System.Nanos() - sent)
			got.Add(1)
			return mailbox.Continue
		}
		for {
			if n, _ := dst.Drain(record, 1024); n == 0 {
				select {
				case <-stop:
					return
				default:
					time.Sleep(10 * time.Microsecond)
				}
			}
		}
	}()
	payload := make([]byte, 32)
	b.ResetTimer()
	next := clock.System.Nanos()
	for range b.N {
		if d := next - clock.System.Nanos(); d > 0 {
			time.Sleep(time.Duration(d)) // not a spin: the machine may have two cores
		}
		binary.LittleEndian.PutUint64(payload, uint64(clock.System.Nanos()))
		for src.Send(1, payload) != nil {
		}
		next += int64(50 * time.Microsecond)
	}
	for deadline := time.Now().Add(10 * time.Second); got.Load()+in.Stats().Dropped < int64(b.N) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Microsecond)
	}
	b.StopTimer()
	close(stop)
	<-drained
	b.ReportMetric(float64(h.ValueAtQuantile(50))/1e3, "p50-µs")
	b.ReportMetric(float64(h.ValueAtQuantile(99))/1e3, "p99-µs")
	b.ReportMetric(float64(h.Max())/1e3, "max-µs")
}
