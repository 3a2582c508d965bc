package book

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

// model is the reference: each side a plain slice of orders in priority
// order (best price first, then arrival), matched by the obvious loop.
type model struct {
	bids, asks []OrderInfo
	maxOrders  int
	maxLevels  int
}

func (m *model) side(s msg.Side) *[]OrderInfo {
	if s == msg.Buy {
		return &m.bids
	}
	return &m.asks
}

func (m *model) find(id uint64) (msg.Side, int) {
	for _, s := range []msg.Side{msg.Buy, msg.Sell} {
		for i, o := range *m.side(s) {
			if o.ID == id {
				return s, i
			}
		}
	}
	return 0, -1
}

func levelsOf(orders []OrderInfo) int {
	n := 0
	for i := range orders {
		if i == 0 || orders[i].Price != orders[i-1].Price {
			n++
		}
	}
	return n
}

func (m *model) submit(id uint64, s msg.Side, tif msg.TimeInForce, price, qty int64) (Result, error) {
	if id == 0 || !s.Valid() || !tif.Valid() || price <= 0 || qty <= 0 {
		return Result{}, ErrInvalidOrder
	}
	if _, i := m.find(id); i >= 0 {
		return Result{}, ErrDuplicateID
	}
	own := m.side(s)
	if tif == msg.Limit {
		hasLevel := slices.ContainsFunc(*own, func(o OrderInfo) bool { return o.Price == price })
		if len(m.bids)+len(m.asks) == m.maxOrders || (!hasLevel && levelsOf(*own) == m.maxLevels) {
			return Result{}, ErrFull
		}
	}
	opp := m.side(s.Opposite())
	var res Result
	var cum int64
	for cum < qty && len(*opp) > 0 {
		mk := &(*opp)[0]
		if (s == msg.Buy && mk.Price > price) || (s == msg.Sell && mk.Price < price) {
			break
		}
		q := min(qty-cum, mk.Leaves)
		cum += q
		mk.Cum += q
		mk.Leaves -= q
		res.Fills = append(res.Fills, Fill{TakerID: id, MakerID: mk.ID, TakerSide: s, Price: mk.Price, Qty: q,
			TakerCum: cum, TakerLeaves: qty - cum, MakerQty: mk.Qty, MakerCum: mk.Cum, MakerLeaves: mk.Leaves})
		if mk.Leaves == 0 {
			*opp = (*opp)[1:]
		}
	}
	res.Filled, res.Leaves = cum, qty-cum
	if res.Leaves > 0 && tif == msg.Limit {
		// Insert after every order with an equal or better price.
		i := 0
		for i < len(*own) && ((s == msg.Buy && (*own)[i].Price >= price) || (s == msg.Sell && (*own)[i].Price <= price)) {
			i++
		}
		*own = slices.Insert(*own, i, OrderInfo{ID: id, Side: s, Price: price, Qty: qty, Cum: cum, Leaves: qty - cum})
		res.Rested = true
	}
	return res, nil
}

func (m *model) cancel(id uint64) (OrderInfo, error) {
	s, i := m.find(id)
	if i < 0 {
		return OrderInfo{}, ErrUnknownOrder
	}
	o := (*m.side(s))[i]
	*m.side(s) = slices.Delete(*m.side(s), i, i+1)
	return o, nil
}

func (m *model) depth(s msg.Side) []Level {
	out := []Level{}
	for _, o := range *m.side(s) {
		if n := len(out); n > 0 && out[n-1].Price == o.Price {
			out[n-1].Qty += o.Leaves
			out[n-1].Orders++
		} else {
			out = append(out, Level{Price: o.Price, Qty: o.Leaves, Orders: 1})
		}
	}
	return out
}

