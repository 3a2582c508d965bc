package book

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

func newBook(t testing.TB, orders, levels int) *Book {
	t.Helper()
	b, err := New(Config{MaxOrders: orders, MaxLevels: levels})
	require.NoError(t, err)
	return b
}

func TestNewConfig(t *testing.T) {
	for _, cfg := range []Config{{}, {MaxOrders: 1}, {MaxLevels: 1}, {MaxOrders: 1 << 25, MaxLevels: 1}, {MaxOrders: 1, MaxLevels: 1 << 21}} {
		_, err := New(cfg)
		require.ErrorIs(t, err, ErrConfig, "%+v", cfg)
	}
	b := newBook(t, 1, 1)
	require.Equal(t, Config{MaxOrders: 1, MaxLevels: 1}, b.Config())
	require.NoError(t, b.Check())
}

// op is one step of a scenario: a submit (qty > 0) or a cancel.
type op struct {
	cancel bool
	id     uint64
	side   msg.Side
	tif    msg.TimeInForce
	price  int64
	qty    int64

	wantErr    error
	wantFills  []Fill // only TakerID, MakerID, Price, Qty, MakerLeaves compared
	wantLeaves int64
	wantRested bool
}

func lim(id uint64, s msg.Side, price, qty int64) op {
	return op{id: id, side: s, tif: msg.Limit, price: price, qty: qty}
}

func ioc(id uint64, s msg.Side, price, qty int64) op {
	return op{id: id, side: s, tif: msg.IOC, price: price, qty: qty}
}

func (o op) rests() op          { o.wantRested = true; o.wantLeaves = o.qty; return o }
func (o op) fails(err error) op { o.wantErr = err; return o }
func (o op) fills(leaves int64, rested bool, f ...Fill) op {
	o.wantFills, o.wantLeaves, o.wantRested = f, leaves, rested
	return o
}

func fill(taker, maker uint64, price, qty, makerLeaves int64) Fill {
	return Fill{TakerID: taker, MakerID: maker, Price: price, Qty: qty, MakerLeaves: makerLeaves}
}

func cancel(id uint64, err error) op { return op{cancel: true, id: id, wantErr: err} }

