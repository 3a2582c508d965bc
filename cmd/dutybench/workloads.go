package main

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/internal/prefetch"
	"github.com/dutyrt/duty/queue"
)

type kind int

const (
	kindThroughput kind = iota // Mmsg/s per repetition, higher is better
	kindLatency                // ns per round trip, percentiles per repetition
	unitMmsgs      = "Mmsg/s"
	unitNs         = "ns"
)

// workload is one of the standard workloads (docs/workloads.md); the first
// of its variants is the baseline.
type workload struct {
	name        string
	kind        kind
	defaultN    int // messages (throughput) or round trips (latency)
	defaultReps int
	unpinned    bool // plain goroutines whatever -lock and -pin say (W2: three busy ones for two CPUs)
	variants    []variant
	// reference, if not nil, names a variant's C reference (-tags cring):
	// each figure is also reported as a ratio to it, in the same phase.
	reference func(variant string) string
}

// w1Reference is cring-batch16 for the variants of 16 records per claim,
// cring-cas (the many-to-one claim) for the other many-to-one variants and
// the mailbox, cring-write otherwise.
func w1Reference(v string) string {
	switch {
	case strings.HasPrefix(v, "batch16"):
		return "cring-batch16"
	case strings.HasPrefix(v, "manytoone"), strings.HasPrefix(v, "mailbox"):
		return "cring-cas"
	}
	return "cring-write"
}

func (w *workload) unit() string {
	if w.kind == kindLatency {
		return unitNs
	}
	return unitMmsgs
}

// variant is one way of running a workload.
type variant struct {
	name string
	run  runFunc
	// goroutines: the variant blocks (channels, sockets) and runs as plain
	// goroutines whatever -lock and -pin say: a locked thread that blocks
	// makes every wake-up a futex hand-off between threads.
	goroutines bool
	extra      bool // runs only when named in -variants
	allocates  bool // per message, outside duty: TestZeroAllocsPerMessage skips it
}

// runFunc performs one repetition of cfg.n messages (or round trips), from
// the start barrier to the last message, and returns the elapsed time; a
// latency variant also fills cfg.lat[:cfg.n] with one round trip (ns) per
// entry. A payload mismatch is an error wrapping errPayload.
//
// The factories that make one from a variant's parameters are never
// inlined (a go:noinline directive): inlined into the table, their
// closures would be compiled without inlining the calls in their own
// bodies (golang/go#81380), putting calls to putPayload, seqFor and the
// like in the timed loops.
type runFunc func(cfg *runConfig) (time.Duration, error)

type runConfig struct {
	n       int
	place   placement
	lat     []int64       // latency workloads: at least n entries, preallocated
	timeout time.Duration // hang guard for one repetition
	// corruptAt, if >= 0, makes producer 0 send a wrong sequence number in
	// its message corruptAt (tests: the checker must fail the run).
	corruptAt int
}

// corruptFor returns producer id's corruptAt: only producer 0's.
func (cfg *runConfig) corruptFor(id int) int {
	if id != 0 {
		return -1
	}
	return cfg.corruptAt
}

func std(name string, run runFunc) variant   { return variant{name: name, run: run} }
func extra(name string, run runFunc) variant { return variant{name: name, run: run, extra: true} }
func blocking(v variant) variant             { v.goroutines = true; return v }

// registry lists the workloads in the order they run by default, and
// every variant of each (docs/workloads.md, "Variant names"); those of a
// build tag come from cringVariants, zmq4Variants and protoactorVariants.
var registry = newRegistry()

