package risk

import (
	"errors"
	"fmt"
	"math"
	"math/bits"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
)

// ErrConfig is wrapped by New for invalid limits or instrument count.
var ErrConfig = errors.New("risk: invalid config")

// Limits are the pre-trade limits; see the package comment.
type Limits struct {
	MaxPosition     int64 // per instrument, absolute, worst case with open orders
	MaxOrderQty     int64 // per order
	OrdersPerSecond int64 // sustained order rate, all instruments together
	Burst           int64 // orders allowed at once above the rate
	PriceBandTicks  int64 // band half-width in ticks (0: use PriceBandBps only)
	PriceBandBps    int64 // band half-width in basis points of mid (0: ticks only)
}

// DefaultLimits are the demo's limits.
func DefaultLimits() Limits {
	return Limits{
		MaxPosition:     300,
		MaxOrderQty:     100,
		OrdersPerSecond: 200_000,
		Burst:           1_000,
		PriceBandTicks:  20,
		PriceBandBps:    0,
	}
}

type instrument struct {
	mid    int64
	hasMid bool
	pos    recon.Position // Open*: passed orders not yet filled, cancelled or rejected
}

// Checker applies Limits to a stream of orders.
type Checker struct {
	inst     []instrument
	limits   Limits
	interval int64 // ns between orders at the sustained rate
	tau      int64 // burst tolerance, ns
	tat      int64 // GCRA theoretical arrival time
	started  bool
	counts   recon.Risk
	unknown  int64
}

// New returns a Checker for instruments 0..instruments-1.
func New(instruments int, l Limits) (*Checker, error) {
	if instruments < 1 || instruments > 1<<16 {
		return nil, fmt.Errorf("%w: %d instruments (1..%d)", ErrConfig, instruments, 1<<16)
	}
	if l.MaxPosition <= 0 || l.MaxOrderQty <= 0 || l.OrdersPerSecond <= 0 || l.OrdersPerSecond > 1e9 || l.Burst <= 0 ||
		l.PriceBandTicks < 0 || l.PriceBandBps < 0 || l.PriceBandTicks+l.PriceBandBps == 0 {
		return nil, fmt.Errorf("%w: %+v (MaxPosition, MaxOrderQty, Burst > 0; OrdersPerSecond 1..1e9; bands ≥ 0, one of them > 0)", ErrConfig, l)
	}
	// The interval is rounded up, so the limit is never looser than asked
	// (rounded down, 600M/s became 1 ns: 1e9/s).
	interval := (int64(1e9) + l.OrdersPerSecond - 1) / l.OrdersPerSecond
	tau := int64(math.MaxInt64) // a burst too large to count: no burst limit
	if l.Burst-1 <= math.MaxInt64/interval {
		tau = (l.Burst - 1) * interval
	}
	return &Checker{
		inst:     make([]instrument, instruments),
		limits:   l,
		interval: interval,
		tau:      tau,
	}, nil
}

