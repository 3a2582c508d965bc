package recon

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/examples/trading/internal/msg"
)

// balanced returns a ledger where everything adds up: 50 orders, 5
// rejected by risk, 1 by the exchange, 44 acked (30 filled, 10 cancelled:
// 6 on request and 4 IOC remainders, 4 still open), 8 cancel requests (6
// done, 2 too late).
func balanced() Ledger {
	reports := Reports{Acks: 44, PartialFills: 12, Fills: 30, Cancelled: 10, Rejected: 1, CancelRejects: 2}
	var byReason [msg.NumReasons]int64
	byReason[msg.ReasonPriceBand] = 3
	byReason[msg.ReasonOrderRate] = 2
	return Ledger{
		Feed:     Feed{Quotes: 100},
		Strategy: Strategy{Quotes: 100, Orders: 50, Cancels: 8, Reports: reports, RiskRejects: 5, FilledQty: 500, Open: 4},
		Risk:     Risk{Quotes: 100, Orders: 50, Passed: 45, Rejected: 5, RejectedBy: byReason, Cancels: 8, Reports: reports, FilledQty: 500},
		Exchange: Exchange{Quotes: 100, Orders: 45, Cancels: 8, Reports: reports, CancelledByRequest: 6, FilledQty: 500, Open: 4},
	}.withPositions()
}

// withPositions gives every stage the same positions for two instruments.
func (l Ledger) withPositions() Ledger {
	pos := func() []Position {
		return []Position{{Net: 20, Cash: -200_000, OpenBuy: 15, OpenSell: 0}, {Net: -5, Cash: 51_000, OpenBuy: 3, OpenSell: 7}}
	}
	l.Strategy.Positions, l.Risk.Positions, l.Exchange.Positions = pos(), pos(), pos()
	return l
}

func TestBalanced(t *testing.T) {
	l := balanced()
	require.Empty(t, l.Check())
	require.Equal(t, "reconciliation: ok", l.Line())
	var zero Ledger
	require.Equal(t, "reconciliation: ok", zero.Line(), "an empty run adds up")
}

