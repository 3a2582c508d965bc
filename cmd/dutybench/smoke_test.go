package main

import (
	"bytes"
	"encoding/json"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/internal/buildtags"
)

// smokeN is small enough for -race on a busy two-core machine.
const smokeN = 20_000

// smokePlacements are the placements the smoke tests run every variant in.
func smokePlacements() map[string]placement {
	return map[string]placement{
		"goroutines": {},
		"locked":     {lock: true},
		"pinned":     {lock: true, cpus: firstCPUs(2)},
	}
}

func smokeConfig(w *workload, n int, place placement) *runConfig {
	cfg := &runConfig{n: n, place: place, timeout: 2 * time.Minute, corruptAt: -1}
	if w.kind == kindLatency {
		cfg.lat = make([]int64, n)
	}
	return cfg
}

func TestSmokeEveryVariant(t *testing.T) {
	for pname, place := range smokePlacements() {
		for _, w := range registry {
			for _, v := range w.variants {
				if v.goroutines && place.lock {
					continue // runs as plain goroutines whatever the flags (runWorkload)
				}
				t.Run(pname+"/"+w.name+"/"+v.name, func(t *testing.T) {
					cfg := smokeConfig(w, smokeN, place)
					elapsed, err := v.run(cfg)
					require.NoError(t, err)
					require.Greater(t, elapsed, time.Duration(0)) // a hang is cfg.timeout's, not a timed assertion's
					mps := float64(smokeN) / elapsed.Seconds() / 1e6
					require.False(t, math.IsInf(mps, 0) || math.IsNaN(mps))
					if w.kind == kindLatency {
						for i, l := range cfg.lat {
							require.Greater(t, l, int64(0), "round trip %d", i)
						}
						m := latencySummary(cfg.lat)
						require.LessOrEqual(t, m[metricP50], m[metricP99])
						require.LessOrEqual(t, m[metricP999], m[metricMax])
					}
				})
			}
		}
	}
}

func TestSmokeBatchShortLastClaim(t *testing.T) {
	w1 := findWorkload("w1")
	// n not a multiple of 16: the last claim is short.
	for _, oneToOne := range []bool{false, true} {
		for _, appendEach := range []bool{false, true} {
			_, err := batch16(ringKind(oneToOne), appendEach, false)(smokeConfig(w1, smokeN+5, placement{lock: true}))
			require.NoError(t, err)
			_, err = batch16(ringKind(oneToOne), appendEach, false)(smokeConfig(w1, smokeN+5, placement{}))
			require.NoError(t, err)
		}
	}
}

func TestSelectVariantsExtra(t *testing.T) {
	w1, w3 := findWorkload("w1"), findWorkload("w3")
	names := func(vs []variant) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.name)
		}
		return out
	}
	require.Equal(t, []string{"chan", "onetoone-write", "manytoone-write", "manytoone-claim", "batch16", "mailbox", "mailbox-typed"}, names(selectVariants(w1, nil, false)),
		"the standard variants, baseline first; extras only on request")
	require.Equal(t, []string{"chan", "onetoone-runner", "onetoone-runner-notiming"},
		names(selectVariants(w3, map[string]bool{"onetoone-runner-notiming": true, "chan": true, "onetoone-runner": true}, false)))
}

func TestSmokeOddCounts(t *testing.T) {
	for _, w := range registry {
		for _, v := range w.variants {
			_, err := v.run(smokeConfig(w, 1001, placement{}))
			require.NoError(t, err, "%s/%s", w.name, v.name)
		}
	}
}

// TestCorruptSequenceFails proves the checker of every variant fails the
// run when one message carries a wrong sequence number.
func TestCorruptSequenceFails(t *testing.T) {
	for _, w := range registry {
		for _, v := range w.variants {
			t.Run(w.name+"/"+v.name, func(t *testing.T) {
				cfg := smokeConfig(w, 5000, placement{lock: true})
				cfg.corruptAt = 1234
				_, err := v.run(cfg)
				require.ErrorIs(t, err, errPayload)
				require.ErrorContains(t, err, "sequence 1235, want 1234")
			})
		}
	}
}

