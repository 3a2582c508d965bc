package natsbridge

import (
	"encoding/binary"
	"math"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

func BenchmarkBatchEncode32B(b *testing.B) {
	bt, _ := newBatch(DefaultBatchBytes)
	payload := make([]byte, 32)
	b.SetBytes(32)
	b.ReportAllocs()
	for b.Loop() {
		if bt.Append(1, payload) == errBatchFull {
			bt.Seal(1, 1, 1)
			bt.Reset()
		}
	}
}

func BenchmarkReaderDecode32B(b *testing.B) {
	bt, _ := newBatch(DefaultBatchBytes)
	payload := make([]byte, 32)
	for bt.Append(1, payload) == nil {
	}
	frame := bt.Seal(1, 1, 1)
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

// BenchmarkCoreBridgeLatency: one 32-byte message every latencyGap (a
// moderate rate) through the bridge in core mode, sent by an agent in one
// Composite with the outbound bridge (an application agent and its bridge
// sharing a thread), received by an agent on a runner of its own; both
// runners park at most benchMaxPark on benchTimerSlack, and GOMAXPROCS leaves
// the NATS client's goroutines Ps of their own. Reports end-to-end latency
// percentiles (clock reading before the send to after the drain).
// cmd/dutybench's WNL measures the same against the naive use.
func BenchmarkCoreBridgeLatency(b *testing.B) {
	benchLatency(b, true, false)
}

// BenchmarkJetStreamBridgeLatency is BenchmarkCoreBridgeLatency in
// JetStream mode (file store), the inbound bridge in one Composite with
// the receiving agent.
func BenchmarkJetStreamBridgeLatency(b *testing.B) {
	benchLatency(b, true, true)
}

// BenchmarkCoreBridgeLatencySeparate is the same with the outbound bridge
// on a runner of its own, the sender on the benchmark's goroutine.
func BenchmarkCoreBridgeLatencySeparate(b *testing.B) {
	benchLatency(b, false, false)
}

// latencySender sends one message with its send time when due.
type latencySender struct {
	mb   *mailbox.Mailbox
	n, i int
	next int64
	p    [32]byte
}

func (s *latencySender) RoleName() string { return "latency-sender" }
func (s *latencySender) OnStart() error   { return nil }
func (s *latencySender) OnClose() error   { return nil }
func (s *latencySender) DoWork() (int, error) {
	now := clock.System.Nanos()
	if s.i == s.n || now < s.next {
		return 0, nil
	}
	binary.LittleEndian.PutUint64(s.p[:], uint64(now))
	if err := s.mb.Send(1, s.p[:]); err != nil {
		return 0, err
	}
	s.i++
	s.next = max(s.next+int64(latencyGap), now)
	return 1, nil
}

// latencyReceiver records each message's latency.
type latencyReceiver struct {
	mb  *mailbox.Mailbox
	h   *hdrhistogram.Histogram
	got atomic.Int64
	rec mailbox.Handler
}

func (r *latencyReceiver) RoleName() string { return "latency-receiver" }
func (r *latencyReceiver) OnStart() error   { return nil }
func (r *latencyReceiver) OnClose() error   { return nil }
func (r *latencyReceiver) DoWork() (int, error) {
	n, err := r.mb.Drain(r.rec, 1024)
	if n > 0 {
		r.got.Add(int64(n))
	}
	return n, err
}

// The latency benchmarks' pace and their runners' idling.
const (
	latencyGap      = 50 * time.Microsecond // between two messages
	benchMaxPark    = 20 * time.Microsecond // the runners' longest park
	benchTimerSlack = time.Microsecond      // the runners' threads' timer slack
)

func benchRunner(b *testing.B, a agent.Agent) *runner.Runner {
	st, err := idle.NewBackoff(idle.BackoffConfig{MaxSpins: 10, MaxYields: 5, MinPark: time.Microsecond, MaxPark: benchMaxPark})
	require.NoError(b, err)
	r, err := runner.New(a, runner.WithIdle(st), runner.WithTimerSlack(benchTimerSlack))
	require.NoError(b, err)
	require.NoError(b, r.Start())
	return r
}

func benchLatency(b *testing.B, shared, js bool) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), runtime.NumCPU()+3)))
	opts, cfg := server.Options{}, Config{}
	if js {
		opts = jsServerOptions(b)
	}
	s := runServer(b, opts)
	src, dst := newMailboxMax(b, 1<<16, 1024), newMailbox(b, 1<<20)
	if cfg = testConfig(s, "latency"); js {
		cfg = jsConfig(s, "latency")
	}
	in, err := NewInbound(ctx(b), cfg, dst)
	require.NoError(b, err)
	out, err := NewOutbound(ctx(b), cfg, src)
	require.NoError(b, err)

	recv := &latencyReceiver{mb: dst, h: hdrhistogram.New(1, int64(time.Second), 3)}
	recv.rec = func(m *mailbox.Message) mailbox.Action {
		sent := int64(binary.LittleEndian.Uint64(m.Payload()))
		_ = recv.h.RecordValue(clock.System.Nanos() - sent)
		return mailbox.Continue
	}
	receiving, err := agent.NewComposite(in, recv) // in's DoWork pulls in JetStream mode; OnClose closes it
	require.NoError(b, err)
	rr := benchRunner(b, receiving)
	snd := &latencySender{mb: src, n: b.N, next: math.MaxInt64}
	var sending agent.Agent = out
	if shared {
		c, err := agent.NewComposite(snd, out)
		require.NoError(b, err)
		sending = c
	}
	b.ResetTimer()
	snd.next = clock.System.Nanos() // before the runner starts: no race
	rs := benchRunner(b, sending)
	if !shared {
		for snd.i < snd.n {
			if n, err := snd.DoWork(); n == 0 && err == nil {
				time.Sleep(time.Duration(snd.next - clock.System.Nanos()))
			} else {
				require.NoError(b, err)
			}
		}
	}
	for deadline := time.Now().Add(10 * time.Second); recv.got.Load()+in.Stats().Dropped < int64(b.N) && time.Now().Before(deadline); {
		time.Sleep(100 * time.Microsecond)
	}
	b.StopTimer()
	require.NoError(b, rs.Close())
	require.NoError(b, rr.Close())
	b.ReportMetric(float64(recv.h.ValueAtQuantile(50))/1e3, "p50-µs")
	b.ReportMetric(float64(recv.h.ValueAtQuantile(99))/1e3, "p99-µs")
	b.ReportMetric(float64(recv.h.Max())/1e3, "max-µs")
}
