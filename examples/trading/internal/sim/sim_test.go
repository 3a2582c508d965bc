package sim

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/risk"
	"github.com/dutyrt/duty/examples/trading/internal/strategy"
)

// demoConfig is a run with the demo's defaults, limits scaled to the
// synthetic clock (one quote per µs).
func demoConfig(seed uint64, quotes int) Config {
	limits := risk.DefaultLimits()
	limits.OrdersPerSecond = 380_000
	limits.Burst = 30
	return Config{
		Instruments: 4,
		Quotes:      quotes,
		Seed:        seed,
		Strategy:    strategy.Config{Seed: seed},
		Limits:      limits,
		CheckBooks:  true,
		Audit:       true,
	}
}

// TestEverythingAccountedFor is the demo's end-to-end property: with the
// stages interleaved at random, every quote, order, cancel and report is
// accounted for, every book's invariants hold after every exchange step
// (never crossed after matching, FIFO, fills never above the order
// quantity), and every order's reports are well formed. The run must
// also produce the realistic mix the demo shows.
func TestEverythingAccountedFor(t *testing.T) {
	for seed := range uint64(3) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			cfg := demoConfig(seed, 12_000)
			cfg.Feed.Seed = seed
			res, err := Run(cfg)
			require.NoError(t, err)
			l := res.Ledger
			require.Empty(t, l.Check())
			require.Equal(t, "reconciliation: ok", l.Line())

			x, r, s := l.Exchange, l.Risk, l.Strategy
			t.Logf("orders %d, passed %d, rejected by risk %v; reports %+v, cancelled on request %d, open %d, filled qty %d; %+v; queued at most %d",
				s.Orders, r.Passed, r.RejectedBy, x.Reports, x.CancelledByRequest, x.Open, x.FilledQty, res.Liquidity, res.MaxQueued)
			require.Equal(t, int64(cfg.Quotes), l.Feed.Quotes)
			require.Positive(t, x.Reports.Fills)
			require.Positive(t, x.Reports.PartialFills)
			require.Positive(t, x.CancelledByRequest, "stale orders cancelled")
			require.Positive(t, x.Reports.Cancelled-x.CancelledByRequest, "IOC remainders")
			require.Positive(t, x.Reports.CancelRejects, "cancels that came too late")
			for _, reason := range []msg.Reason{msg.ReasonMaxOrderQty, msg.ReasonPriceBand, msg.ReasonPositionLimit, msg.ReasonOrderRate} {
				require.Positive(t, r.RejectedBy[reason], "no %s reject", reason)
			}
			require.Less(t, r.Rejected*4, r.Orders, "rejects are the exception")
			require.Positive(t, res.Liquidity.FilledQty)
			require.Positive(t, res.MaxQueued)
			// The positions compared by Check are not all zero: the
			// strategy traded, and some of its orders still rest.
			require.Len(t, x.Positions, cfg.Instruments)
			var traded, resting bool
			for _, p := range x.Positions {
				traded = traded || p.Net != 0 || p.Cash != 0
				resting = resting || p.OpenBuy+p.OpenSell > 0
			}
			require.True(t, traded, "no position")
			require.Equal(t, x.Open > 0, resting, "open orders %d, positions %+v", x.Open, x.Positions)
		})
	}
}

func TestDeterministic(t *testing.T) {
	a, err := Run(demoConfig(7, 3000))
	require.NoError(t, err)
	b, err := Run(demoConfig(7, 3000))
	require.NoError(t, err)
	require.Equal(t, a, b)
	c, err := Run(demoConfig(8, 3000))
	require.NoError(t, err)
	require.NotEqual(t, a.Steps, c.Steps)
}

// TestLostReportIsCaught drops one report on its way to the strategy:
// reconciliation must say so.
func TestLostReportIsCaught(t *testing.T) {
	cfg := demoConfig(1, 2000)
	cfg.loseReport = 100
	res, err := Run(cfg)
	require.NoError(t, err)
	line := res.Ledger.Line()
	require.True(t, strings.HasPrefix(line, "reconciliation: "))
	require.NotEqual(t, "reconciliation: ok", line)
	require.Contains(t, line, "exchange sent")
	t.Log(line)
}

func TestBadConfig(t *testing.T) {
	_, err := Run(Config{})
	require.Error(t, err)
	_, err = Run(Config{Instruments: 1, Quotes: 1})
	require.Error(t, err, "zero risk limits are refused")
}
