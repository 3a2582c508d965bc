package main

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// kind says what a workload measures.
type kind int

const (
	kindThroughput kind = iota // Mmsg/s per repetition, higher is better
	kindLatency                // ns per round trip, percentiles per repetition
)

// Units, as in the report (docs/workloads.md, "JSON shape").
const (
	unitMmsgs = "Mmsg/s"
	unitNs    = "ns"
)

// workload is one of the standard workloads (docs/benchmarks.md,
// "Workloads and rules"). Adding a workload is adding one
// of these to registry; adding a variant is appending to its variants (the
// first is the baseline).
type workload struct {
	name        string
	kind        kind
	defaultN    int // messages (throughput) or round trips (latency)
	defaultReps int
	variants    []variant
}

func (w *workload) unit() string {
	if w.kind == kindLatency {
		return unitNs
	}
	return unitMmsgs
}

// variant is one way of running a workload. run performs one repetition of
// cfg.n messages (or round trips), from the start barrier to the consumer's
// last message, and returns the elapsed time; a latency variant also fills
// cfg.lat[:cfg.n] with one round trip time (ns) per entry. A payload
// mismatch is an error wrapping errPayload.
type variant struct {
	name string
	run  func(cfg *runConfig) (time.Duration, error)
	// goroutines: the variant blocks (Go channels) rather than spins, and
	// runs as plain goroutines whatever -lock and -pin say (the extra
	// variant chan-locked does not): a goroutine locked to its thread that blocks on a channel
	// turns every wake-up into a futex hand-off between OS threads, which
	// would make the baseline a straw man (docs/benchmarks.md).
	goroutines bool
	// extra variants are not among the standard variant names: they run only
	// when named in -variants, to compare a design choice in the same run
	// (docs/benchmarks.md).
	extra bool
	// allocates: the variant allocates per message in code that is not
	// duty's (the NATS client and server of WN and WNL allocate per NATS
	// message); TestZeroAllocsPerMessage skips it.
	allocates bool
}

// runConfig is what a variant needs for one repetition.
type runConfig struct {
	n       int
	place   placement
	lat     []int64       // latency workloads: at least n entries, preallocated
	timeout time.Duration // hang guard for one repetition
	// corruptAt, if >= 0, makes producer 0 send a wrong sequence number in
	// its message number corruptAt: the checker must fail the run. Tests
	// only.
	corruptAt int
}

// registry lists the workloads in the order they run by default.
var registry = []*workload{w1, w2, w3}

var errUnknownWorkload = errors.New("dutybench: unknown workload")

// selectWorkloads parses a comma-separated list of workload names ("" or
// "all" selects every registered workload) and returns them in the order
// given, without duplicates.
func selectWorkloads(list string) ([]*workload, error) {
	list = strings.TrimSpace(list)
	if list == "" || list == "all" {
		return registry, nil
	}
	var out []*workload
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if name == "" || seen[name] {
			continue
		}
		w := findWorkload(name)
		if w == nil {
			return nil, fmt.Errorf("%w %q (known: %s)", errUnknownWorkload, name, knownWorkloads())
		}
		seen[name] = true
		out = append(out, w)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty list", errUnknownWorkload)
	}
	return out, nil
}

func findWorkload(name string) *workload {
	for _, w := range registry {
		if w.name == name {
			return w
		}
	}
	return nil
}

func knownWorkloads() string {
	names := make([]string, len(registry))
	for i, w := range registry {
		names[i] = w.name
	}
	return strings.Join(names, ",")
}

var errUnknownVariant = errors.New("dutybench: unknown variant")

// selectVariants returns w's variants named in filter, or with no filter
// all but the extra ones, in the workload's order.
func selectVariants(w *workload, filter map[string]bool) []variant {
	var out []variant
	for _, v := range w.variants {
		if (len(filter) == 0 && !v.extra) || filter[v.name] {
			out = append(out, v)
		}
	}
	return out
}
