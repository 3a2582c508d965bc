package strategy

import (
	"cmp"
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/dutyrt/duty/examples/trading/internal/idmap"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
)

// ErrConfig is wrapped by New for an invalid Config.
var ErrConfig = errors.New("strategy: invalid config")

// Config configures a Strategy. Instruments is required; zero values of
// the others take the defaults (DefaultConfig); RoguePerMille < 0 sends no
// rogue orders.
type Config struct {
	Instruments          int
	Seed                 uint64
	MaxOpen              int    // open orders tracked at once, all instruments
	MaxOpenPerInstrument int    // no new order for an instrument with this many open
	OrderPerMille        int    // chance a quote triggers a new order
	AggressivePerMille   int    // share of (non-rogue) orders that are crossing IOCs
	RoguePerMille        int    // share of orders that break a risk limit on purpose
	MaxQty               int64  // order quantities are 1..MaxQty
	CrossTicks           int64  // an IOC crosses the quote by 0..CrossTicks
	StaleQuotes          int    // cancel a resting order after this many quotes of its instrument
	MaxPosition          int64  // the position the side skew leans against
	RogueQty             int64  // quantity of an oversize rogue order
	RogueTicks           int64  // price offset of an off-band rogue order
	FirstOrderID         uint64 // the first order id
}

// DefaultConfig returns the defaults, for n instruments. They are tuned
// against risk.DefaultLimits: MaxQty is below its MaxOrderQty, RogueQty
// above; RogueTicks is outside its price band; 8 open orders of up to 40
// can exceed its MaxPosition when the position leans one way.
func DefaultConfig(instruments int) Config {
	return Config{
		Instruments:          instruments,
		MaxOpen:              4096,
		MaxOpenPerInstrument: 8,
		OrderPerMille:        500,
		AggressivePerMille:   400,
		RoguePerMille:        5,
		MaxQty:               40,
		CrossTicks:           2,
		StaleQuotes:          5,
		MaxPosition:          1_000,
		RogueQty:             1_000,
		RogueTicks:           1_000,
		FirstOrderID:         1,
	}
}

func (c *Config) applyDefaults() {
	d := DefaultConfig(c.Instruments)
	c.MaxOpen = cmp.Or(c.MaxOpen, d.MaxOpen)
	c.MaxOpenPerInstrument = cmp.Or(c.MaxOpenPerInstrument, d.MaxOpenPerInstrument)
	c.OrderPerMille = cmp.Or(c.OrderPerMille, d.OrderPerMille)
	c.AggressivePerMille = cmp.Or(c.AggressivePerMille, d.AggressivePerMille)
	c.RoguePerMille = max(0, cmp.Or(c.RoguePerMille, d.RoguePerMille))
	c.StaleQuotes = cmp.Or(c.StaleQuotes, d.StaleQuotes)
	c.MaxQty = cmp.Or(c.MaxQty, d.MaxQty)
	c.CrossTicks = cmp.Or(c.CrossTicks, d.CrossTicks)
	c.MaxPosition = cmp.Or(c.MaxPosition, d.MaxPosition)
	c.RogueQty = cmp.Or(c.RogueQty, d.RogueQty)
	c.RogueTicks = cmp.Or(c.RogueTicks, d.RogueTicks)
	c.FirstOrderID = cmp.Or(c.FirstOrderID, d.FirstOrderID)
}

// Out is one message to send: a new order or a cancel.
type Out struct {
	IsCancel bool
	New      msg.NewOrder
	Cancel   msg.CancelOrder
}

const none = -1

type order struct {
	id            uint64
	price         int64
	qty           int64
	cum           int64
	bornAt        uint64 // the instrument's quote count when sent
	prev, next    int32  // the instrument's list of open orders
	instrument    uint32
	side          msg.Side
	tif           msg.TimeInForce
	acked         bool
	cancelPending bool
}

type instrument struct {
	quotes uint64
	pos    recon.Position // Net and Cash
	open   int
	head   int32
}

// Stats are the strategy's own statistics, beyond the recon counters.
type Stats struct {
	Rogue   int64 // rogue orders sent
	IOC     int64 // aggressive orders sent (rogue ones included)
	Passive int64 // passive orders sent
	Skipped int64 // orders not sent because MaxOpen orders were open
}

