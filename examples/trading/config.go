package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dutyrt/duty/idle"
)

// errUsage is wrapped by every configuration error; errFlagParse by those
// the flag package has already printed.
var (
	errUsage     = errors.New("trading: bad flags")
	errFlagParse = errors.New("trading: cannot parse flags")
)

// Agent roles. Each is one agent with its own mailboxes.
const (
	roleFeed     = "feed"
	roleStrategy = "strategy"
	roleRisk     = "risk"
	roleExchange = "exchange"
)

// config is the demo's configuration: the flags, checked.
type config struct {
	Duration    time.Duration
	Instruments int
	Rate        int64 // quotes per second; 0: as fast as back-pressure allows
	Seed        uint64
	// Threads is how the agents share OS threads (see threadLayout).
	Threads int
	// IdleSpec is the -idle flag: one idle.Parse spec for every thread, or
	// role=spec pairs separated by commas.
	IdleSpec string
	// CPUSpec is the -cpus flag: CPUs for the threads, in layout order
	// (threadLayout's: the exchange last, though it starts first)
	// ("0,1"), or role=cpu pairs ("trader=0,exchange=1").
	CPUSpec string
	// OrderRate is risk's order-rate limit in orders per second; 0 derives
	// it from Rate (see riskLimits).
	OrderRate int64
	Capacity  int // bytes of each mailbox ring
	IPC       bool
	NATS      string // -nats: a server URL, or natsEmbedded; check sets IPC too (nats.go)
	Dir       string // the directory of the counters file (and with -ipc the shared mailboxes); "" = a fresh one
	Spawn     bool   // -ipc: start the exchange process (false: it is started by hand)
	Role      string // "" (the demo) or "exchange" (the exchange process of -ipc)
	// WatchParent makes the exchange process stop when the process that
	// started it is gone (set by the demo when it spawns it).
	WatchParent bool
	Drain       time.Duration
	Verbose     bool
	// Record and Replay: record every agent's input into journals in this
	// directory, or replay a recorded run from them (record.go).
	Record, Replay string
	MD             string // -md: "" (the in-process feed), "auto" (start the feeder) or its endpoint (md.go)
	// -md-curve, -md-curve-server, -md-curve-secret: the market data over
	// CURVE (md.go).
	MDCurve                      bool
	MDCurveServer, MDCurveSecret string

	// dropReport (-lose-report), if > 0, makes the exchange skip sending
	// its dropReport-th report to the strategy: the proof that the
	// reconciliation notices a lost message.
	dropReport int64
	// bendFill (tests only), if > 0, makes the exchange send its
	// bendFill-th fill report to risk with the wrong side: the proof that
	// the reconciliation notices a wrong fill, not only a lost one.
	bendFill int64

	// Derived by check.
	idle map[string]string // thread role -> spec
	cpus map[string][]int  // thread role -> CPUs
}

func defaultConfig() config {
	return config{
		Duration:    10 * time.Second,
		Instruments: 8,
		Rate:        100_000,
		Seed:        1,
		Threads:     2,
		IdleSpec:    "wake",
		Capacity:    64 * 1024,
		Spawn:       true,
		Drain:       5 * time.Second,
	}
}

