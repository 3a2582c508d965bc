package exchange

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/book"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
	"github.com/dutyrt/duty/examples/trading/internal/recon"
)

// ErrConfig is wrapped by New for an invalid Config.
var ErrConfig = errors.New("exchange: invalid config")

// Defaults for zero Config fields.
const (
	DefaultMaxOrders       = 4096
	DefaultMaxLevels       = 256
	DefaultLiquidityLevels = 3
)

// Config configures an Exchange. Instruments is required; zero values of
// the other fields take the defaults; LiquidityLevels < 0 places no
// participant liquidity.
type Config struct {
	Instruments     int // books, for instruments 0..Instruments-1
	MaxOrders       int // resting orders per book (participants' included)
	MaxLevels       int // price levels per side per book
	LiquidityLevels int // participant price levels per side per quote
}

// Liquidity counts the other participants' activity.
type Liquidity struct {
	Orders    int64 // participant orders placed
	Refused   int64 // participant orders the book had no room for
	FilledQty int64 // quantity participants traded (always with clients)
	BadQuotes int64 // quotes ignored: unknown instrument, crossed or non-positive prices, a price or quantity past the book's bounds
}

// Exchange matches client orders in one book per instrument.
type Exchange struct {
	books    []*book.Book
	house    [][]uint64 // per instrument: participant ids placed from the last quote
	nextHous uint64
	execID   uint64
	reports  []msg.ExecutionReport
	counts   recon.Exchange
	traded   []recon.Position // per instrument: the clients' Net and Cash
	liq      Liquidity
	cfg      Config
}

// New returns an exchange with every book allocated.
func New(cfg Config) (*Exchange, error) {
	cfg.MaxOrders = cmp.Or(cfg.MaxOrders, DefaultMaxOrders)
	cfg.MaxLevels = cmp.Or(cfg.MaxLevels, DefaultMaxLevels)
	cfg.LiquidityLevels = max(0, cmp.Or(cfg.LiquidityLevels, DefaultLiquidityLevels))
	if cfg.Instruments < 1 || cfg.Instruments > 1<<16 || cfg.LiquidityLevels > 64 {
		return nil, fmt.Errorf("%w: Instruments %d (1..%d), LiquidityLevels %d (at most 64)", ErrConfig, cfg.Instruments, 1<<16, cfg.LiquidityLevels)
	}
	e := &Exchange{
		books:    make([]*book.Book, cfg.Instruments),
		house:    make([][]uint64, cfg.Instruments),
		traded:   make([]recon.Position, cfg.Instruments),
		nextHous: msg.MaxClientOrderID + 1,
		reports:  make([]msg.ExecutionReport, 0, 64),
		cfg:      cfg,
	}
	for i := range e.books {
		b, err := book.New(book.Config{MaxOrders: cfg.MaxOrders, MaxLevels: cfg.MaxLevels})
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
		e.books[i] = b
		e.house[i] = make([]uint64, 0, 2*cfg.LiquidityLevels)
	}
	return e, nil
}

// Config returns the configuration with defaults applied.
func (e *Exchange) Config() Config { return e.cfg }

// Book returns instrument i's book (for inspection: do not trade on it
// directly), or nil for an unknown instrument.
func (e *Exchange) Book(i uint32) *book.Book {
	if int(i) >= len(e.books) {
		return nil
	}
	return e.books[i]
}

// Counts returns the client-order counters for reconciliation.
func (e *Exchange) Counts() recon.Exchange { return e.counts }

// Positions appends to dst[:0], per instrument, the clients' position:
// Net and Cash from every trade a client made, OpenBuy and OpenSell from
// the client orders resting in the book. For the reconciliation.
func (e *Exchange) Positions(dst []recon.Position) []recon.Position {
	dst = dst[:0]
	for i, b := range e.books {
		p := e.traded[i]
		b.Each(func(o book.OrderInfo) {
			switch {
			case !isClient(o.ID):
			case o.Side == msg.Buy:
				p.OpenBuy += o.Leaves
			default:
				p.OpenSell += o.Leaves
			}
		})
		dst = append(dst, p)
	}
	return dst
}

// Liquidity returns the participant statistics.
func (e *Exchange) Liquidity() Liquidity { return e.liq }

// Check runs every book's invariant check.
func (e *Exchange) Check() error {
	for i, b := range e.books {
		if err := b.Check(); err != nil {
			return fmt.Errorf("instrument %d: %w", i, err)
		}
	}
	return nil
}

func isClient(id uint64) bool { return id != 0 && id <= msg.MaxClientOrderID }

func (e *Exchange) emit(r msg.ExecutionReport) {
	e.execID++
	r.ExecID = e.execID
	e.counts.Reports.Count(r.ExecType)
	e.reports = append(e.reports, r)
}

func rejectReason(err error) msg.Reason {
	switch err {
	case book.ErrDuplicateID:
		return msg.ReasonDuplicateID
	case book.ErrFull:
		return msg.ReasonBookFull
	}
	return msg.ReasonInvalidOrder
}

