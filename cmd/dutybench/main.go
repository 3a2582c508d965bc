// Command dutybench runs duty's standard workloads against their baselines
// (docs/workloads.md), interleaved, each timed repetition labelled with the
// inter-core latency phase it ran in, and reports per-phase medians and
// ratios to the baseline within a phase (docs/benchmarks.md).
//
//	go run ./cmd/dutybench [-w w1,w3,...] [-n N] [-reps R] [-warmup W] [-json] [-variants V,...]
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/dutyrt/duty/runner"
)

var processStart = time.Now() // for the progress log

func main() {
	runChildIfAsked()
	runner.SetMaxProcs()
	// W4's repetition directories: remove those of runs that died, and on
	// SIGINT or SIGTERM this run's.
	if n := sweepW4Dirs(w4Base()); n > 0 {
		fmt.Fprintf(os.Stderr, "dutybench: removed %d directories left in %s by runs that died\n", n, w4Base())
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		sig := <-sigs
		removeLiveDirs()
		fmt.Fprintf(os.Stderr, "dutybench: %v: stopped\n", sig)
		os.Exit(map[os.Signal]int{os.Interrupt: 130, syscall.SIGTERM: 143}[sig])
	}()
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0) // -h: the usage is printed, as the flag package does
		}
		fmt.Fprintln(os.Stderr, "dutybench:", strings.TrimPrefix(err.Error(), "dutybench: "))
		os.Exit(1)
	}
}