func TestCheckerRejects(t *testing.T) {
	c := newChecker(2)
	var p [payloadLen]byte
	putPayload(p[:], 0, 1)
	c.check(msgTypeID, p[:])
	require.NoError(t, c.err)
	putPayload(p[:], 0, 2) // unknown producer
	c.check(msgTypeID, p[:])
	require.ErrorIs(t, c.err, errPayload)
	require.ErrorContains(t, c.err, "producer id 2")

	c.reset()
	putPayload(p[:], 0, 0)
	c.check(2, p[:]) // wrong type
	require.ErrorContains(t, c.err, "type 2")

	c.reset()
	c.check(msgTypeID, p[:31]) // wrong length
	require.ErrorIs(t, c.err, errPayload)

	c.reset()
	c.check(msgTypeID, p[:])
	require.ErrorContains(t, c.finish([]int{2, 0}), "producer 0: 1 messages in sequence, want 2", "a lost message")
	require.NoError(t, c.finish([]int{1, 0}))
}

// TestZeroAllocsPerMessage runs every variant with n and 10n messages: the
// process's allocation count may differ only by a constant (goroutines,
// rings, timers), not by anything that grows with the message count.
func TestZeroAllocsPerMessage(t *testing.T) {
	if testing.Short() {
		t.Skip("long")
	}
	if buildtags.Race {
		t.Skip("the race detector allocates, and runs this for minutes: make allocs runs it without")
	}
	mallocs := func(w *workload, v variant, n int) uint64 {
		cfg := smokeConfig(w, n, placement{lock: true})
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, err := v.run(cfg)
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		return after.Mallocs - before.Mallocs
	}
	for _, w := range registry {
		for _, v := range w.variants {
			t.Run(w.name+"/"+v.name, func(t *testing.T) {
				if v.allocates {
					t.Skip("allocates per message outside duty (variant.allocates)")
				}
				mallocs(w, v, 1000) // first run: one-time allocations
				small := mallocs(w, v, 2_000)
				large := mallocs(w, v, 20_000)
				t.Logf("allocations: %d for 2k messages, %d for 20k", small, large)
				// 18,000 more messages (one allocation per message would be
				// that many more); allow a little slack for runtime internals
				// (timers, a thread or two).
				require.Less(t, int64(large)-int64(small), int64(100), "%d vs %d allocations", small, large)
			})
		}
	}
}

func TestRunJSONInProcess(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run([]string{"-n", "4000", "-reps", "2", "-warmup", "1", "-json"}, &out, &errOut)
	require.NoError(t, err, errOut.String())
	var r Report
	dec := json.NewDecoder(&out)
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&r))
	require.Len(t, r.Workloads, len(registry))
	for i, w := range registry {
		wr := r.Workloads[i]
		require.Equal(t, w.name, wr.Name)
		require.Equal(t, w.unit(), wr.Unit)
		vs := selectVariants(w, nil, true)
		require.Len(t, wr.Variants, len(vs))
		total := 0.0
		for j, v := range wr.Variants {
			require.Equal(t, vs[j].name, v.Name)
			for phase, m := range v.Phases {
				require.Contains(t, phaseOrder, phase)
				total += m[metricN]
			}
		}
		require.Equal(t, float64(2*len(vs)), total, "every timed repetition lands in one phase")
		for _, ratio := range wr.Ratios {
			require.Equal(t, w.variants[0].name, ratio.Baseline)
			require.Greater(t, ratio.Ratio, 0.0)
		}
	}
}

func TestRunTablesAndErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"-w", "w1", "-n", "3000", "-reps", "1", "-warmup", "0", "-variants", "chan,batch16"}, &out, &errOut))
	require.Contains(t, out.String(), "batch16")
	require.Contains(t, errOut.String(), "w1 batch16")
	require.ErrorIs(t, run([]string{"-w", "nope"}, &out, &errOut), errUnknownWorkload)
}