// Strategy turns quotes into orders; see the package comment.
type Strategy struct {
	cfg    Config
	rng    rand.PCG
	orders []order
	free   int32
	ids    *idmap.Map
	inst   []instrument
	nextID uint64
	out    []Out
	counts recon.Strategy
	stats  Stats
}

// New returns a strategy with all its storage allocated.
func New(cfg Config) (*Strategy, error) {
	cfg.applyDefaults()
	if cfg.Instruments < 1 || cfg.Instruments > 1<<16 || cfg.MaxOpen < 1 || cfg.MaxOpen > 1<<24 ||
		cfg.MaxOpenPerInstrument < 1 || cfg.OrderPerMille < 0 || cfg.OrderPerMille > 1000 ||
		cfg.AggressivePerMille < 0 || cfg.AggressivePerMille > 1000 || cfg.RoguePerMille > 1000 ||
		cfg.MaxQty < 1 || cfg.CrossTicks < 0 || cfg.StaleQuotes < 1 || cfg.MaxPosition < 1 ||
		cfg.RogueQty < 1 || cfg.RogueTicks < 1 || cfg.FirstOrderID > msg.MaxClientOrderID {
		return nil, fmt.Errorf("%w: %+v", ErrConfig, cfg)
	}
	ids, err := idmap.New(cfg.MaxOpen)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	s := &Strategy{
		cfg:    cfg,
		orders: make([]order, cfg.MaxOpen),
		ids:    ids,
		inst:   make([]instrument, cfg.Instruments),
		nextID: cfg.FirstOrderID,
		out:    make([]Out, 0, cfg.MaxOpenPerInstrument+1),
	}
	s.rng.Seed(cfg.Seed, cfg.Seed^0xD1B54A32D192ED03)
	for i := range s.orders {
		s.orders[i].next = int32(i + 1)
	}
	s.orders[len(s.orders)-1].next = none
	for i := range s.inst {
		s.inst[i].head = none
	}
	return s, nil
}

// Config returns the configuration with defaults applied.
func (s *Strategy) Config() Config { return s.cfg }

func (s *Strategy) intn(n int64) int64 { return int64(s.rng.Uint64() % uint64(n)) }

// OnQuote reacts to a quote and returns the messages to send (valid until
// the next OnQuote). A quote for an unknown instrument, or crossed, or
// with a non-positive price, is counted and produces nothing.
func (s *Strategy) OnQuote(q *msg.Quote) []Out {
	s.out = s.out[:0]
	s.counts.Quotes++
	if int(q.Instrument) >= len(s.inst) || q.BidPx <= 0 || q.AskPx <= q.BidPx {
		return s.out
	}
	in := &s.inst[q.Instrument]
	in.quotes++

	for oi := in.head; oi != none; oi = s.orders[oi].next {
		o := &s.orders[oi]
		if o.tif == msg.Limit && o.acked && !o.cancelPending && in.quotes-o.bornAt >= uint64(s.cfg.StaleQuotes) {
			o.cancelPending = true
			s.counts.Cancels++
			s.out = append(s.out, Out{IsCancel: true, Cancel: msg.CancelOrder{OrderID: o.id, Instrument: o.instrument, OriginNanos: q.FeedNanos}})
		}
	}

	if s.intn(1000) >= int64(s.cfg.OrderPerMille) || in.open >= s.cfg.MaxOpenPerInstrument {
		return s.out
	}
	if s.free == none {
		s.stats.Skipped++
		return s.out
	}
	s.newOrder(q, in)
	return s.out
}