type options struct {
	workloads              []*workload
	n, reps, warmup        int // n, reps 0: each workload's default
	json, lock, pin, limit bool
	variants               map[string]bool
	timeout                time.Duration // 0: derived from n
	cpuprof                string
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("dutybench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	w := fs.String("w", "", "comma-separated workloads: "+knownWorkloads()+" (default all)")
	fs.IntVar(&o.n, "n", 0, "messages (w1, w2) or round trips (w3) per repetition (default 20000000 / 20000000 / 1000000)")
	fs.IntVar(&o.reps, "reps", 0, "timed repetitions per variant (default 10; 7 for w3)")
	fs.IntVar(&o.warmup, "warmup", 3, "full-size warm-up repetitions per variant, untimed")
	fs.BoolVar(&o.json, "json", false, "write the results as JSON to stdout instead of tables")
	fs.BoolVar(&o.lock, "lock", true, "lock each goroutine of a workload to its OS thread (w1, w3; the runner always locks)")
	fs.BoolVar(&o.pin, "pin", true, "pin the locked threads to the first two CPUs, as the probe is (needs -lock)")
	vs := fs.String("variants", "", "comma-separated variants to run, in the workload's order (default: the standard ones; extras: "+extraNames()+"; -tags cring adds the C reference's, -tags zmq4 go-zeromq/zmq4 in wz and wzl, -tags protoactor protoactor-go in wa and wal); ratios are to the first one run")
	fs.BoolVar(&o.limit, "limit", true, "with -tags cring: run W1's and W3's C references beside the variants and report each figure as a ratio to its reference too")
	fs.DurationVar(&o.timeout, "timeout", 0, "hang guard per repetition (default 2m + 200µs per message or round trip)")
	fs.StringVar(&o.cpuprof, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var err error
	if o.workloads, err = selectWorkloads(*w); err != nil {
		return o, err
	}
	if o.n < 0 || o.warmup < 0 || o.reps < 0 {
		return o, fmt.Errorf("-n, -warmup and -reps must be >= 0 (0: the default)")
	}
	if *vs != "" {
		o.variants = map[string]bool{}
		for name := range strings.SplitSeq(*vs, ",") {
			name = strings.TrimSpace(name)
			if !slices.ContainsFunc(o.workloads, func(w *workload) bool {
				return slices.ContainsFunc(w.variants, func(v variant) bool { return v.name == name })
			}) {
				return o, fmt.Errorf("%w %q in the selected workloads", errUnknownVariant, name)
			}
			o.variants[name] = true
		}
	}
	return o, nil
}

func run(args []string, stdout, stderr io.Writer) error {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if o.cpuprof != "" {
		f, err := os.Create(o.cpuprof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	cpus := firstCPUs(2)
	place := placement{lock: o.lock}
	if o.lock && o.pin && len(cpus) >= 2 {
		place.cpus = cpus
	}
	host := thisHost()
	fmt.Fprintf(stderr, "dutybench: %s; GOMAXPROCS=%d, CPUs %v, probe on CPUs %v, %s\n", host, runtime.GOMAXPROCS(0), runtime.NumCPU(), cpus, place)
	report := Report{Host: host}
	if !o.json {
		fmt.Fprintf(stdout, "host: %s\n\n", host)
	}
	for _, w := range o.workloads {
		vs := selectVariants(w, o.variants, o.limit)
		if len(vs) == 0 {
			continue
		}
		n, reps := cmp.Or(o.n, w.defaultN), cmp.Or(o.reps, w.defaultReps)
		// A hang guard: more than the slowest round trip on a busy machine.
		timeout := cmp.Or(o.timeout, 2*time.Minute+time.Duration(n)*200*time.Microsecond)
		wplace := place
		if w.unpinned {
			wplace = placement{}
		}
		cfg := runConfig{n: n, place: wplace, timeout: timeout, corruptAt: -1}
		reps_, err := runWorkload(w, vs, &cfg, o.warmup, reps, cpus, stderr)
		if err != nil {
			return fmt.Errorf("%s: %w", w.name, err)
		}
		names := make([]string, len(vs))
		for i, v := range vs {
			names[i] = v.name
		}
		wr := buildReport(w, names, reps_)
		report.Workloads = append(report.Workloads, wr)
		if !o.json {
			better := "higher is better"
			if w.kind == kindLatency {
				better = "lower is better"
			}
			header := fmt.Sprintf("%s (%s, %s): n=%d, %d reps + %d warm-up, interleaved; %s; ratios to %s in the same phase",
				w.name, w.unit(), better, n, reps, o.warmup, placementNote(vs, wplace), names[0])
			if err := writeTable(stdout, wr, header); err != nil {
				return err
			}
			fmt.Fprintln(stdout)
		}
	}
	if o.json {
		return writeJSON(stdout, report)
	}
	return nil
}

// placementNote says where the variants vs ran: those marked goroutines
// as plain goroutines whatever the flags say, the others as place says.
func placementNote(vs []variant, place placement) string {
	var onPlace, onGoroutines []string
	for _, v := range vs {
		if v.goroutines {
			onGoroutines = append(onGoroutines, v.name)
		} else {
			onPlace = append(onPlace, v.name)
		}
	}
	switch {
	case len(onGoroutines) == 0:
		return "every variant on " + place.String()
	case len(onPlace) == 0 || place.String() == placement{}.String():
		return "every variant on " + placement{}.String()
	}
	return fmt.Sprintf("%s on %s; %s on %s", strings.Join(onPlace, ", "), place, strings.Join(onGoroutines, ", "), placement{})
}

// runWorkload runs warmup untimed and reps timed repetitions of every
// variant, interleaved (A B C A B C ...), with a probe before and after each
// timed one.
func runWorkload(w *workload, vs []variant, base *runConfig, warmup, reps int, cpus []int, log io.Writer) ([]repetition, error) {
	if w.kind == kindLatency {
		base.lat = make([]int64, base.n)
	}
	cfgs := make([]runConfig, len(vs))
	for i, v := range vs {
		cfgs[i] = *base
		if v.goroutines {
			cfgs[i].place = placement{}
		}
	}
	for i := range warmup {
		for j, v := range vs {
			runtime.GC()
			if _, err := v.run(&cfgs[j]); err != nil {
				return nil, fmt.Errorf("%s warm-up %d: %w", v.name, i+1, err)
			}
		}
	}
	var out []repetition
	for i := range reps {
		for j, v := range vs {
			r, err := timedRepetition(w, v, &cfgs[j], cpus)
			if err != nil {
				return nil, fmt.Errorf("%s repetition %d: %w", v.name, i+1, err)
			}
			out = append(out, r)
			fmt.Fprintf(log, "%6.1fs %s %-16s rep %2d  probe %4.0f/%-4.0f ns %-5s  preempted %-5d %s\n", time.Since(processStart).Seconds(), w.name, v.name, i+1, r.Before, r.After, r.Phase, r.Preempted, describe(w, r))
		}
	}
	return out, nil
}

func timedRepetition(w *workload, v variant, cfg *runConfig, cpus []int) (repetition, error) {
	runtime.GC()
	before, err := probe(cpus)
	if err != nil {
		return repetition{}, err
	}
	csw := involuntarySwitches()
	elapsed, err := v.run(cfg)
	if err != nil {
		return repetition{}, err
	}
	csw = involuntarySwitches() - csw
	after, err := probe(cpus)
	if err != nil {
		return repetition{}, err
	}
	r := repetition{Variant: v.name, Before: before, After: after, Phase: labelPhase(before, after), Preempted: csw}
	if w.kind == kindLatency {
		r.Latency = latencySummary(cfg.lat[:cfg.n])
	} else {
		r.Value = float64(cfg.n) / elapsed.Seconds() / 1e6
	}
	if math.IsInf(r.Value, 0) || elapsed <= 0 {
		return repetition{}, fmt.Errorf("non-positive elapsed time %v", elapsed)
	}
	return r, nil
}

// involuntarySwitches returns the process's involuntary context switches
// so far: how often the kernel took a CPU from one of its threads.
func involuntarySwitches() int64 {
	var ru unix.Rusage
	_ = unix.Getrusage(unix.RUSAGE_SELF, &ru) // left zero on failure
	return ru.Nivcsw
}

func describe(w *workload, r repetition) string {
	if w.kind == kindLatency {
		return fmt.Sprintf("p50 %.0f p99 %.0f p99.9 %.0f max %.0f ns", r.Latency[metricP50], r.Latency[metricP99], r.Latency[metricP999], r.Latency[metricMax])
	}
	return fmt.Sprintf("%.2f %s", r.Value, w.unit())
}