func TestMatchingScenarios(t *testing.T) {
	const B, S = msg.Buy, msg.Sell
	tests := []struct {
		name     string
		ops      []op
		wantBids []Level
		wantAsks []Level
	}{
		{
			name:     "non-crossing orders rest",
			ops:      []op{lim(1, B, 99, 5).rests(), lim(2, S, 101, 7).rests(), lim(3, B, 98, 1).rests()},
			wantBids: []Level{{99, 5, 1}, {98, 1, 1}},
			wantAsks: []Level{{101, 7, 1}},
		},
		{
			name: "full fill at the maker's price",
			ops: []op{
				lim(1, S, 100, 5).rests(),
				lim(2, B, 103, 5).fills(0, false, fill(2, 1, 100, 5, 0)),
			},
		},
		{
			name: "partial fills across levels, remainder rests",
			ops: []op{
				lim(1, S, 100, 3).rests(), lim(2, S, 101, 4).rests(), lim(3, S, 103, 9).rests(),
				lim(4, B, 102, 10).fills(3, true, fill(4, 1, 100, 3, 0), fill(4, 2, 101, 4, 0)),
			},
			wantBids: []Level{{102, 3, 1}},
			wantAsks: []Level{{103, 9, 1}},
		},
		{
			name: "maker partially filled keeps its place",
			ops: []op{
				lim(1, B, 100, 10).rests(), lim(2, B, 100, 5).rests(),
				lim(3, S, 100, 4).fills(0, false, fill(3, 1, 100, 4, 6)),
				lim(4, S, 99, 8).fills(0, false, fill(4, 1, 100, 6, 0), fill(4, 2, 100, 2, 3)),
			},
			wantBids: []Level{{100, 3, 1}},
		},
		{
			name: "time priority at one price",
			ops: []op{
				lim(1, S, 100, 2).rests(), lim(2, S, 100, 2).rests(), lim(3, S, 100, 2).rests(),
				ioc(4, B, 100, 5).fills(0, false, fill(4, 1, 100, 2, 0), fill(4, 2, 100, 2, 0), fill(4, 3, 100, 1, 1)),
			},
			wantAsks: []Level{{100, 1, 1}},
		},
		{
			name: "price before time",
			ops: []op{
				lim(1, S, 101, 2).rests(), lim(2, S, 100, 2).rests(),
				ioc(3, B, 101, 3).fills(0, false, fill(3, 2, 100, 2, 0), fill(3, 1, 101, 1, 1)),
			},
			wantAsks: []Level{{101, 1, 1}},
		},
		{
			name: "IOC remainder cancelled, never rests",
			ops: []op{
				lim(1, B, 100, 4).rests(),
				ioc(2, S, 100, 10).fills(6, false, fill(2, 1, 100, 4, 0)),
				ioc(3, S, 90, 1).fills(1, false),
			},
		},
		{
			name: "IOC that does not cross fills nothing",
			ops: []op{
				lim(1, S, 105, 4).rests(),
				ioc(2, B, 104, 4).fills(4, false),
			},
			wantAsks: []Level{{105, 4, 1}},
		},
		{
			name: "cancel resting, unknown, already filled, already cancelled, IOC",
			ops: []op{
				lim(1, B, 100, 4).rests(), lim(2, B, 100, 4).rests(), lim(3, S, 102, 1).rests(),
				cancel(1, nil),
				cancel(1, ErrUnknownOrder),
				cancel(77, ErrUnknownOrder),
				ioc(4, B, 102, 1).fills(0, false, fill(4, 3, 102, 1, 0)),
				cancel(3, ErrUnknownOrder),
				cancel(4, ErrUnknownOrder),
				ioc(5, S, 100, 1).fills(0, false, fill(5, 2, 100, 1, 3)),
				cancel(2, nil),
			},
		},
		{
			name: "cancel in the middle of a level keeps FIFO",
			ops: []op{
				lim(1, S, 100, 1).rests(), lim(2, S, 100, 1).rests(), lim(3, S, 100, 1).rests(),
				cancel(2, nil),
				ioc(4, B, 100, 2).fills(0, false, fill(4, 1, 100, 1, 0), fill(4, 3, 100, 1, 0)),
			},
		},
		{
			name: "invalid orders",
			ops: []op{
				lim(0, B, 100, 1).fails(ErrInvalidOrder),
				lim(1, 0, 100, 1).fails(ErrInvalidOrder),
				{id: 1, side: B, tif: 0, price: 100, qty: 1, wantErr: ErrInvalidOrder},
				lim(1, B, 0, 1).fails(ErrInvalidOrder),
				lim(1, B, 100, 0).fails(ErrInvalidOrder),
				lim(1, B, 100, -3).fails(ErrInvalidOrder),
			},
		},
		{
			name: "duplicate id of a resting order",
			ops: []op{
				lim(1, B, 100, 1).rests(),
				lim(1, S, 101, 1).fails(ErrDuplicateID),
				ioc(1, S, 100, 1).fails(ErrDuplicateID),
			},
			wantBids: []Level{{100, 1, 1}},
		},
		{
			name: "full: orders, then levels; IOC needs no room; refused order has no effect",
			ops: []op{
				lim(1, B, 100, 1).rests(), lim(2, B, 99, 1).rests(), lim(3, S, 101, 1).rests(),
				lim(4, S, 100, 1).fails(ErrFull), // would fill 1 at 100, but is refused before matching
				ioc(5, S, 100, 1).fills(0, false, fill(5, 1, 100, 1, 0)),
				lim(6, S, 102, 1).rests(),
				cancel(2, nil),
				lim(7, S, 103, 1).fails(ErrFull), // a slot is free, but no new ask level (MaxLevels 2)
				lim(8, S, 101, 1).rests(),        // an existing level: fine
			},
			wantAsks: []Level{{101, 2, 2}, {102, 1, 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBook(t, 3, 2)
			if tt.name != "full: orders, then levels; IOC needs no room; refused order has no effect" {
				b = newBook(t, 16, 16)
			}
			for i, o := range tt.ops {
				if o.cancel {
					info, err := b.Cancel(o.id)
					require.ErrorIs(t, err, o.wantErr, "op %d", i)
					if err == nil {
						require.Equal(t, o.id, info.ID)
					}
				} else {
					res, err := b.Submit(o.id, o.side, o.tif, o.price, o.qty)
					if o.wantErr != nil {
						require.ErrorIs(t, err, o.wantErr, "op %d", i)
						require.Equal(t, Result{}, res)
					} else {
						require.NoError(t, err, "op %d", i)
						got := make([]Fill, len(res.Fills))
						var sum int64
						for j, f := range res.Fills {
							got[j] = Fill{TakerID: f.TakerID, MakerID: f.MakerID, Price: f.Price, Qty: f.Qty, MakerLeaves: f.MakerLeaves}
							sum += f.Qty
						}
						if o.wantFills == nil {
							o.wantFills = []Fill{}
						}
						require.Equal(t, o.wantFills, got, "op %d fills", i)
						require.Equal(t, sum, res.Filled)
						require.Equal(t, o.wantLeaves, res.Leaves, "op %d leaves", i)
						require.Equal(t, o.qty, res.Filled+res.Leaves)
						require.Equal(t, o.wantRested, res.Rested, "op %d rested", i)
					}
				}
				require.NoError(t, b.Check(), "op %d", i)
			}
			bids := b.Depth(msg.Buy, make([]Level, 0, 32))
			asks := b.Depth(msg.Sell, make([]Level, 0, 32))
			if tt.wantBids == nil {
				tt.wantBids = []Level{}
			}
			if tt.wantAsks == nil {
				tt.wantAsks = []Level{}
			}
			require.Equal(t, tt.wantBids, bids)
			require.Equal(t, tt.wantAsks, asks)
		})
	}
}

func TestFillDetails(t *testing.T) {
	b := newBook(t, 8, 8)
	_, err := b.Submit(1, msg.Sell, msg.Limit, 100, 10)
	require.NoError(t, err)
	res, err := b.Submit(2, msg.Buy, msg.Limit, 100, 4)
	require.NoError(t, err)
	require.Equal(t, []Fill{{TakerID: 2, MakerID: 1, TakerSide: msg.Buy, Price: 100, Qty: 4,
		TakerCum: 4, TakerLeaves: 0, MakerQty: 10, MakerCum: 4, MakerLeaves: 6}}, res.Fills)
	info, ok := b.Order(1)
	require.True(t, ok)
	require.Equal(t, OrderInfo{ID: 1, Side: msg.Sell, Price: 100, Qty: 10, Cum: 4, Leaves: 6}, info)
	_, ok = b.Order(2)
	require.False(t, ok)

	res, err = b.Submit(3, msg.Buy, msg.Limit, 99, 5)
	require.NoError(t, err)
	require.Empty(t, res.Fills)
	px, qty, ok := b.BestBid()
	require.Equal(t, []any{int64(99), int64(5), true}, []any{px, qty, ok})
	px, qty, ok = b.BestAsk()
	require.Equal(t, []any{int64(100), int64(6), true}, []any{px, qty, ok})
	require.Equal(t, 2, b.Len())
	require.Equal(t, 1, b.Levels(msg.Buy))

	got, err := b.Cancel(1)
	require.NoError(t, err)
	require.Equal(t, OrderInfo{ID: 1, Side: msg.Sell, Price: 100, Qty: 10, Cum: 4, Leaves: 6}, got)
	_, _, ok = b.BestAsk()
	require.False(t, ok)
	require.Equal(t, 1, b.Len())
	require.Len(t, b.Depth(msg.Buy, make([]Level, 0, 1)), 1)
	require.Empty(t, b.Depth(msg.Buy, nil), "Depth never grows dst")
}

// TestEach lists the resting orders: bids then asks, best level first,
// time priority within a level, with their fills.
func TestEach(t *testing.T) {
	b := newBook(t, 8, 8)
	for _, o := range []struct {
		id    uint64
		side  msg.Side
		price int64
		qty   int64
	}{{1, msg.Buy, 99, 5}, {2, msg.Buy, 100, 3}, {3, msg.Buy, 99, 2}, {4, msg.Sell, 102, 4}, {5, msg.Sell, 101, 6}, {6, msg.Sell, 100, 1}} {
		_, err := b.Submit(o.id, o.side, msg.Limit, o.price, o.qty)
		require.NoError(t, err)
	}
	var got []OrderInfo
	b.Each(func(o OrderInfo) { got = append(got, o) })
	require.Equal(t, []OrderInfo{
		{ID: 2, Side: msg.Buy, Price: 100, Qty: 3, Cum: 1, Leaves: 2},
		{ID: 1, Side: msg.Buy, Price: 99, Qty: 5, Leaves: 5},
		{ID: 3, Side: msg.Buy, Price: 99, Qty: 2, Leaves: 2},
		{ID: 5, Side: msg.Sell, Price: 101, Qty: 6, Leaves: 6},
		{ID: 4, Side: msg.Sell, Price: 102, Qty: 4, Leaves: 4},
	}, got)
}

// TestCheckDetects corrupts a book in each way Check guards against and
// requires Check to notice: the invariant test can fail.
func TestCheckDetects(t *testing.T) {
	build := func() *Book {
		b := newBook(t, 8, 8)
		for i, o := range []struct {
			s     msg.Side
			price int64
		}{{msg.Buy, 99}, {msg.Buy, 99}, {msg.Buy, 98}, {msg.Sell, 101}, {msg.Sell, 102}} {
			_, err := b.Submit(uint64(i+1), o.s, msg.Limit, o.price, 5)
			require.NoError(t, err)
		}
		require.NoError(t, b.Check())
		return b
	}
	corruptions := map[string]func(b *Book){
		"crossed":     func(b *Book) { b.asks.levels[len(b.asks.levels)-1].price = 99 },
		"level order": func(b *Book) { b.bids.levels[0].price = 100 },
		"level qty":   func(b *Book) { b.bids.levels[1].qty++ },
		"fifo":        func(b *Book) { b.orders[0].seq = 10 },
		"overfill":    func(b *Book) { b.orders[0].cum = 6 },
		"cum+leaves":  func(b *Book) { b.orders[0].cum = 1 },
		"wrong side":  func(b *Book) { b.orders[3].side = msg.Buy },
		"index":       func(b *Book) { b.ids.Delete(b.orders[2].id) },
		"count":       func(b *Book) { b.n++ },
		"free list":   func(b *Book) { b.orders[b.free].next = 0 },
		"empty level": func(b *Book) {
			b.asks.levels = append(b.asks.levels[:0], level{price: 110, head: none, tail: none}, b.asks.levels[0], b.asks.levels[1])
		},
		"broken prev":   func(b *Book) { b.orders[1].prev = none },
		"wrong tail":    func(b *Book) { b.bids.levels[1].tail = 0 },
		"level count":   func(b *Book) { b.bids.levels[1].count = 3 },
		"leaves zero":   func(b *Book) { b.orders[2].leaves, b.orders[2].cum = 0, 5 },
		"order price":   func(b *Book) { b.orders[2].price = 97 },
		"slot repeated": func(b *Book) { b.orders[1].next = 0 },
	}
	for name, corrupt := range corruptions {
		b := build()
		corrupt(b)
		err := b.Check()
		require.ErrorIs(t, err, ErrInvariant, name)
		t.Logf("%s: %v", name, err)
	}
}

func TestSteadyStateAllocatesNothing(t *testing.T) {
	b := newBook(t, 1024, 64)
	id := uint64(1)
	// Warm up so the fill buffer reaches its working size.
	for range 1000 {
		step(b, &id)
	}
	allocs := testing.AllocsPerRun(10_000, func() { step(b, &id) })
	require.Zero(t, allocs)
	require.NoError(t, b.Check())
}

// step is a deterministic mix of resting, crossing, IOC and cancels used by
// the allocation test and the benchmarks.
func step(b *Book, id *uint64) {
	n := *id
	*id++
	s := msg.Buy
	if n%2 == 0 {
		s = msg.Sell
	}
	price := int64(1000 + n%7)
	if s == msg.Sell {
		price = int64(1003 + n%7)
	}
	switch n % 5 {
	case 0, 1, 2:
		_, _ = b.Submit(n, s, msg.Limit, price, int64(1+n%9))
	case 3:
		_, _ = b.Submit(n, s, msg.IOC, price+int64(n%3)*3-3, int64(1+n%13))
	case 4:
		_, _ = b.Cancel(n - 10)
	}
}

// Prices and quantities past MaxPrice and MaxQty are refused, so that no
// sum the book keeps overflows: a level full of orders at MaxQty and a
// taker at MaxQty leave every invariant intact.
func TestPriceAndQtyBounds(t *testing.T) {
	b := newBook(t, 8, 2)
	for _, o := range []struct{ price, qty int64 }{{MaxPrice + 1, 1}, {1, MaxQty + 1}, {-1 << 62, 1}, {1, -1 << 62}} {
		_, err := b.Submit(1, msg.Sell, msg.Limit, o.price, o.qty)
		require.ErrorIs(t, err, ErrInvalidOrder, "price %d qty %d", o.price, o.qty)
	}
	for id := range uint64(7) {
		_, err := b.Submit(id+1, msg.Sell, msg.Limit, MaxPrice, MaxQty)
		require.NoError(t, err)
	}
	require.NoError(t, b.Check())
	res, err := b.Submit(100, msg.Buy, msg.IOC, MaxPrice, MaxQty)
	require.NoError(t, err)
	require.Equal(t, int64(MaxQty), res.Filled)
	require.NoError(t, b.Check())
}