func (s *Strategy) newOrder(q *msg.Quote, in *instrument) {
	// Lean against the position: buy less when long, more when short.
	buyPerMille := 500 - 500*in.pos.Net/s.cfg.MaxPosition
	buyPerMille = min(max(buyPerMille, 50), 950)
	side := msg.Sell
	if s.intn(1000) < buyPerMille {
		side = msg.Buy
	}
	o := msg.NewOrder{Instrument: q.Instrument, Side: side, Qty: 1 + s.intn(s.cfg.MaxQty), OriginNanos: q.FeedNanos}
	switch {
	case s.intn(1000) < int64(s.cfg.RoguePerMille):
		s.stats.Rogue++
		s.stats.IOC++
		o.TimeInForce = msg.IOC
		o.Price = q.AskPx
		if side == msg.Sell {
			o.Price = q.BidPx
		}
		if s.intn(2) == 0 {
			o.Qty = s.cfg.RogueQty
		} else if side == msg.Buy {
			o.Price = q.AskPx + s.cfg.RogueTicks
		} else {
			o.Price = max(q.BidPx-s.cfg.RogueTicks, 1)
		}
	case s.intn(1000) < int64(s.cfg.AggressivePerMille):
		s.stats.IOC++
		o.TimeInForce = msg.IOC
		k := s.intn(s.cfg.CrossTicks + 1)
		if side == msg.Buy {
			o.Price = q.AskPx + k
		} else {
			o.Price = max(q.BidPx-k, 1)
		}
	default:
		s.stats.Passive++
		o.TimeInForce = msg.Limit
		inside := int64(0)
		if q.AskPx-q.BidPx > 1 {
			inside = s.intn(2)
		}
		if side == msg.Buy {
			o.Price = q.BidPx + inside
		} else {
			o.Price = q.AskPx - inside
		}
	}
	o.OrderID = s.nextID
	s.nextID++

	oi := s.free
	slot := &s.orders[oi]
	s.free = slot.next
	*slot = order{id: o.OrderID, price: o.Price, qty: o.Qty, bornAt: in.quotes, prev: none, next: in.head,
		instrument: o.Instrument, side: o.Side, tif: o.TimeInForce}
	if in.head != none {
		s.orders[in.head].prev = oi
	}
	in.head = oi
	in.open++
	_ = s.ids.Put(o.OrderID, oi) // cannot fail: one id per slot, and ids are unique
	s.counts.Orders++
	s.counts.Open++
	s.out = append(s.out, Out{New: o})
}

// remove forgets order oi: it has ended.
func (s *Strategy) remove(oi int32) {
	o := &s.orders[oi]
	in := &s.inst[o.instrument]
	link := &in.head // the link to o: the head's, or its predecessor's
	if o.prev != none {
		link = &s.orders[o.prev].next
	}
	if *link = o.next; o.next != none {
		s.orders[o.next].prev = o.prev
	}
	in.open--
	s.ids.Delete(o.id)
	*o = order{next: s.free}
	s.free = oi
	s.counts.Open--
}

// OnReport applies an execution report to the order it is about.
func (s *Strategy) OnReport(r *msg.ExecutionReport) {
	if !s.counts.Reports.Count(r.ExecType) {
		s.counts.Unknown++
		return
	}
	oi, ok := s.ids.Get(r.OrderID)
	if r.ExecType == msg.CancelRejected {
		if ok {
			s.orders[oi].cancelPending = false // too late, or lost: the order's own reports will tell
		}
		return
	}
	if !ok {
		s.counts.Unknown++
		return
	}
	o := &s.orders[oi]
	switch r.ExecType {
	case msg.New:
		o.acked = true
	case msg.PartialFill, msg.Fill:
		o.cum += r.LastQty
		s.counts.FilledQty += r.LastQty
		s.inst[o.instrument].pos.Fill(o.side, r.LastPx, r.LastQty)
	}
	if r.ExecType.Terminal() {
		s.remove(oi)
	}
}

// OnRiskReject ends an order that risk refused.
func (s *Strategy) OnRiskReject(r *msg.RiskReject) {
	s.counts.RiskRejects++
	oi, ok := s.ids.Get(r.OrderID)
	if !ok {
		s.counts.Unknown++
		return
	}
	s.remove(oi)
}

// Position returns the filled position of an instrument (0 if unknown).
func (s *Strategy) Position(instrument uint32) int64 {
	if int(instrument) >= len(s.inst) {
		return 0
	}
	return s.inst[instrument].pos.Net
}

// Positions appends every instrument's position, cash and the unfilled
// quantity of its open orders per side to dst[:0], for the
// reconciliation.
func (s *Strategy) Positions(dst []recon.Position) []recon.Position {
	dst = dst[:0]
	for i := range s.inst {
		in := &s.inst[i]
		p := in.pos
		for oi := in.head; oi != none; oi = s.orders[oi].next {
			o := &s.orders[oi]
			if o.side == msg.Buy {
				p.OpenBuy += o.qty - o.cum
			} else {
				p.OpenSell += o.qty - o.cum
			}
		}
		dst = append(dst, p)
	}
	return dst
}

// Open returns the number of open orders.
func (s *Strategy) Open() int { return s.ids.Len() }

// Counts returns the recon.Strategy counters.
func (s *Strategy) Counts() recon.Strategy { return s.counts }

// Stats returns the strategy's own statistics.
func (s *Strategy) Stats() Stats { return s.stats }
