package feed

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
)

// ErrConfig is wrapped by New for an invalid Config.
var ErrConfig = errors.New("feed: invalid config")

// Defaults for zero Config fields.
const (
	DefaultStartPx   = 10_000
	DefaultMinPx     = 100
	DefaultMaxSpread = 4
	DefaultMaxSize   = 50
	DefaultInterval  = 1_000 // ns between synthetic timestamps
)

// Config configures a Generator. Instruments is required; zero values of
// the others take the defaults.
type Config struct {
	Instruments int
	Seed        uint64
	StartPx     int64 // every instrument's first bid, in ticks
	MinPx       int64 // the walk never takes a bid below this
	MaxSpread   int64 // spreads are 1..MaxSpread ticks
	MaxSize     int64 // sizes are 1..MaxSize
	// Now returns the timestamp of each quote (for example a monotonic
	// clock, for latency measurement). Nil: the synthetic clock.
	Now        func() int64
	StartNanos int64 // synthetic clock: first timestamp is StartNanos+Interval
	Interval   int64 // synthetic clock: ns per quote
}

type instrument struct {
	bid    int64
	spread int64
}

// Generator produces quotes.
type Generator struct {
	rng   rand.PCG
	inst  []instrument
	seq   uint64
	cfg   Config
	count recon.Feed
}

// New returns a generator for instruments 0..Instruments-1.
func New(cfg Config) (*Generator, error) {
	cfg.StartPx = cmp.Or(cfg.StartPx, DefaultStartPx)
	cfg.MinPx = cmp.Or(cfg.MinPx, DefaultMinPx)
	cfg.MaxSpread = cmp.Or(cfg.MaxSpread, DefaultMaxSpread)
	cfg.MaxSize = cmp.Or(cfg.MaxSize, DefaultMaxSize)
	cfg.Interval = cmp.Or(cfg.Interval, DefaultInterval)
	if cfg.Instruments < 1 || cfg.Instruments > 1<<16 || cfg.MinPx < 1 || cfg.StartPx < cfg.MinPx ||
		cfg.MaxSpread < 1 || cfg.MaxSize < 1 || cfg.Interval < 0 {
		return nil, fmt.Errorf("%w: %+v (Instruments 1..%d, 1 ≤ MinPx ≤ StartPx, MaxSpread and MaxSize ≥ 1, Interval ≥ 0)",
			ErrConfig, cfg, 1<<16)
	}
	g := &Generator{inst: make([]instrument, cfg.Instruments), cfg: cfg}
	g.rng.Seed(cfg.Seed, cfg.Seed^0x9E3779B97F4A7C15)
	for i := range g.inst {
		g.inst[i] = instrument{bid: cfg.StartPx, spread: 1 + g.intn(cfg.MaxSpread)}
	}
	return g, nil
}

// intn returns a value in [0, n), n > 0.
func (g *Generator) intn(n int64) int64 { return int64(g.rng.Uint64() % uint64(n)) }

// Next writes the next quote into q.
func (g *Generator) Next(q *msg.Quote) {
	i := g.intn(int64(len(g.inst)))
	in := &g.inst[i]
	in.bid = max(in.bid+g.intn(3)-1, g.cfg.MinPx)
	if g.intn(4) == 0 {
		in.spread = 1 + g.intn(g.cfg.MaxSpread)
	}
	g.seq++
	g.count.Quotes++
	var now int64
	if g.cfg.Now != nil {
		now = g.cfg.Now()
	} else {
		now = g.cfg.StartNanos + int64(g.seq)*g.cfg.Interval
	}
	*q = msg.Quote{
		Instrument: uint32(i),
		Seq:        g.seq,
		FeedNanos:  now,
		BidPx:      in.bid,
		BidQty:     1 + g.intn(g.cfg.MaxSize),
		AskPx:      in.bid + in.spread,
		AskQty:     1 + g.intn(g.cfg.MaxSize),
	}
}

// Config returns the configuration with defaults applied.
func (g *Generator) Config() Config { return g.cfg }

// Counts returns the recon.Feed counters: quotes generated.
func (g *Generator) Counts() recon.Feed { return g.count }
