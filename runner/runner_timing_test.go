package runner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/idle"
)

// cycler returns work on every cycle (busy) or never, and stops after n.
type cycler struct {
	n, done int
	busy    bool
}

func (c *cycler) RoleName() string { return "bench" }
func (c *cycler) OnStart() error   { return nil }
func (c *cycler) OnClose() error   { return nil }
func (c *cycler) DoWork() (int, error) {
	c.done++
	if c.done >= c.n {
		return 0, agent.ErrDone
	}
	if c.busy {
		return 1, nil
	}
	return 0, nil
}

var cycleCases = []struct {
	name string
	spec string
	busy bool
}{
	{"noop", "noop", false},
	{"spin", "spin", false},
	{"yield", "yield", false},
	{"backoff-busy", "backoff", true}, // work every cycle: backoff resets
	{"sleep-ns-1000", "sleep-ns:1000", false},
}

// BenchmarkDutyCycle is the overhead of one duty cycle of a no-op agent on
// a Runner (locked thread, stop flag, statistics, stall tracker, panic
// guard) under each idle strategy, next to the same agent and strategy
// driven by an Invoker on the benchmark's goroutine (the baseline: the bare
// DoWork + Idle). The -clock variants add WithCachedClock. Reproduce
// docs/runner.md and docs/clock.md with
//
//	go test -run '^$' -bench BenchmarkDutyCycle -count 5 ./runner/
func BenchmarkDutyCycle(b *testing.B) {
	for _, tc := range cycleCases {
		b.Run(tc.name+"/invoker", func(b *testing.B) {
			s, _ := idle.Parse(tc.spec)
			a := &cycler{n: b.N + 1, busy: tc.busy}
			inv, _ := agent.NewInvoker(a)
			_ = inv.Start()
			b.ResetTimer()
			for inv.IsRunning() {
				n, _ := inv.Invoke()
				s.Idle(n)
			}
		})
		for _, v := range []struct {
			suffix       string
			timed, clock bool
		}{
			{"", true, false},
			{"-untimed", false, false},
			{"-clock", true, true},
			{"-untimed-clock", false, true},
		} {
			b.Run(tc.name+"/runner"+v.suffix, func(b *testing.B) {
				s, _ := idle.Parse(tc.spec)
				a := &cycler{n: b.N, busy: tc.busy}
				opts := []Option{WithIdle(s), WithCycleTiming(v.timed)}
				if v.clock {
					opts = append(opts, WithCachedClock(new(clock.Cached)))
				}
				r, err := New(a, opts...)
				if err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				if err := r.Start(); err != nil {
					b.Fatal(err)
				}
				<-r.Done()
			})
		}
	}
}

// epoch is the origin of the timestamps pinger exchanges.
var epoch = time.Now()

// pinger sees a message (a timestamp in a shared word) and records how long
// after its writing the agent saw it.
type pinger struct {
	sent atomic.Int64 // ns since epoch when written; 0 = nothing
	seen atomic.Int64 // the last timestamp consumed
	lat  []time.Duration
}

func (p *pinger) RoleName() string { return "pinger" }
func (p *pinger) OnStart() error   { return nil }
func (p *pinger) OnClose() error   { return nil }
func (p *pinger) DoWork() (int, error) {
	s := p.sent.Load()
	if s == 0 || s == p.seen.Load() {
		return 0, nil
	}
	now := int64(time.Since(epoch))
	p.lat = append(p.lat, time.Duration(now-s))
	p.seen.Store(s)
	return 1, nil
}

// BenchmarkWakeLatency is the time from a message being written to a parked
// (or spinning) agent seeing it. Each message is written after a random
// gap of 1-3 ms, so a backoff agent has reached its deepest park. Metrics:
// p50-ns, p90-ns, p99-ns, max-ns. Reproduce docs/runner.md with
//
//	go test -run '^$' -bench BenchmarkWakeLatency -benchtime 400x -count 3 ./runner/
func BenchmarkWakeLatency(b *testing.B) {
	for _, tc := range []struct {
		name  string
		spec  string
		slack time.Duration
	}{
		{"spin", "spin", 0},
		{"backoff", "backoff", 0},
		{"backoff-slack1ns", "backoff", time.Nanosecond},
		{"sleep-ns-1000-slack1ns", "sleep-ns:1000", time.Nanosecond},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, _ := idle.Parse(tc.spec)
			p := &pinger{lat: make([]time.Duration, 0, b.N)}
			opts := []Option{WithIdle(s)}
			if tc.slack > 0 {
				opts = append(opts, WithTimerSlack(tc.slack))
			}
			r, err := New(p, opts...)
			if err != nil {
				b.Fatal(err)
			}
			if err := r.Start(); err != nil {
				b.Fatal(err)
			}
			for range b.N {
				time.Sleep(time.Millisecond + rand.N(2*time.Millisecond))
				ts := int64(time.Since(epoch))
				p.sent.Store(ts)
				for p.seen.Load() != ts {
					time.Sleep(10 * time.Microsecond)
				}
			}
			if err := r.Close(); err != nil {
				b.Fatal(err)
			}
			slices.Sort(p.lat)
			q := func(f float64) float64 { return float64(p.lat[int(f*float64(len(p.lat)-1))]) }
			b.ReportMetric(0, "ns/op")
			b.ReportMetric(q(0.5), "p50-ns")
			b.ReportMetric(q(0.9), "p90-ns")
			b.ReportMetric(q(0.99), "p99-ns")
			b.ReportMetric(q(1), "max-ns")
		})
	}
}

// BenchmarkStats is the cost of a Stats snapshot from another goroutine
// while the agent runs.
func BenchmarkStats(b *testing.B) {
	r, err := New(&cycler{n: 1 << 62}, WithIdle(idle.Sleeping(10*time.Microsecond)))
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Start(); err != nil {
		b.Fatal(err)
	}
	var sink int64
	for b.Loop() {
		sink += r.Stats().DutyCycles
	}
	_ = fmt.Sprint(sink)
	if err := r.Close(); err != nil {
		b.Fatal(err)
	}
}