// TestAgainstModel drives the book and the model with the same random
// orders and cancels (small capacities so ErrFull happens, a narrow price
// range so orders cross and queue) and requires the same results, the
// same depth and the same resting orders after every step, Check after
// every step, and per-order fill accounting.
func TestAgainstModel(t *testing.T) {
	for seed := range uint64(6) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 99))
			maxOrders, maxLevels := 8+rng.IntN(60), 2+rng.IntN(10)
			b := newBook(t, maxOrders, maxLevels)
			m := &model{maxOrders: maxOrders, maxLevels: maxLevels}
			orderQty := map[uint64]int64{} // every accepted order's quantity
			filledQty := map[uint64]int64{}
			nextID := uint64(1)
			counts := map[string]int{}
			for stepNo := range 5_000 {
				if rng.IntN(4) == 0 {
					// Cancel a random id: recent (often live), or old, or never used.
					id := nextID - uint64(rng.IntN(20))
					if rng.IntN(10) == 0 {
						id = nextID + 1000
					}
					gotInfo, gotErr := b.Cancel(id)
					wantInfo, wantErr := m.cancel(id)
					require.Equal(t, wantErr, gotErr, "step %d cancel %d", stepNo, id)
					require.Equal(t, wantInfo, gotInfo)
					counts[fmt.Sprint("cancel ", gotErr)]++
				} else {
					id := nextID
					nextID++
					if rng.IntN(50) == 0 {
						id = nextID - 1 - uint64(rng.IntN(10)) // maybe a live id: duplicate
					}
					if rng.IntN(100) == 0 {
						id = 0
					}
					s := msg.Side(1 + rng.IntN(2))
					tif := msg.Limit
					if rng.IntN(3) == 0 {
						tif = msg.IOC
					}
					price := int64(95 + rng.IntN(11))
					qty := int64(1 + rng.IntN(12))
					if rng.IntN(200) == 0 {
						qty = -qty
					}
					got, gotErr := b.Submit(id, s, tif, price, qty)
					want, wantErr := m.submit(id, s, tif, price, qty)
					require.Equal(t, wantErr, gotErr, "step %d submit", stepNo)
					if len(want.Fills) == 0 {
						want.Fills = nil
					}
					if len(got.Fills) == 0 {
						got.Fills = nil
					}
					require.Equal(t, want, got, "step %d submit", stepNo)
					if gotErr == nil {
						orderQty[id] = qty // an id is reusable once its order has left the book
						filledQty[id] = 0
						for _, f := range got.Fills {
							filledQty[f.TakerID] += f.Qty
							filledQty[f.MakerID] += f.Qty
							require.LessOrEqual(t, filledQty[f.MakerID], orderQty[f.MakerID], "maker %d overfilled", f.MakerID)
							require.Equal(t, filledQty[f.MakerID], f.MakerCum)
							require.Equal(t, orderQty[f.MakerID], f.MakerCum+f.MakerLeaves)
						}
						require.LessOrEqual(t, filledQty[id], qty, "taker overfilled")
						require.Equal(t, qty, got.Filled+got.Leaves)
						counts[fmt.Sprintf("fills>0=%v rested=%v", len(got.Fills) > 0, got.Rested)]++
					} else {
						counts[gotErr.Error()]++
					}
				}
				require.NoError(t, b.Check(), "step %d", stepNo)
				require.Equal(t, m.depth(msg.Buy), b.Depth(msg.Buy, make([]Level, 0, maxLevels)), "step %d bids", stepNo)
				require.Equal(t, m.depth(msg.Sell), b.Depth(msg.Sell, make([]Level, 0, maxLevels)), "step %d asks", stepNo)
				require.Equal(t, len(m.bids)+len(m.asks), b.Len())
				for _, o := range append(slices.Clone(m.bids), m.asks...) {
					got, ok := b.Order(o.ID)
					require.True(t, ok)
					require.Equal(t, o, got)
				}
			}
			// The mix exercised every path.
			for _, k := range []string{"fills>0=true rested=true", "fills>0=true rested=false", "fills>0=false rested=true",
				"fills>0=false rested=false", "cancel <nil>", "cancel " + ErrUnknownOrder.Error(), ErrFull.Error(),
				ErrDuplicateID.Error(), ErrInvalidOrder.Error()} {
				require.Positive(t, counts[k], "path %q never taken: %v", k, counts)
			}
		})
	}
}
