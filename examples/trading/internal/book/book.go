package book

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/idmap"
	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

// Errors. Submit and Cancel return them unwrapped; New wraps ErrConfig.
var (
	ErrConfig       = errors.New("book: invalid config")
	ErrInvalidOrder = errors.New("book: invalid order (id 0, side, time in force, price or qty outside 1..MaxPrice, 1..MaxQty)")
	ErrDuplicateID  = errors.New("book: an order with this id is resting")
	ErrFull         = errors.New("book: full (no room to rest the order)")
	ErrUnknownOrder = errors.New("book: no resting order with this id")
)

// MaxPrice and MaxQty bound an order's price and quantity: with at most
// 1<<24 resting orders, a level's total (every order at MaxQty) and every
// price the matching computes fit an int64, so no sum the book keeps can
// overflow. Larger values are ErrInvalidOrder.
const (
	MaxPrice = 1 << 52
	MaxQty   = 1 << 38
)

// Config sizes a book. Both fields are required.
type Config struct {
	MaxOrders int // resting orders, 1..1<<24
	MaxLevels int // price levels per side, 1..1<<20
}

// Fill is one trade between the incoming order (taker) and a resting
// order (maker), at the maker's price.
type Fill struct {
	TakerID     uint64
	MakerID     uint64
	TakerSide   msg.Side
	Price       int64
	Qty         int64
	TakerCum    int64 // taker's filled quantity after this fill
	TakerLeaves int64 // taker's unfilled quantity after this fill
	MakerQty    int64 // maker's order quantity
	MakerCum    int64 // maker's filled quantity after this fill
	MakerLeaves int64 // maker's remaining quantity after this fill (0: gone from the book)
}

// Result is the outcome of Submit.
type Result struct {
	Fills  []Fill // valid until the next Submit
	Filled int64  // filled quantity (sum of Fills' Qty)
	Leaves int64  // unfilled quantity: resting if Rested, else cancelled (IOC)
	Rested bool   // the remainder rests in the book
}

// OrderInfo describes a resting order.
type OrderInfo struct {
	ID     uint64
	Side   msg.Side
	Price  int64
	Qty    int64
	Cum    int64
	Leaves int64
}

// Level is an aggregated price level.
type Level struct {
	Price  int64
	Qty    int64 // sum of the resting orders' leaves
	Orders int   // resting orders at this price
}

const none = -1

type order struct {
	id     uint64
	seq    uint64 // arrival number: FIFO order within a level
	price  int64
	qty    int64
	cum    int64
	leaves int64
	prev   int32
	next   int32
	side   msg.Side
}

type level struct {
	price int64
	qty   int64
	count int32
	head  int32
	tail  int32
}

// side holds one side's levels sorted worst to best, so the best level is
// the last one and taking it is a pop.
type side struct {
	levels []level
	buy    bool
}

// better reports whether price a has priority over price b on this side.
func (s *side) better(a, b int64) bool {
	if s.buy {
		return a > b
	}
	return a < b
}

// find returns the index of the level at price and whether it exists; if
// it does not, the index is where it would be inserted.
func (s *side) find(price int64) (int, bool) {
	lo, hi := 0, len(s.levels)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if s.better(price, s.levels[mid].price) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, lo < len(s.levels) && s.levels[lo].price == price
}

// Book is a limit order book for one instrument.
type Book struct {
	orders []order
	free   int32 // head of the free list, linked by next
	ids    *idmap.Map
	bids   side
	asks   side
	seq    uint64
	n      int // resting orders
	fills  []Fill
	cfg    Config
}