// parseFlags parses the command line into a config.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	cfg := defaultConfig()
	fs := flag.NewFlagSet("trading", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.DurationVar(&cfg.Duration, "duration", cfg.Duration, "how long the feed runs (Ctrl-C stops earlier)")
	fs.IntVar(&cfg.Instruments, "instruments", cfg.Instruments, "number of instruments (one order book each)")
	fs.Int64Var(&cfg.Rate, "rate", cfg.Rate, "feed rate in quotes per second (0: as fast as the pipeline takes them)")
	fs.Uint64Var(&cfg.Seed, "seed", cfg.Seed, "seed of the feed and the strategy")
	fs.IntVar(&cfg.Threads, "threads", cfg.Threads, "agent threads: 1 all on one, 2 [feed,strategy,risk]+exchange, 3 feed+[strategy,risk]+exchange, 4 one per agent")
	fs.StringVar(&cfg.IdleSpec, "idle", cfg.IdleSpec, `idle strategy: one spec for every thread ("spin", "backoff", "backoff:10:5:1us:1ms", "yield", "sleep-ns:2000", "wake": sleep until a message arrives, ...) or role=spec pairs ("trader=spin,exchange=backoff")`)
	fs.StringVar(&cfg.CPUSpec, "cpus", cfg.CPUSpec, `pin each thread to a CPU: CPUs in -threads order, exchange last ("0,1": trader 0, exchange 1) or role=cpu pairs ("trader=0,exchange=1")`)
	fs.Int64Var(&cfg.OrderRate, "order-rate", cfg.OrderRate, "risk's order-rate limit in orders per second (0: derived from -rate)")
	fs.IntVar(&cfg.Capacity, "mailbox", cfg.Capacity, "bytes of each mailbox ring (a power of two)")
	fs.BoolVar(&cfg.IPC, "ipc", cfg.IPC, "run the exchange in a second process, connected by shared-memory mailboxes")
	fs.Var(optionalFlag{&cfg.NATS, natsEmbedded}, "nats", "run the exchange in a second process connected only through NATS: -nats starts an embedded server, -nats URL uses that one")
	fs.StringVar(&cfg.Dir, "dir", cfg.Dir, "directory of the counters file dutystat reads (and, with -ipc, of the shared mailboxes); default: a fresh directory under the ipc default, removed at the end")
	fs.BoolVar(&cfg.Spawn, "spawn", cfg.Spawn, "-ipc: start the exchange process (false: start it yourself with -role exchange -dir DIR)")
	fs.StringVar(&cfg.Role, "role", cfg.Role, `"exchange": run only the exchange process of -ipc mode (with -dir)`)
	fs.BoolVar(&cfg.WatchParent, "watch-parent", cfg.WatchParent, "-role exchange: stop when the parent process is gone (set by the demo)")
	fs.DurationVar(&cfg.Drain, "drain", cfg.Drain, "longest wait for the pipeline to drain after the feed stops")
	fs.BoolVar(&cfg.Verbose, "v", cfg.Verbose, "log fx events to stderr")
	fs.StringVar(&cfg.Record, "record", "", "record every agent's input into journals in this new directory (replay it with -replay); with -ipc or -nats the exchange process records the exchange's")
	fs.StringVar(&cfg.Replay, "replay", "", "replay a run recorded with -record from this directory: the same final positions and reconciliation")
	fs.BoolVar(&cfg.MDCurve, "md-curve", false, "with -md: the market data over CURVE, encrypted and authenticated (a key pair made for the demo and for the feeder it starts)")
	fs.StringVar(&cfg.MDCurveServer, "md-curve-server", "", "with -md ENDPOINT: the feeder's CURVE public key (Z85; mdfeed -keygen prints it)")
	fs.StringVar(&cfg.MDCurveSecret, "md-curve-secret", "", "with -md ENDPOINT: the file of the demo's CURVE secret key (mdfeed -keygen writes it)")
	fs.Var(optionalFlag{&cfg.MD, mdAuto}, "md", "take the market data from a ZMTP PUB endpoint: -md starts the feeder on a free loopback port, -md ENDPOINT connects to one (examples/trading/mdfeed)")
	fs.Int64Var(&cfg.dropReport, "lose-report", 0, "lose the N-th execution report on its way to the strategy, to watch the reconciliation catch it (exit status 1)")
	if err := fs.Parse(args); err != nil {
		return cfg, fmt.Errorf("%w: %w: %w", errUsage, errFlagParse, err)
	}
	// -nats URL and -md ENDPOINT: the flag package sees a flag without a
	// value and stops at its value, which is taken from the arguments left;
	// the flags after it are parsed.
	for fs.NArg() > 0 && strings.Contains(fs.Arg(0), "://") && (cfg.NATS == natsEmbedded || cfg.MD == mdAuto) {
		if cfg.NATS == natsEmbedded {
			cfg.NATS = fs.Arg(0)
		} else {
			cfg.MD = fs.Arg(0)
		}
		if err := fs.Parse(fs.Args()[1:]); err != nil {
			return cfg, fmt.Errorf("%w: %w: %w", errUsage, errFlagParse, err)
		}
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	return cfg, cfg.check()
}

// optionalFlag is a flag that may go without a value (-nats: auto) or
// take one (-nats=URL; parseFlags takes -nats URL).
type optionalFlag struct {
	v    *string
	auto string
}

func (f optionalFlag) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

func (f optionalFlag) Set(s string) error {
	switch s {
	case "true":
		*f.v = f.auto
	case "false":
		*f.v = ""
	default:
		*f.v = s
	}
	return nil
}

func (f optionalFlag) IsBoolFlag() bool { return true }

// thread is one OS thread (one runner) and the agents it runs, in order.
type thread struct {
	role   string
	agents []string
}

// threadLayout returns the threads of the process for -threads n. In the
// -ipc demo process the exchange is elsewhere, so the layouts without it
// are used; the exchange process has one thread.
func threadLayout(n int, withExchange bool) []thread {
	var ts []thread
	switch n {
	case 1:
		ts = []thread{{"all", []string{roleFeed, roleStrategy, roleRisk, roleExchange}}}
		if !withExchange {
			ts = []thread{{"trader", []string{roleFeed, roleStrategy, roleRisk}}}
		}
		return ts
	case 2:
		ts = []thread{{"trader", []string{roleFeed, roleStrategy, roleRisk}}}
	case 3:
		ts = []thread{{roleFeed, []string{roleFeed}}, {"trader", []string{roleStrategy, roleRisk}}}
	default:
		ts = []thread{{roleFeed, []string{roleFeed}}, {roleStrategy, []string{roleStrategy}}, {roleRisk, []string{roleRisk}}}
	}
	if withExchange {
		ts = append(ts, thread{roleExchange, []string{roleExchange}})
	}
	return ts
}

// allThreads is the layout across both processes: thread roles for -idle
// and -cpus are looked up in it, so that one command line configures the
// demo and its exchange process alike.
func (c *config) allThreads() []thread {
	if c.IPC || c.Role == roleExchange {
		return append(threadLayout(c.Threads, false), thread{roleExchange, []string{roleExchange}})
	}
	return threadLayout(c.Threads, true)
}

// maxInstruments bounds -instruments: every instrument's order book is
// preallocated, about 370 KB each, so 1024 of them take ~370 MB.
const maxInstruments = 1024

func (c *config) check() error {
	if c.NATS != "" && c.Role == "" { // -nats is -ipc with the mailboxes bridged (nats.go)
		if c.IPC {
			return fmt.Errorf("%w: -nats and -ipc are two ways to run the exchange: choose one", errUsage)
		}
		c.IPC = true
	}
	switch {
	case c.Duration <= 0:
		return fmt.Errorf("%w: -duration %v must be > 0", errUsage, c.Duration)
	case c.Instruments < 1 || c.Instruments > maxInstruments:
		// Each book is preallocated (~370 KB): 65536 of them asked for
		// ~24 GB and ended in an OOM kill, not an error.
		return fmt.Errorf("%w: -instruments %d must be 1..%d", errUsage, c.Instruments, maxInstruments)
	case c.Rate < 0 || c.Rate > 1e9:
		return fmt.Errorf("%w: -rate %d must be 0..1e9", errUsage, c.Rate)
	case c.Threads < 1 || c.Threads > 4:
		return fmt.Errorf("%w: -threads %d must be 1..4", errUsage, c.Threads)
	case c.OrderRate < 0 || c.OrderRate > 1e9:
		return fmt.Errorf("%w: -order-rate %d must be 0..1e9", errUsage, c.OrderRate)
	case c.Capacity < 1024 || c.Capacity&(c.Capacity-1) != 0 || c.Capacity > 1<<30:
		return fmt.Errorf("%w: -mailbox %d must be a power of two, 1024..2^30", errUsage, c.Capacity)
	case c.Role != "" && c.Role != roleExchange:
		return fmt.Errorf("%w: -role %q: the only role is %q", errUsage, c.Role, roleExchange)
	case c.Role == roleExchange && c.Dir == "":
		return fmt.Errorf("%w: -role exchange needs -dir", errUsage)
	case !c.IPC && c.Role == "" && !c.Spawn:
		return fmt.Errorf("%w: -spawn is for -ipc", errUsage)
	case c.IPC && !c.Spawn && c.Dir == "":
		return fmt.Errorf("%w: -spawn=false needs -dir (the exchange process must find the files)", errUsage)
	case c.dropReport < 0:
		return fmt.Errorf("%w: -lose-report %d must be >= 0", errUsage, c.dropReport)
	case c.Drain <= 0:
		return fmt.Errorf("%w: -drain %v must be > 0", errUsage, c.Drain)
	case c.Record != "" && c.Replay != "":
		return fmt.Errorf("%w: -record and -replay exclude each other", errUsage)
	case c.Replay != "" && (c.IPC || c.Role != ""):
		return fmt.Errorf("%w: -replay runs every agent in this process: not with -ipc, -nats or -role", errUsage)
	}
	if err := checkMD(c); err != nil {
		return err
	}
	threads := c.allThreads()
	var err error
	if c.idle, err = parseIdle(c.IdleSpec, threads); err != nil {
		return err
	}
	if c.cpus, err = parseCPUs(c.CPUSpec, threads); err != nil {
		return err
	}
	return nil
}

// threadOf returns the thread that runs an agent or is named role.
func threadOf(role string, threads []thread) (string, bool) {
	for _, t := range threads {
		if t.role == role || slices.Contains(t.agents, role) {
			return t.role, true
		}
	}
	return "", false
}

func roleNames(threads []thread) string {
	var names []string
	for _, t := range threads {
		names = append(names, t.role)
		for _, a := range t.agents {
			if a != t.role {
				names = append(names, a)
			}
		}
	}
	return strings.Join(names, ", ")
}

// parseIdle turns -idle into a spec per thread. A role may name a thread
// or an agent (meaning its thread); two specs for one thread must agree.
func parseIdle(spec string, threads []thread) (map[string]string, error) {
	out := map[string]string{}
	if !strings.Contains(spec, "=") {
		if err := checkIdle(spec); err != nil {
			return nil, err
		}
		for _, t := range threads {
			out[t.role] = spec
		}
		return out, nil
	}
	for item := range strings.SplitSeq(spec, ",") {
		role, s, ok := strings.Cut(item, "=")
		role, s = strings.TrimSpace(role), strings.TrimSpace(s)
		if !ok {
			return nil, fmt.Errorf("%w: -idle %q: %q is not role=spec", errUsage, spec, item)
		}
		if err := checkIdle(s); err != nil {
			return nil, err
		}
		t, ok := threadOf(role, threads)
		if !ok {
			return nil, fmt.Errorf("%w: -idle: no thread or agent %q (with -threads, the roles are %s)", errUsage, role, roleNames(threads))
		}
		if prev, dup := out[t]; dup && prev != s {
			return nil, fmt.Errorf("%w: -idle: thread %s gets both %q and %q", errUsage, t, prev, s)
		}
		out[t] = s
	}
	for _, t := range threads {
		if _, ok := out[t.role]; !ok {
			out[t.role] = "backoff"
		}
	}
	return out, nil
}

// checkIdle refuses an idle spec neither idle.Parse nor dutyfx's "wake"
// (a sleep until a message arrives) takes; dutyfx checks "wake" against
// its thread's agents.
func checkIdle(spec string) error {
	if spec == "wake" || strings.HasPrefix(spec, "wake:") {
		return nil
	}
	if _, err := idle.Parse(spec); err != nil {
		return fmt.Errorf("%w: -idle: %w", errUsage, err)
	}
	return nil
}

// parseCPUs turns -cpus into the CPUs of each thread.
func parseCPUs(spec string, threads []thread) (map[string][]int, error) {
	out := map[string][]int{}
	if strings.TrimSpace(spec) == "" {
		return out, nil
	}
	cpu := func(s string) (int, error) {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 0 || n >= 1<<16 {
			return 0, fmt.Errorf("%w: -cpus %q: %q is not a CPU number", errUsage, spec, s)
		}
		return n, nil
	}
	items := strings.Split(spec, ",")
	if !strings.Contains(spec, "=") {
		if len(items) != len(threads) {
			return nil, fmt.Errorf("%w: -cpus %q lists %d CPUs for %d threads (%s): give one per thread, or role=cpu pairs",
				errUsage, spec, len(items), len(threads), roleNames(threads))
		}
		for i, item := range items {
			n, err := cpu(item)
			if err != nil {
				return nil, err
			}
			out[threads[i].role] = []int{n}
		}
		return out, nil
	}
	for _, item := range items {
		role, s, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("%w: -cpus %q: %q is not role=cpu", errUsage, spec, item)
		}
		n, err := cpu(s)
		if err != nil {
			return nil, err
		}
		t, ok := threadOf(strings.TrimSpace(role), threads)
		if !ok {
			return nil, fmt.Errorf("%w: -cpus: no thread or agent %q (with -threads, the roles are %s)", errUsage, role, roleNames(threads))
		}
		if !slices.Contains(out[t], n) {
			out[t] = append(out[t], n)
		}
	}
	return out, nil
}