func newRegistry() []*workload {
	busy := func() idle.Strategy { return idle.BusySpin() }
	pause := func() idle.Strategy { return pauseIdle() }
	backoff := func() idle.Strategy { return idle.Backoff() }
	mbSides := func(send, drain bool, s func() idle.Strategy) runFunc {
		return func(cfg *runConfig) (time.Duration, error) { return mailboxSides(cfg, send, drain, s) }
	}
	ws := []*workload{
		{name: "w1", kind: kindThroughput, defaultN: 20_000_000, defaultReps: 10, reference: w1Reference, variants: []variant{
			blocking(std("chan", chanStream(1))),
			std("onetoone-write", ringWrite(oneToOne, nil)),
			std("manytoone-write", ringWrite(manyToOne, nil)),
			std("manytoone-claim", manyToOneClaim),
			std("batch16", batch16(manyToOne, false, false)),
			std("mailbox", mbSides(true, true, nil)),
			std("mailbox-typed", mailboxTyped),
			extra("chan-locked", chanStream(1)),
			extra("batch16-onetoone", batch16(oneToOne, false, false)),
			extra("batch16-append", batch16(manyToOne, true, false)),
			extra("onetoone-write-locked", ringStream(oneToOne, 1, nil, true, lockedWrites)),
			extra("onetoone-write-pause", ringWrite(oneToOne, pause)),
			extra("manytoone-write-pause", ringWrite(manyToOne, pause)),
			extra("mailbox-pause", mbSides(true, true, pause)),
			extra("manytoone-write-spin", ringWrite(manyToOne, busy)),
			extra("mailbox-spin", mbSides(true, true, busy)),
			extra("manytoone-write-backoff", ringWrite(manyToOne, backoff)),
			extra("mailbox-backoff", mbSides(true, true, backoff)),
			extra("onetoone-write-noprefetch", without(&prefetch.Disabled, ringWrite(oneToOne, nil))),
			extra("batch16-onetoone-noprefetch", without(&prefetch.Disabled, batch16(oneToOne, false, false))),
			extra("batch16-noprefetch", without(&prefetch.Disabled, batch16(manyToOne, false, false))),
			extra("manytoone-write-noprefetch", without(&prefetch.Disabled, ringWrite(manyToOne, nil))),
			extra("manytoone-write-nodemote", without(&prefetch.NoDemote, ringWrite(manyToOne, nil))),
			extra("mailbox-nodemote", without(&prefetch.NoDemote, mbSides(true, true, nil))),
			extra("batch16-demote", batch16(manyToOne, false, true)),
			extra("queue-onetoone", queueStream(queue.NewOneToOne[[payloadLen]byte])),
			extra("queue-manytoone", queueStream(queue.NewManyToOne[[payloadLen]byte])),
			extra("queue-manytomany", queueStream(queue.NewManyToMany[[payloadLen]byte])),
			extra("mailbox-send-read", mbSides(true, false, nil)),
			extra("mailbox-write-drain", mbSides(false, true, nil)),
		}},
		{name: "w2", kind: kindThroughput, defaultN: 20_000_000, defaultReps: 10, unpinned: true, variants: []variant{
			blocking(std("chan", chanStream(2))),
			std("manytoone-spin", ringStream(manyToOne, 2, nil, true, writes(nil))),
			std("manytoone-yield", ringStream(manyToOne, 2, nil, true, writes(runtime.Gosched))),
		}},
		{name: "w3", kind: kindLatency, defaultN: 1_000_000, defaultReps: 7, reference: func(string) string { return "cring-pingpong" }, variants: []variant{
			blocking(std("chan", chanPingPong)),
			std("onetoone", oneToOnePingPong(true)),
			std("onetoone-runner", runnerPingPong(true, idle.BusySpin)),
			std("mailbox-actors", mailboxActors),
			extra("chan-locked", chanPingPong),
			extra("onetoone-runner-notiming", runnerPingPong(false, idle.BusySpin)),
			extra("onetoone-runner-noop", runnerPingPong(true, idle.NoOp)),
			extra("onetoone-readpoll", oneToOnePingPong(false)),
			extra("onetoone-noprefetch", without(&prefetch.Disabled, oneToOnePingPong(true))),
			extra("floor", floorPingPong(false)),
			extra("floor-zeronext", floorPingPong(true)),
			extra("mailbox-actors-nodemote", without(&prefetch.NoDemote, mailboxActors)),
		}},
		{name: "w4t", kind: kindThroughput, defaultN: 20_000_000, defaultReps: 10, variants: []variant{
			blocking(std("unixsocket", socketStream)),
			std("inprocess", mailboxFileStream),
			std("crossprocess", crossProcessStream),
			std("publication-2sub", publicationTwoSubscribers),
		}},
		{name: "w4l", kind: kindLatency, defaultN: 1_000_000, defaultReps: 7, variants: []variant{
			blocking(std("unixsocket", socketPingPong)),
			std("inprocess", mailboxFilePingPong),
			std("crossprocess", crossProcessPingPong),
		}},
		{name: "wj", kind: kindThroughput, defaultN: 2_000_000, defaultReps: 5, variants: journalVariants(payloadLen)},
		{name: "wjk", kind: kindThroughput, defaultN: 200_000, defaultReps: 5, variants: journalVariants(1024)},
		{name: "wjl", kind: kindLatency, defaultN: 200_000, defaultReps: 7, variants: []variant{
			std("ring", journalLatencyRing(payloadLen)),
			std("journal", journalLatency),
			extra("ring-72", journalLatencyRing(64)), // a 72-byte record, as the journal's
		}},
		{name: "wn", kind: kindThroughput, defaultN: 1_000_000, defaultReps: 5, variants: []variant{
			natsVariant("nats", natsNaive(false)),
			natsVariant("bridge", natsBridge(natsDstCapacity)),
		}},
		{name: "wnl", kind: kindLatency, defaultN: 20_000, defaultReps: 5, variants: []variant{
			natsVariant("nats", natsNaive(true)),
			natsVariant("bridge", natsBridgeLatency(true)),
			natsVariant("bridge-runner", natsBridgeLatency(false)),
		}},
		{name: "wa", kind: kindThroughput, defaultN: 5_000_000, defaultReps: 5, variants: actorVariants(false)},
		{name: "wal", kind: kindLatency, defaultN: 200_000, defaultReps: 5, variants: actorVariants(true)},
		{name: "wz", kind: kindThroughput, defaultN: 1_000_000, defaultReps: 5, variants: []variant{
			blocking(std("length-prefix", lengthPrefixStream)),
			blocking(std("zmtp", zmtpStream(true))),
			blocking(extra("zmtp-recv", zmtpStream(false))),
		}},
		{name: "wzl", kind: kindLatency, defaultN: 100_000, defaultReps: 5, variants: []variant{
			blocking(std("length-prefix", lengthPrefixPingPong)),
			blocking(std("zmtp", zmtpPingPong(true))),
			blocking(extra("zmtp-pushpull", zmtpPingPong(false))),
		}},
	}
	for _, w := range ws {
		w.variants = append(append(w.variants, cringVariants(w.name)...), zmq4Variants(w.name)...)
	}
	return ws
}

