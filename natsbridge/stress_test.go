package natsbridge

import (
	"encoding/binary"
	"sync"
	"testing"
	"time"

	"github.com/dutyrt/duty/counters"
	"github.com/dutyrt/duty/mailbox"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/stretchr/testify/require"
)

// Several goroutines send into the outbound mailbox at once (each with its
// own Sender, its messages numbered); in JetStream mode every message
// arrives exactly once and each producer's messages in its order.
func TestJetStreamConcurrentProducersExactlyOnceInOrder(t *testing.T) {
	s := runServer(t, jsServerOptions(t))
	src, dst := newMailboxMax(t, 1<<14, 512), newMailbox(t, 1<<16)
	cfg := jsConfig(s, "stress")
	cfg.BatchBytes = 4096
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)

	const producers = 4
	per := 1500 * soak()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for p := range producers {
		wg.Go(func() {
			snd := src.NewSender()
			var b [12]byte
			for i := 0; i < per; {
				binary.LittleEndian.PutUint32(b[0:], uint32(p))
				binary.LittleEndian.PutUint64(b[4:], uint64(i))
				var err error
				if i%3 == 0 {
					err = snd.SendParts(int32(10+p), b[:4], b[4:])
				} else {
					err = snd.Send(int32(10+p), b[:])
				}
				switch err {
				case nil:
					i++
				case mailbox.ErrBackPressured:
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Microsecond): // leave the CPUs to the bridge
					}
				default:
					t.Error(err)
					return
				}
			}
		})
	}
	var next [producers]int
	total := 0
	c := doerFunc(func() (int, error) {
		return dst.Drain(func(m *mailbox.Message) mailbox.Action {
			b := make([]byte, 0, 12)
			for _, part := range m.Parts() {
				b = append(b, part...)
			}
			p := int(binary.LittleEndian.Uint32(b))
			i := int(binary.LittleEndian.Uint64(b[4:]))
			require.Equal(t, int32(10+p), m.TypeID())
			require.Equal(t, next[p], i, "producer %d: lost, duplicated or reordered", p)
			require.Equal(t, i%3 == 0, m.NumParts() == 2)
			next[p]++
			total++
			return mailbox.Continue
		}, 1<<20)
	})
	func() {
		defer close(stop)
		pump(t, func() bool { return total == producers*per }, out, in, c)
	}()
	wg.Wait()
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())
	require.Equal(t, int64(producers*per), in.Stats().Delivered)
}

// With a counters manager, the statistics are counters labelled with the
// bridge's name, and Stats keeps the last values after OnClose frees them.
func TestCounters(t *testing.T) {
	s := runServer(t, server.Options{})
	meta, vals, err := counters.NewRegions(32)
	require.NoError(t, err)
	m, err := counters.NewManager(meta, vals, counters.Config{})
	require.NoError(t, err)
	src, dst := newMailbox(t, 1<<16), newMailbox(t, 1<<16)
	cfg := testConfig(s, "counted")
	cfg.Counters = m
	in, err := NewInbound(ctx(t), cfg, dst)
	require.NoError(t, err)
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	require.Equal(t, 2*int(numStats), 32-availableCounters(t, m))

	f := &feeder{mb: src, upTo: 100}
	c := &checker{t: t, mb: dst}
	pump(t, func() bool { return c.next == 100 }, f, out, in, c)

	values := map[string]int64{}
	require.NoError(t, m.Reader().ForEachRecord(func(rec counters.Record) bool {
		typeID, label, v := rec.TypeID, string(rec.Label), rec.Value
		require.Equal(t, counterTypeID, typeID)
		values[label] = v
		return true
	}))
	require.Equal(t, int64(100), values["natsbridge-batched: counted out"])
	require.Equal(t, int64(100), values["natsbridge-delivered: counted in"])
	require.Equal(t, out.Stats().Published, values["natsbridge-published: counted out"])
	require.NoError(t, out.OnClose())
	require.NoError(t, in.OnClose())
	require.Equal(t, 32, availableCounters(t, m), "freed")
	require.Equal(t, int64(100), in.Stats().Delivered, "kept after close")
}

// The outbound duty cycle in core mode allocates nothing: drain, append,
// seal and the client's publish.
func TestOutboundCoreDoWorkAllocFree(t *testing.T) {
	s := runServer(t, server.Options{})
	src := newMailbox(t, 1<<16)
	cfg := testConfig(s, "allocs")
	cfg.FlushInterval = 1 // every cycle publishes what it drained
	out, err := NewOutbound(ctx(t), cfg, src)
	require.NoError(t, err)
	defer func() { require.NoError(t, out.OnClose()) }()
	payload := make([]byte, 32)
	allocs := testing.AllocsPerRun(200, func() {
		for range 10 {
			if err := src.Send(3, payload); err != nil {
				panic(err)
			}
		}
		if _, err := out.DoWork(); err != nil {
			panic(err)
		}
	})
	require.Zero(t, allocs)
	require.Positive(t, out.Stats().Published)
}

// availableCounters counts the ids m can allocate now: all but the
// allocated ones (m reuses freed ids at once).
func availableCounters(t *testing.T, m *counters.Manager) int {
	t.Helper()
	n := m.Reader().MaxCounterID() + 1
	require.NoError(t, m.Reader().ForEachRecord(func(counters.Record) bool { n--; return true }))
	return n
}