// bandOf returns bps basis points of mid (mid > 0, bps >= 0), saturating
// instead of overflowing.
func bandOf(mid, bps int64) int64 {
	hi, lo := bits.Mul64(uint64(mid), uint64(bps))
	if hi >= 10_000 {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, 10_000)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// Limits returns the limits.
func (c *Checker) Limits() Limits { return c.limits }

// OnQuote records the instrument's mid price for the price band. A quote
// for an unknown instrument, or with BidPx ≥ AskPx or a non-positive
// price, is counted but changes nothing.
func (c *Checker) OnQuote(q *msg.Quote) {
	c.counts.Quotes++
	if int(q.Instrument) >= len(c.inst) || q.BidPx <= 0 || q.AskPx <= q.BidPx {
		return
	}
	in := &c.inst[q.Instrument]
	in.mid, in.hasMid = q.Mid(), true
}

// CheckOrder applies the rules to o and returns msg.ReasonNone if it
// passes (it is then counted as open) or the reason it is rejected.
func (c *Checker) CheckOrder(o *msg.NewOrder) msg.Reason {
	c.counts.Orders++
	r := c.check(o)
	if r == msg.ReasonNone {
		c.counts.Passed++
	} else {
		c.counts.Rejected++
		c.counts.RejectedBy[r]++
	}
	return r
}

func (c *Checker) check(o *msg.NewOrder) msg.Reason {
	if int(o.Instrument) >= len(c.inst) {
		return msg.ReasonUnknownInstr
	}
	if !o.Side.Valid() || !o.TimeInForce.Valid() || o.Price <= 0 || o.Qty <= 0 {
		return msg.ReasonInvalidOrder
	}
	if o.Qty > c.limits.MaxOrderQty {
		return msg.ReasonMaxOrderQty
	}
	in := &c.inst[o.Instrument]
	if !in.hasMid {
		return msg.ReasonNoReferencePx
	}
	band := max(c.limits.PriceBandTicks, bandOf(in.mid, c.limits.PriceBandBps))
	if d := o.Price - in.mid; d > band || d < -band {
		return msg.ReasonPriceBand
	}
	if o.Side == msg.Buy {
		if in.pos.Net+in.pos.OpenBuy+o.Qty > c.limits.MaxPosition {
			return msg.ReasonPositionLimit
		}
	} else if in.pos.Net-in.pos.OpenSell-o.Qty < -c.limits.MaxPosition {
		return msg.ReasonPositionLimit
	}
	// GCRA: the order conforms unless it arrives more than tau before the
	// theoretical arrival time; then the TAT moves one interval on.
	t := o.OriginNanos
	if !c.started {
		c.started, c.tat = true, t
	}
	if c.tat-t > c.tau {
		return msg.ReasonOrderRate
	}
	c.tat = max(c.tat, t) + c.interval
	*in.open(o.Side) += o.Qty
	return msg.ReasonNone
}

// OnCancel counts a cancel request; cancels always pass.
func (c *Checker) OnCancel(*msg.CancelOrder) { c.counts.Cancels++ }

// OnReport applies an execution report: fills move quantity from open to
// the position, Cancelled and Rejected release the remainder. A report
// for an unknown instrument or side, or of an unknown kind, is counted in
// Unknown and changes nothing else.
func (c *Checker) OnReport(r *msg.ExecutionReport) {
	if !c.counts.Reports.Count(r.ExecType) {
		c.unknown++
		return
	}
	if r.ExecType == msg.New || r.ExecType == msg.CancelRejected {
		return
	}
	if int(r.Instrument) >= len(c.inst) || !r.Side.Valid() {
		c.unknown++
		return
	}
	in := &c.inst[r.Instrument]
	open := in.open(r.Side)
	switch r.ExecType {
	case msg.PartialFill, msg.Fill:
		*open -= r.LastQty
		c.counts.FilledQty += r.LastQty
		in.pos.Fill(r.Side, r.LastPx, r.LastQty)
	case msg.Cancelled:
		*open -= r.OrderQty - r.CumQty
	case msg.Rejected:
		*open -= r.OrderQty
	}
}

// Position returns the instrument's filled position and its open buy and
// sell quantities (zeros for an unknown instrument).
func (c *Checker) Position(instrument uint32) (position, openBuy, openSell int64) {
	if int(instrument) >= len(c.inst) {
		return 0, 0, 0
	}
	p := &c.inst[instrument].pos
	return p.Net, p.OpenBuy, p.OpenSell
}

// open returns the open quantity of side s.
func (in *instrument) open(s msg.Side) *int64 {
	if s == msg.Buy {
		return &in.pos.OpenBuy
	}
	return &in.pos.OpenSell
}

// Positions appends every instrument's position, cash and open
// quantities to dst[:0], for the reconciliation.
func (c *Checker) Positions(dst []recon.Position) []recon.Position {
	dst = dst[:0]
	for i := range c.inst {
		dst = append(dst, c.inst[i].pos)
	}
	return dst
}

// Counts returns the recon.Risk counters.
func (c *Checker) Counts() recon.Risk { return c.counts }

// Unknown returns the number of reports OnReport could not apply.
func (c *Checker) Unknown() int64 { return c.unknown }