func journalVariants(size int) []variant {
	vs := []variant{
		std("bufio", bufioAppends(size, false)),
		std("memmove", memmoveAppends(size)),
		std("journal", journalAppends(size, journalTuned)),
		std("journal-replay", journalAppends(size, journalReplay)),
		extra("mmap-copy", mmapCopyAppends(size)),
		extra("bufio-record", bufioAppends(size, true)),
		extra("journal-claim", journalAppends(size, journalPlain)),
		extra("journal-noprefault", journalAppends(size, journalNoPrefault)),
	}
	if size == payloadLen { // WJ: mmap-copy of the journal's 72-byte records
		vs = append(vs, extra("mmap-copy-72", mmapCopyAppends(wjRecordHeaderLength+size)))
	}
	return vs
}

func natsVariant(name string, run runFunc) variant {
	return variant{name: name, run: run, goroutines: true, allocates: true}
}

var (
	errUnknownWorkload = errors.New("dutybench: unknown workload")
	errUnknownVariant  = errors.New("dutybench: unknown variant")
)

// selectWorkloads parses a comma-separated list of workload names ("" or
// "all": every one) and returns them in that order, without duplicates.
func selectWorkloads(list string) ([]*workload, error) {
	list = strings.TrimSpace(list)
	if list == "" || list == "all" {
		return registry, nil
	}
	var out []*workload
	for _, name := range strings.Split(list, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		w := findWorkload(name)
		if name == "" || slices.Contains(out, w) {
			continue
		}
		if w == nil {
			return nil, fmt.Errorf("%w %q (known: %s)", errUnknownWorkload, name, knownWorkloads())
		}
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

func extraNames() string {
	var names []string
	for _, w := range registry {
		for _, v := range w.variants {
			if v.extra && !slices.Contains(names, v.name) {
				names = append(names, v.name)
			}
		}
	}
	return strings.Join(names, ", ")
}

// selectVariants returns w's variants named in filter (no filter: the
// standard ones), in w's order; with limit, also their C references.
func selectVariants(w *workload, filter map[string]bool, limit bool) []variant {
	refs := map[string]bool{}
	for _, v := range w.variants {
		if limit && w.reference != nil && ((len(filter) == 0 && !v.extra) || filter[v.name]) {
			refs[w.reference(v.name)] = true
		}
	}
	var out []variant
	for _, v := range w.variants {
		if (len(filter) == 0 && !v.extra) || filter[v.name] || refs[v.name] {
			out = append(out, v)
		}
	}
	return out
}