// New returns an empty book with all storage for cfg allocated.
func New(cfg Config) (*Book, error) {
	if cfg.MaxOrders < 1 || cfg.MaxOrders > 1<<24 || cfg.MaxLevels < 1 || cfg.MaxLevels > 1<<20 {
		return nil, fmt.Errorf("%w: MaxOrders %d (1..%d), MaxLevels %d (1..%d)",
			ErrConfig, cfg.MaxOrders, 1<<24, cfg.MaxLevels, 1<<20)
	}
	ids, err := idmap.New(cfg.MaxOrders)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	b := &Book{
		orders: make([]order, cfg.MaxOrders),
		ids:    ids,
		bids:   side{levels: make([]level, 0, cfg.MaxLevels), buy: true},
		asks:   side{levels: make([]level, 0, cfg.MaxLevels)},
		fills:  make([]Fill, 0, 64),
		cfg:    cfg,
	}
	for i := range b.orders {
		b.orders[i].next = int32(i + 1)
	}
	b.orders[len(b.orders)-1].next = none
	return b, nil
}

func (b *Book) side(s msg.Side) *side {
	if s == msg.Buy {
		return &b.bids
	}
	return &b.asks
}

// Submit enters an order: it matches what crosses, then rests a Limit
// order's remainder or cancels an IOC order's. See the package comment.
func (b *Book) Submit(id uint64, s msg.Side, tif msg.TimeInForce, price, qty int64) (Result, error) {
	if id == 0 || !s.Valid() || !tif.Valid() || price <= 0 || price > MaxPrice || qty <= 0 || qty > MaxQty {
		return Result{}, ErrInvalidOrder
	}
	if _, dup := b.ids.Get(id); dup {
		return Result{}, ErrDuplicateID
	}
	own := b.side(s)
	if tif == msg.Limit {
		if b.free == none {
			return Result{}, ErrFull
		}
		if _, ok := own.find(price); !ok && len(own.levels) == cap(own.levels) {
			return Result{}, ErrFull
		}
	}

	b.fills = b.fills[:0]
	filled := b.match(id, s, price, qty)
	res := Result{Filled: filled, Leaves: qty - filled}
	if res.Leaves > 0 && tif == msg.Limit {
		b.rest(own, id, s, price, qty, filled)
		res.Rested = true
	}
	res.Fills = b.fills
	return res, nil
}

// match trades the taker against the opposite side and returns the
// filled quantity.
func (b *Book) match(id uint64, s msg.Side, price, qty int64) int64 {
	opp := &b.asks
	if s == msg.Sell {
		opp = &b.bids
	}
	var cum int64
	for cum < qty && len(opp.levels) > 0 {
		lv := &opp.levels[len(opp.levels)-1]
		if opp.better(price, lv.price) {
			break // the taker's limit does not reach the best maker price
		}
		for cum < qty && lv.head != none {
			mi := lv.head
			mk := &b.orders[mi]
			q := min(qty-cum, mk.leaves)
			cum += q
			mk.cum += q
			mk.leaves -= q
			lv.qty -= q
			b.fills = append(b.fills, Fill{
				TakerID: id, MakerID: mk.id, TakerSide: s, Price: lv.price, Qty: q,
				TakerCum: cum, TakerLeaves: qty - cum,
				MakerQty: mk.qty, MakerCum: mk.cum, MakerLeaves: mk.leaves,
			})
			if mk.leaves == 0 {
				b.unlink(lv, mi)
				b.release(mi)
			}
		}
		if lv.head == none {
			opp.levels = opp.levels[:len(opp.levels)-1]
		}
	}
	return cum
}

// rest appends the remainder to its price level (creating the level);
// Submit checked there is room.
func (b *Book) rest(own *side, id uint64, s msg.Side, price, qty, cum int64) {
	oi := b.free
	o := &b.orders[oi]
	b.free = o.next
	b.seq++
	*o = order{id: id, seq: b.seq, price: price, qty: qty, cum: cum, leaves: qty - cum, prev: none, next: none, side: s}
	_ = b.ids.Put(id, oi) // cannot fail: the map holds MaxOrders keys and a slot was free
	b.n++

	i, ok := own.find(price)
	if !ok {
		own.levels = own.levels[:len(own.levels)+1]
		copy(own.levels[i+1:], own.levels[i:])
		own.levels[i] = level{price: price, head: none, tail: none}
	}
	lv := &own.levels[i]
	o.prev = lv.tail
	if lv.tail != none {
		b.orders[lv.tail].next = oi
	} else {
		lv.head = oi
	}
	lv.tail = oi
	lv.count++
	lv.qty += o.leaves
}