// OnNewOrder enters a client order and returns the reports to send.
func (e *Exchange) OnNewOrder(o *msg.NewOrder) []msg.ExecutionReport {
	e.reports = e.reports[:0]
	e.counts.Orders++
	rep := msg.ExecutionReport{
		OrderID: o.OrderID, Instrument: o.Instrument, Side: o.Side,
		OrderQty: o.Qty, OriginNanos: o.OriginNanos,
	}
	if int(o.Instrument) >= len(e.books) {
		return e.refuse(rep, msg.Rejected, msg.ReasonUnknownInstr)
	}
	if !isClient(o.OrderID) {
		return e.refuse(rep, msg.Rejected, msg.ReasonInvalidOrder)
	}
	res, err := e.books[o.Instrument].Submit(o.OrderID, o.Side, o.TimeInForce, o.Price, o.Qty)
	if err != nil {
		rep.ExecType, rep.Reason = msg.Rejected, rejectReason(err)
		e.emit(rep)
		return e.reports
	}
	rep.ExecType, rep.LeavesQty = msg.New, o.Qty
	e.emit(rep)
	e.fills(o.Instrument, res.Fills, o.OriginNanos)
	switch {
	case res.Rested:
		e.counts.Open++
	case res.Leaves > 0: // IOC remainder
		rep.ExecType, rep.Reason = msg.Cancelled, msg.ReasonIOCRemainder
		rep.LeavesQty, rep.CumQty = 0, res.Filled
		e.emit(rep)
	}
	return e.reports
}

// fills reports each fill to the client side(s) of the trade.
func (e *Exchange) fills(instrument uint32, fills []book.Fill, origin int64) {
	for i := range fills {
		f := &fills[i]
		if isClient(f.TakerID) {
			e.traded[instrument].Fill(f.TakerSide, f.Price, f.Qty)
			e.fillReport(instrument, f.TakerID, f.TakerSide, f.TakerCum+f.TakerLeaves, f.Price, f.Qty, f.TakerLeaves, f.TakerCum, origin)
		} else {
			e.liq.FilledQty += f.Qty
		}
		if isClient(f.MakerID) {
			e.traded[instrument].Fill(f.TakerSide.Opposite(), f.Price, f.Qty)
			e.fillReport(instrument, f.MakerID, f.TakerSide.Opposite(), f.MakerQty, f.Price, f.Qty, f.MakerLeaves, f.MakerCum, origin)
			if f.MakerLeaves == 0 {
				e.counts.Open--
			}
		} else {
			e.liq.FilledQty += f.Qty
		}
	}
}

func (e *Exchange) fillReport(instrument uint32, id uint64, s msg.Side, qty, px, last, leaves, cum, origin int64) {
	t := msg.PartialFill
	if leaves == 0 {
		t = msg.Fill
	}
	e.counts.FilledQty += last
	e.emit(msg.ExecutionReport{
		OrderID: id, Instrument: instrument, ExecType: t, Side: s, OrderQty: qty,
		LastPx: px, LastQty: last, LeavesQty: leaves, CumQty: cum, OriginNanos: origin,
	})
}

// refuse emits rep as an answer of type t for reason and returns the
// reports.
func (e *Exchange) refuse(rep msg.ExecutionReport, t msg.ExecType, reason msg.Reason) []msg.ExecutionReport {
	rep.ExecType, rep.Reason = t, reason
	e.emit(rep)
	return e.reports
}

// OnCancel cancels a resting client order and returns the report to send.
func (e *Exchange) OnCancel(c *msg.CancelOrder) []msg.ExecutionReport {
	e.reports = e.reports[:0]
	e.counts.Cancels++
	rep := msg.ExecutionReport{OrderID: c.OrderID, Instrument: c.Instrument, OriginNanos: c.OriginNanos}
	if int(c.Instrument) >= len(e.books) {
		return e.refuse(rep, msg.CancelRejected, msg.ReasonUnknownInstr)
	}
	if !isClient(c.OrderID) {
		return e.refuse(rep, msg.CancelRejected, msg.ReasonUnknownOrder)
	}
	info, err := e.books[c.Instrument].Cancel(c.OrderID)
	if err != nil {
		return e.refuse(rep, msg.CancelRejected, msg.ReasonUnknownOrder)
	}
	e.counts.Open--
	e.counts.CancelledByRequest++
	rep.ExecType, rep.Reason = msg.Cancelled, msg.ReasonCancelRequested
	rep.Side, rep.OrderQty, rep.CumQty = info.Side, info.Qty, info.Cum
	e.emit(rep)
	return e.reports
}

// OnQuote replaces the instrument's participant liquidity (see the package
// comment) and returns the reports for client orders it filled.
func (e *Exchange) OnQuote(q *msg.Quote) []msg.ExecutionReport {
	e.reports = e.reports[:0]
	e.counts.Quotes++
	if int(q.Instrument) >= len(e.books) || q.BidPx <= 0 || q.AskPx <= q.BidPx || q.AskPx > book.MaxPrice ||
		q.BidQty > book.MaxQty || q.AskQty > book.MaxQty {
		e.liq.BadQuotes++
		return e.reports
	}
	b := e.books[q.Instrument]
	ids := e.house[q.Instrument]
	for _, id := range ids {
		_, _ = b.Cancel(id) // ErrUnknownOrder: it was filled since
	}
	ids = ids[:0]
	for k := range int64(e.cfg.LiquidityLevels) {
		if q.AskQty > 0 {
			ids = e.place(b, ids, q, msg.Sell, q.AskPx+k, q.AskQty*(k+1))
		}
		if q.BidQty > 0 && q.BidPx-k > 0 {
			ids = e.place(b, ids, q, msg.Buy, q.BidPx-k, q.BidQty*(k+1))
		}
	}
	e.house[q.Instrument] = ids
	return e.reports
}

func (e *Exchange) place(b *book.Book, ids []uint64, q *msg.Quote, s msg.Side, px, qty int64) []uint64 {
	id := e.nextHous
	e.nextHous++
	res, err := b.Submit(id, s, msg.Limit, px, qty)
	if err != nil {
		e.liq.Refused++
		return ids
	}
	e.liq.Orders++
	e.fills(q.Instrument, res.Fills, q.FeedNanos)
	if res.Rested {
		ids = append(ids, id) // within capacity: 2 per level
	}
	return ids
}
