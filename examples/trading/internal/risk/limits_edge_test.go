package risk

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

// TestPriceBandWithExtremeQuote: a valid quote near the top of the price
// range (bid < ask, both > 0) must not overflow the mid or the band: it
// used to centre the band on a negative mid, and an order priced at 5
// ticks passed while the market was at ~9.2e18.
func TestPriceBandWithExtremeQuote(t *testing.T) {
	l := loose()
	l.PriceBandTicks = 20
	c, err := New(1, l)
	require.NoError(t, err)
	c.OnQuote(&msg.Quote{Instrument: 0, BidPx: math.MaxInt64 - 10, AskPx: math.MaxInt64 - 5, BidQty: 1, AskQty: 1})
	require.Equal(t, msg.ReasonPriceBand, c.CheckOrder(buy(1, 5, 1, 0)),
		"an order 9.2e18 ticks away from the quote passed the 20-tick band")
}

// TestOrderRateNeverLooserThanConfigured: the GCRA interval is 1e9 /
// OrdersPerSecond rounded up; truncated, a limit of 600M orders/s let 1e9
// orders/s through (and the demo's derived 450M/s, -rate 1e9, 500M/s).
func TestOrderRateNeverLooserThanConfigured(t *testing.T) {
	for _, rate := range []int64{600_000_000, 450_000_000} {
		l := loose()
		l.OrdersPerSecond, l.Burst = rate, 1
		c, err := New(1, l)
		require.NoError(t, err)
		c.OnQuote(&msg.Quote{Instrument: 0, BidPx: 999, AskPx: 1001, BidQty: 1, AskQty: 1})
		passed := int64(0)
		for i := range int64(1_000_000) { // one order per ns for 1 ms
			o := buy(uint64(i+1), 1000, 1, i)
			if c.CheckOrder(o) == msg.ReasonNone {
				passed++
				c.OnReport(&msg.ExecutionReport{OrderID: o.OrderID, Instrument: 0, Side: msg.Buy, ExecType: msg.Cancelled, OrderQty: 1})
			}
		}
		// In 1 ms at most rate/1000 orders (+ the burst of 1) may pass.
		require.LessOrEqual(t, passed, rate/1000+1, "limit %d/s", rate)
	}
}

// TestHugeBurstDoesNotOverflow: a large (valid, > 0) Burst saturates tau;
// (Burst-1)*interval used to wrap negative and refuse every order after
// the first for rate.
func TestHugeBurstDoesNotOverflow(t *testing.T) {
	l := loose()
	l.OrdersPerSecond, l.Burst = 1_000, math.MaxInt64/100
	c, err := New(1, l)
	require.NoError(t, err)
	c.OnQuote(&msg.Quote{Instrument: 0, BidPx: 999, AskPx: 1001, BidQty: 1, AskQty: 1})
	require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(1, 1000, 1, 0)))
	require.Equal(t, msg.ReasonNone, c.CheckOrder(buy(2, 1000, 1, 0)), "second order inside a huge burst refused")
}