// unlink removes order oi from level lv's queue.
func (b *Book) unlink(lv *level, oi int32) {
	o := &b.orders[oi]
	if o.prev != none {
		b.orders[o.prev].next = o.next
	} else {
		lv.head = o.next
	}
	if o.next != none {
		b.orders[o.next].prev = o.prev
	} else {
		lv.tail = o.prev
	}
	lv.count--
}

// release returns order oi's slot to the free list and forgets its id.
func (b *Book) release(oi int32) {
	o := &b.orders[oi]
	b.ids.Delete(o.id)
	*o = order{next: b.free}
	b.free = oi
	b.n--
}

// Cancel removes a resting order and returns it as it was.
func (b *Book) Cancel(id uint64) (OrderInfo, error) {
	oi, ok := b.ids.Get(id)
	if !ok {
		return OrderInfo{}, ErrUnknownOrder
	}
	o := &b.orders[oi]
	info := OrderInfo{ID: o.id, Side: o.side, Price: o.price, Qty: o.qty, Cum: o.cum, Leaves: o.leaves}
	own := b.side(o.side)
	i, _ := own.find(o.price) // present: the order rests there
	lv := &own.levels[i]
	lv.qty -= o.leaves
	b.unlink(lv, oi)
	if lv.head == none {
		own.levels = append(own.levels[:i], own.levels[i+1:]...)
	}
	b.release(oi)
	return info, nil
}

// Order returns the resting order with id.
func (b *Book) Order(id uint64) (OrderInfo, bool) {
	oi, ok := b.ids.Get(id)
	if !ok {
		return OrderInfo{}, false
	}
	o := &b.orders[oi]
	return OrderInfo{ID: o.id, Side: o.side, Price: o.price, Qty: o.qty, Cum: o.cum, Leaves: o.leaves}, true
}

// Each calls f for every resting order, bids then asks, best level first,
// in time priority within a level. f must not change the book.
func (b *Book) Each(f func(OrderInfo)) {
	for _, s := range []*side{&b.bids, &b.asks} {
		for li := len(s.levels) - 1; li >= 0; li-- {
			for oi := s.levels[li].head; oi != none; oi = b.orders[oi].next {
				o := &b.orders[oi]
				f(OrderInfo{ID: o.id, Side: o.side, Price: o.price, Qty: o.qty, Cum: o.cum, Leaves: o.leaves})
			}
		}
	}
}

// BestBid returns the best bid's price and aggregate quantity.
func (b *Book) BestBid() (price, qty int64, ok bool) { return best(&b.bids) }

// BestAsk returns the best ask's price and aggregate quantity.
func (b *Book) BestAsk() (price, qty int64, ok bool) { return best(&b.asks) }

func best(s *side) (int64, int64, bool) {
	if len(s.levels) == 0 {
		return 0, 0, false
	}
	lv := &s.levels[len(s.levels)-1]
	return lv.price, lv.qty, true
}

// Depth appends side s's levels, best first, to dst[:0], at most
// cap(dst) of them (so it never allocates), and returns the slice.
func (b *Book) Depth(s msg.Side, dst []Level) []Level {
	dst = dst[:0]
	levels := b.side(s).levels
	for i := len(levels) - 1; i >= 0 && len(dst) < cap(dst); i-- {
		dst = append(dst, Level{Price: levels[i].price, Qty: levels[i].qty, Orders: int(levels[i].count)})
	}
	return dst
}

// Len returns the number of resting orders.
func (b *Book) Len() int { return b.n }

// Levels returns the number of price levels on side s.
func (b *Book) Levels(s msg.Side) int { return len(b.side(s).levels) }

// Config returns the book's configuration.
func (b *Book) Config() Config { return b.cfg }
