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
	Duration                     time.Duration
	Instruments                  int
	Rate                         int64 // quotes per second; 0: as fast as back-pressure allows
	Seed                         uint64
	Threads                      int    // how the agents share OS threads (threadLayout)
	IdleSpec                     string // -idle: one spec for every thread, or role=spec pairs
	CPUSpec                      string // -cpus: CPUs in threadLayout's order, or role=cpu pairs
	OrderRate                    int64  // risk's order-rate limit; 0: derived from Rate (riskLimits)
	Capacity                     int    // bytes of each mailbox ring
	IPC                          bool
	NATS                         string // a server URL, or natsEmbedded; check sets IPC too
	Dir                          string // the shared files' directory; "": a fresh one
	Spawn                        bool   // -ipc: start the exchange process
	Role                         string // "" (the demo) or "exchange" (the exchange process)
	WatchParent                  bool   // the exchange process stops when its parent is gone
	Drain                        time.Duration
	Verbose                      bool
	Record                       string // record.go
	Replay                       string
	MD                           string // "", mdAuto or the feeder's endpoint (md.go)
	MDCurve                      bool
	MDCurveServer, MDCurveSecret string

	// dropReport (-lose-report) > 0 makes the exchange lose that report
	// to the strategy; bendFill (tests) > 0 sends that fill report to risk
	// with the wrong side: the reconciliation must notice either.
	dropReport, bendFill int64

	idle map[string]string // thread role -> spec (check)
	cpus map[string][]int  // thread role -> CPUs (check)
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
	// -nats URL, -md ENDPOINT: the flag package stops at the value.
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

// optionalFlag may go without a value (auto) or take one.
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

// threadLayout returns the threads of the process for -threads n, with or
// without the exchange (elsewhere with -ipc).
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

// allThreads is the layout across both processes, in which -idle and
// -cpus look roles up.
func (c *config) allThreads() []thread {
	if c.IPC || c.Role == roleExchange {
		return append(threadLayout(c.Threads, false), thread{roleExchange, []string{roleExchange}})
	}
	return threadLayout(c.Threads, true)
}

// maxInstruments bounds -instruments: each order book is preallocated.
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
	var err error
	if c.idle, err = parseIdle(c.IdleSpec, c.allThreads()); err == nil {
		c.cpus, err = parseCPUs(c.CPUSpec, c.allThreads())
	}
	return err
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

// parseRoles parses -idle or -cpus: one value for every thread (-idle), a
// list in thread order (-cpus), or role=value pairs, a role naming a
// thread or an agent (its thread). each takes one value of a thread.
func parseRoles(flag, spec string, threads []thread, each func(thread, value string) error) error {
	var roles []string
	for _, t := range threads {
		roles = append(roles, t.role)
		for _, a := range t.agents {
			if a != t.role {
				roles = append(roles, a)
			}
		}
	}
	items := strings.Split(spec, ",")
	if !strings.Contains(spec, "=") {
		if flag == "-idle" {
			items = slices.Repeat(items[:1], len(threads))
		} else if len(items) != len(threads) {
			return fmt.Errorf("%w: -cpus %q lists %d CPUs for %d threads (%s): give one per thread, or role=cpu pairs",
				errUsage, spec, len(items), len(threads), strings.Join(roles, ", "))
		}
		for i, item := range items {
			items[i] = threads[i].role + "=" + item
		}
	}
	for _, item := range items {
		role, v, ok := strings.Cut(item, "=")
		if !ok {
			return fmt.Errorf("%w: %s %q: %q is not role=value", errUsage, flag, spec, item)
		}
		t, ok := threadOf(strings.TrimSpace(role), threads)
		if !ok {
			return fmt.Errorf("%w: %s: no thread or agent %q (with -threads, the roles are %s)", errUsage, flag, role, strings.Join(roles, ", "))
		}
		if err := each(t, strings.TrimSpace(v)); err != nil {
			return err
		}
	}
	return nil
}

// parseIdle turns -idle into a spec per thread ("backoff" for those not
// named); two specs for one thread are an error.
func parseIdle(spec string, threads []thread) (map[string]string, error) {
	out := map[string]string{}
	err := parseRoles("-idle", spec, threads, func(t, s string) error {
		if s != "wake" && !strings.HasPrefix(s, "wake:") { // dutyfx's: sleep until a message arrives
			if _, err := idle.Parse(s); err != nil {
				return fmt.Errorf("%w: -idle: %w", errUsage, err)
			}
		}
		if prev, dup := out[t]; dup && prev != s {
			return fmt.Errorf("%w: -idle: thread %s gets both %q and %q", errUsage, t, prev, s)
		}
		out[t] = s
		return nil
	})
	for _, t := range threads {
		if _, ok := out[t.role]; !ok {
			out[t.role] = "backoff"
		}
	}
	return out, err
}

// parseCPUs turns -cpus into the CPUs of each thread.
func parseCPUs(spec string, threads []thread) (map[string][]int, error) {
	out := map[string][]int{}
	if strings.TrimSpace(spec) == "" {
		return out, nil
	}
	return out, parseRoles("-cpus", spec, threads, func(t, s string) error {
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 || n >= 1<<16 {
			return fmt.Errorf("%w: -cpus %q: %q is not a CPU number", errUsage, spec, s)
		}
		if !slices.Contains(out[t], n) {
			out[t] = append(out[t], n)
		}
		return nil
	})
}