func TestDetectsEachMismatch(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(l *Ledger)
		want   []string // every problem line, by prefix
	}{
		{"quote lost to strategy", func(l *Ledger) { l.Strategy.Quotes-- }, []string{"quotes: generated 100 != strategy received 99"}},
		{"quote lost to risk", func(l *Ledger) { l.Risk.Quotes-- }, []string{"quotes: generated 100 != risk received 99"}},
		{"quote lost to exchange", func(l *Ledger) { l.Exchange.Quotes++ }, []string{"quotes: generated 100 != exchange received 101"}},
		{"order lost between strategy and risk", func(l *Ledger) { l.Strategy.Orders++; l.Strategy.Open++ },
			[]string{"orders: strategy sent 51 != risk received 50", "open orders: strategy 5 != exchange 4"}},
		{"risk neither passed nor rejected", func(l *Ledger) { l.Risk.Orders++; l.Strategy.Orders++; l.Strategy.Open++ },
			[]string{"orders: risk received 51 != passed+rejected 50", "open orders"}},
		{"reject reasons do not add up", func(l *Ledger) { l.Risk.RejectedBy[msg.ReasonPositionLimit]++ },
			[]string{"risk rejects: total 5 != sum by reason 6"}},
		{"risk reject lost", func(l *Ledger) { l.Strategy.RiskRejects--; l.Strategy.Open++ },
			[]string{"risk rejects: risk sent 5 != strategy received 4", "open orders: strategy 5 != exchange 4"}},
		{"order lost between risk and exchange", func(l *Ledger) { l.Exchange.Orders-- },
			[]string{"orders: risk passed 45 != exchange received 44", "exchange orders: received 44 != acked+rejected 45"}},
		{"cancel lost before risk", func(l *Ledger) { l.Strategy.Cancels++ }, []string{"cancels: strategy sent 9 != risk forwarded 8"}},
		{"cancel lost before exchange", func(l *Ledger) { l.Risk.Cancels++; l.Strategy.Cancels++ },
			[]string{"cancels: risk forwarded 9 != exchange received 8"}},
		{"cancel unanswered", func(l *Ledger) { l.Exchange.CancelledByRequest-- },
			[]string{"cancels: exchange received 8 != cancelled+cancel-rejected 7"}},
		{"order neither acked nor rejected", func(l *Ledger) {
			l.Exchange.Orders++
			l.Risk.Passed++
			l.Risk.Orders++
			l.Strategy.Orders++
			l.Strategy.Open++
		}, []string{"exchange orders: received 46 != acked+rejected 45", "open orders: strategy 5 != exchange 4"}},
		{"acked order without terminal state", func(l *Ledger) { l.Exchange.Open-- },
			[]string{"exchange orders: acked 44 != filled+cancelled+open 43", "open orders: strategy 4 != exchange 3"}},
		{"order terminated twice", func(l *Ledger) { l.Exchange.Reports.Fills++ },
			[]string{"exchange orders: acked 44 != filled+cancelled+open 45", "fills: exchange sent 31 != strategy received 30", "fills: exchange sent 31 != risk received 30"}},
		{"report lost to strategy", func(l *Ledger) { l.Strategy.Reports.PartialFills-- },
			[]string{"partial fills: exchange sent 12 != strategy received 11"}},
		{"report lost to risk", func(l *Ledger) { l.Risk.Reports.Acks-- }, []string{"acks: exchange sent 44 != risk received 43"}},
		{"cancel reject lost", func(l *Ledger) { l.Strategy.Reports.CancelRejects-- },
			[]string{"cancel rejects: exchange sent 2 != strategy received 1"}},
		{"rejected report lost", func(l *Ledger) { l.Risk.Reports.Rejected-- }, []string{"rejected: exchange sent 1 != risk received 0"}},
		{"cancelled report duplicated", func(l *Ledger) { l.Strategy.Reports.Cancelled++; l.Strategy.Open-- },
			[]string{"cancelled: exchange sent 10 != strategy received 11", "open orders: strategy 3 != exchange 4"}},
		{"strategy lost track of an order", func(l *Ledger) { l.Strategy.Open-- },
			[]string{"strategy orders: sent 50 != filled+cancelled+rejected+risk-rejected+open 49", "open orders: strategy 3 != exchange 4"}},
		{"unknown report", func(l *Ledger) { l.Strategy.Unknown = 2 }, []string{"unknown reports: strategy 2 != expected 0"}},
		{"fill quantity differs at strategy", func(l *Ledger) { l.Strategy.FilledQty += 3 }, []string{"filled qty: exchange 500 != strategy 503"}},
		{"fill quantity differs at risk", func(l *Ledger) { l.Risk.FilledQty-- }, []string{"filled qty: exchange 500 != risk 499"}},
		{"fill of 4 with the wrong side at risk", func(l *Ledger) {
			p := &l.Risk.Positions[1]
			p.Net -= 8
			p.Cash += 8 * 10_200
			p.OpenSell -= 4
			p.OpenBuy += 4
		}, []string{"position of instrument 1: exchange {Net:-5 Cash:51000 OpenBuy:3 OpenSell:7} != risk {Net:-13 Cash:132600 OpenBuy:7 OpenSell:3}"}},
		{"fill at the wrong price at the strategy", func(l *Ledger) { l.Strategy.Positions[0].Cash-- },
			[]string{"position of instrument 0: exchange {Net:20 Cash:-200000 OpenBuy:15 OpenSell:0} != strategy {Net:20 Cash:-200001 OpenBuy:15 OpenSell:0}"}},
		{"open quantity released twice at risk", func(l *Ledger) { l.Risk.Positions[0].OpenBuy -= 10 },
			[]string{"position of instrument 0: exchange {Net:20 Cash:-200000 OpenBuy:15 OpenSell:0} != risk {Net:20 Cash:-200000 OpenBuy:5 OpenSell:0}"}},
		{"positions missing", func(l *Ledger) { l.Strategy.Positions = nil }, []string{"positions: exchange has 2 instruments, strategy 0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := balanced()
			tt.mutate(&l)
			got := l.Check()
			require.Len(t, got, len(tt.want), "%q", got)
			for i, w := range tt.want {
				require.True(t, strings.HasPrefix(got[i], w), "problem %d: got %q, want prefix %q", i, got[i], w)
			}
			line := l.Line()
			require.True(t, strings.HasPrefix(line, "reconciliation: "))
			require.NotContains(t, line, "ok")
			require.Contains(t, line, tt.want[0])
		})
	}
}

func TestReportsCount(t *testing.T) {
	var r Reports
	for _, e := range []msg.ExecType{msg.New, msg.PartialFill, msg.PartialFill, msg.Fill, msg.Cancelled, msg.Rejected, msg.CancelRejected} {
		require.True(t, r.Count(e))
	}
	require.False(t, r.Count(0))
	require.False(t, r.Count(77))
	require.Equal(t, Reports{Acks: 1, PartialFills: 2, Fills: 1, Cancelled: 1, Rejected: 1, CancelRejects: 1}, r)
	require.Equal(t, int64(7), r.Total())
}
