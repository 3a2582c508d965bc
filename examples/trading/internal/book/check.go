package book

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

// ErrInvariant is wrapped by Check for a violated invariant.
var ErrInvariant = errors.New("book: invariant violated")

// Check verifies every invariant listed in the package comment and returns
// an error wrapping ErrInvariant for the first violation found, or nil.
func (b *Book) Check() error {
	if bb, _, okb := b.BestBid(); okb {
		if ba, _, oka := b.BestAsk(); oka && bb >= ba {
			return fmt.Errorf("%w: crossed book: best bid %d >= best ask %d", ErrInvariant, bb, ba)
		}
	}
	seen := make([]bool, len(b.orders))
	total := 0
	for _, s := range []*side{&b.bids, &b.asks} {
		n, err := b.checkSide(s, seen)
		if err != nil {
			return err
		}
		total += n
	}
	if total != b.n {
		return fmt.Errorf("%w: %d orders in levels, count says %d", ErrInvariant, total, b.n)
	}
	if b.ids.Len() != b.n {
		return fmt.Errorf("%w: id index holds %d ids for %d orders", ErrInvariant, b.ids.Len(), b.n)
	}
	free := 0
	for i := b.free; i != none; i = b.orders[i].next {
		if i < 0 || int(i) >= len(b.orders) || seen[i] {
			return fmt.Errorf("%w: free list reaches slot %d, which is out of range, live or on it twice", ErrInvariant, i)
		}
		seen[i] = true
		free++
	}
	if free+b.n != len(b.orders) {
		return fmt.Errorf("%w: %d free + %d resting slots != %d", ErrInvariant, free, b.n, len(b.orders))
	}
	return nil
}

func (b *Book) checkSide(s *side, seen []bool) (int, error) {
	name, want := "ask", msg.Sell
	if s.buy {
		name, want = "bid", msg.Buy
	}
	total := 0
	for li := range s.levels {
		lv := &s.levels[li]
		if li > 0 && !s.better(lv.price, s.levels[li-1].price) {
			return 0, fmt.Errorf("%w: %s levels out of order at %d: %d after %d", ErrInvariant, name, li, lv.price, s.levels[li-1].price)
		}
		if lv.head == none || lv.count <= 0 || lv.qty <= 0 {
			return 0, fmt.Errorf("%w: empty %s level at %d (count %d, qty %d)", ErrInvariant, name, lv.price, lv.count, lv.qty)
		}
		var qty int64
		var count int32
		var lastSeq uint64
		prev := int32(none)
		for oi := lv.head; oi != none; oi = b.orders[oi].next {
			if oi < 0 || int(oi) >= len(b.orders) || seen[oi] {
				return 0, fmt.Errorf("%w: %s level %d reaches slot %d twice or out of range", ErrInvariant, name, lv.price, oi)
			}
			seen[oi] = true
			o := &b.orders[oi]
			switch {
			case o.prev != prev:
				return 0, fmt.Errorf("%w: order %d: prev link %d, want %d", ErrInvariant, o.id, o.prev, prev)
			case o.side != want || o.price != lv.price:
				return 0, fmt.Errorf("%w: order %d (%s at %d) in %s level %d", ErrInvariant, o.id, o.side, o.price, name, lv.price)
			case o.seq <= lastSeq:
				return 0, fmt.Errorf("%w: FIFO broken at %s level %d: order %d (arrival %d) after arrival %d", ErrInvariant, name, lv.price, o.id, o.seq, lastSeq)
			case o.qty <= 0 || o.cum < 0 || o.leaves <= 0 || o.cum >= o.qty || o.cum+o.leaves != o.qty:
				return 0, fmt.Errorf("%w: order %d quantities: qty %d cum %d leaves %d", ErrInvariant, o.id, o.qty, o.cum, o.leaves)
			}
			if got, ok := b.ids.Get(o.id); !ok || got != oi {
				return 0, fmt.Errorf("%w: order %d not indexed at its slot %d", ErrInvariant, o.id, oi)
			}
			lastSeq = o.seq
			qty += o.leaves
			count++
			prev = oi
		}
		if prev != lv.tail {
			return 0, fmt.Errorf("%w: %s level %d: tail %d, last order in slot %d", ErrInvariant, name, lv.price, lv.tail, prev)
		}
		if qty != lv.qty || count != lv.count {
			return 0, fmt.Errorf("%w: %s level %d says qty %d count %d, orders sum to %d and %d", ErrInvariant, name, lv.price, lv.qty, lv.count, qty, count)
		}
		total += int(count)
	}
	return total, nil
}
