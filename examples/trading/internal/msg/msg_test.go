package msg

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/dutyrt/duty/mailbox"
)

// codec is the typed-message method set package mailbox expects
// (mailbox.Encoder and mailbox.Decoder together).
type codec interface {
	TypeID() int32
	EncodedLen() int
	Encode(b []byte)
	Decode(b []byte) error
}

var (
	_ mailbox.Encoder = (*Quote)(nil)
	_ mailbox.Decoder = (*Quote)(nil)
	_ mailbox.Encoder = (*ExecutionReport)(nil)
	_ mailbox.Decoder = (*RiskReject)(nil)

	_ codec = (*Quote)(nil)
	_ codec = (*NewOrder)(nil)
	_ codec = (*CancelOrder)(nil)
	_ codec = (*ExecutionReport)(nil)
	_ codec = (*RiskReject)(nil)
)

// padding lists the padding byte ranges of each layout: [from, to).
var padding = map[int32][][2]int{
	TypeQuote:           {{4, 8}},
	TypeNewOrder:        {{14, 16}},
	TypeCancelOrder:     {{12, 16}},
	TypeExecutionReport: {{23, 24}},
	TypeRiskReject:      {{14, 16}},
}

func samples() []codec {
	return []codec{
		&Quote{Instrument: 7, Seq: 42, FeedNanos: 1_000_000_123, BidPx: 9_999, BidQty: 12, AskPx: 10_001, AskQty: 34},
		&NewOrder{OrderID: 99, Instrument: 3, Side: Sell, TimeInForce: IOC, Price: 10_002, Qty: 25, OriginNanos: -5},
		&CancelOrder{OrderID: 1 << 40, Instrument: 1<<32 - 1, OriginNanos: 77},
		&ExecutionReport{OrderID: 5, ExecID: 6, Instrument: 2, ExecType: PartialFill, Reason: ReasonNone, Side: Buy,
			OrderQty: 100, LastPx: 10_000, LastQty: 30, LeavesQty: 70, CumQty: 30, OriginNanos: 123_456},
		&RiskReject{OrderID: 8, Instrument: 1, Reason: ReasonPriceBand, Side: Buy, Price: 1, Qty: 2, OriginNanos: 3},
	}
}

func fresh(typeID int32) codec {
	switch typeID {
	case TypeQuote:
		return &Quote{}
	case TypeNewOrder:
		return &NewOrder{}
	case TypeCancelOrder:
		return &CancelOrder{}
	case TypeExecutionReport:
		return &ExecutionReport{}
	case TypeRiskReject:
		return &RiskReject{}
	}
	panic("unknown type")
}

func TestTypeIDsAndLengths(t *testing.T) {
	seen := map[int32]bool{}
	want := map[int32]int{
		TypeQuote: QuoteLen, TypeNewOrder: NewOrderLen, TypeCancelOrder: CancelOrderLen,
		TypeExecutionReport: ExecutionReportLen, TypeRiskReject: RiskRejectLen,
	}
	for _, m := range samples() {
		id := m.TypeID()
		require.GreaterOrEqual(t, id, int32(1))
		require.False(t, seen[id], "duplicate type id %d", id)
		seen[id] = true
		require.Equal(t, want[id], m.EncodedLen())
		require.Zero(t, m.EncodedLen()%8, "layouts are multiples of 8 bytes")
	}
	require.Len(t, seen, 5)
}

func TestRoundTrip(t *testing.T) {
	for _, m := range samples() {
		b := make([]byte, m.EncodedLen())
		m.Encode(b)
		got := fresh(m.TypeID())
		require.NoError(t, got.Decode(b))
		require.Equal(t, m, got)

		// Trailing bytes are ignored.
		long := append(append([]byte{}, b...), 0xEE, 0xEE, 0xEE)
		got = fresh(m.TypeID())
		require.NoError(t, got.Decode(long))
		require.Equal(t, m, got)
	}
}

func TestEncodeZeroesPaddingAndWritesOnlyItsLength(t *testing.T) {
	for _, m := range samples() {
		b := bytes.Repeat([]byte{0xAB}, m.EncodedLen()+8)
		m.Encode(b)
		for _, p := range padding[m.TypeID()] {
			for i := p[0]; i < p[1]; i++ {
				require.Zero(t, b[i], "type %d padding byte %d", m.TypeID(), i)
			}
		}
		require.Equal(t, bytes.Repeat([]byte{0xAB}, 8), b[m.EncodedLen():], "Encode wrote past EncodedLen")
	}
}

func TestDecodeShort(t *testing.T) {
	for _, m := range samples() {
		b := make([]byte, m.EncodedLen())
		m.Encode(b)
		for n := 0; n < m.EncodedLen(); n++ {
			got := fresh(m.TypeID())
			err := got.Decode(b[:n])
			require.ErrorIs(t, err, ErrShort)
			require.Contains(t, err.Error(), "msg: ")
			require.Equal(t, fresh(m.TypeID()), got, "a failed Decode leaves the receiver unchanged")
		}
		require.NoError(t, fresh(m.TypeID()).Decode(b))
		require.ErrorIs(t, fresh(m.TypeID()).Decode(nil), ErrShort)
	}
}

// TestLayoutOffsets pins each field to the byte offset
// examples/trading/internal/DESIGN.md documents, independently of the
// offset constants.
func TestLayoutOffsets(t *testing.T) {
	u64 := func(b []byte, off int) uint64 { return binary.LittleEndian.Uint64(b[off:]) }
	u32 := func(b []byte, off int) uint32 { return binary.LittleEndian.Uint32(b[off:]) }

	q := &Quote{Instrument: 7, Seq: 42, FeedNanos: 43, BidPx: 44, BidQty: 45, AskPx: 46, AskQty: 47}
	b := make([]byte, QuoteLen)
	q.Encode(b)
	require.Equal(t, uint32(7), u32(b, 0))
	require.Equal(t, []uint64{42, 43, 44, 45, 46, 47}, []uint64{u64(b, 8), u64(b, 16), u64(b, 24), u64(b, 32), u64(b, 40), u64(b, 48)})

	o := &NewOrder{OrderID: 1, Instrument: 2, Side: Sell, TimeInForce: IOC, Price: 3, Qty: 4, OriginNanos: 5}
	b = make([]byte, NewOrderLen)
	o.Encode(b)
	require.Equal(t, uint64(1), u64(b, 0))
	require.Equal(t, uint32(2), u32(b, 8))
	require.Equal(t, []byte{2, 2}, b[12:14])
	require.Equal(t, []uint64{3, 4, 5}, []uint64{u64(b, 16), u64(b, 24), u64(b, 32)})

	c := &CancelOrder{OrderID: 1, Instrument: 2, OriginNanos: 3}
	b = make([]byte, CancelOrderLen)
	c.Encode(b)
	require.Equal(t, uint64(1), u64(b, 0))
	require.Equal(t, uint32(2), u32(b, 8))
	require.Equal(t, uint64(3), u64(b, 16))

	r := &ExecutionReport{OrderID: 1, ExecID: 2, Instrument: 3, ExecType: Cancelled, Reason: ReasonIOCRemainder, Side: Sell,
		OrderQty: 10, LastPx: 11, LastQty: 12, LeavesQty: 13, CumQty: 14, OriginNanos: 15}
	b = make([]byte, ExecutionReportLen)
	r.Encode(b)
	require.Equal(t, []uint64{1, 2}, []uint64{u64(b, 0), u64(b, 8)})
	require.Equal(t, uint32(3), u32(b, 16))
	require.Equal(t, []byte{byte(Cancelled), byte(ReasonIOCRemainder), byte(Sell)}, b[20:23])
	require.Equal(t, []uint64{10, 11, 12, 13, 14, 15}, []uint64{u64(b, 24), u64(b, 32), u64(b, 40), u64(b, 48), u64(b, 56), u64(b, 64)})

	j := &RiskReject{OrderID: 1, Instrument: 2, Reason: ReasonOrderRate, Side: Buy, Price: 3, Qty: 4, OriginNanos: 5}
	b = make([]byte, RiskRejectLen)
	j.Encode(b)
	require.Equal(t, uint64(1), u64(b, 0))
	require.Equal(t, uint32(2), u32(b, 8))
	require.Equal(t, []byte{byte(ReasonOrderRate), byte(Buy)}, b[12:14])
	require.Equal(t, []uint64{3, 4, 5}, []uint64{u64(b, 16), u64(b, 24), u64(b, 32)})
}

func TestEnums(t *testing.T) {
	require.True(t, Buy.Valid())
	require.True(t, Sell.Valid())
	require.False(t, Side(0).Valid())
	require.False(t, Side(3).Valid())
	require.Equal(t, Sell, Buy.Opposite())
	require.Equal(t, Buy, Sell.Opposite())
	require.True(t, Limit.Valid())
	require.True(t, IOC.Valid())
	require.False(t, TimeInForce(0).Valid())
	for _, e := range []ExecType{Fill, Cancelled, Rejected} {
		require.True(t, e.Terminal(), e.String())
	}
	for _, e := range []ExecType{New, PartialFill, CancelRejected} {
		require.False(t, e.Terminal(), e.String())
	}
	names := map[string]bool{}
	for r := Reason(0); r.Valid(); r++ {
		require.NotEqual(t, "reason?", r.String())
		require.False(t, names[r.String()], "duplicate reason name %s", r)
		names[r.String()] = true
	}
	require.Len(t, names, NumReasons)
	require.False(t, Reason(NumReasons).Valid())
	require.Equal(t, "exec?", ExecType(0).String())
}

func TestRejectFor(t *testing.T) {
	o := &NewOrder{OrderID: 4, Instrument: 1, Side: Sell, TimeInForce: Limit, Price: 100, Qty: 5, OriginNanos: 9}
	var r RiskReject
	r.RejectFor(o, ReasonMaxOrderQty)
	require.Equal(t, RiskReject{OrderID: 4, Instrument: 1, Reason: ReasonMaxOrderQty, Side: Sell, Price: 100, Qty: 5, OriginNanos: 9}, r)
}

func TestEncodeDecodeAllocateNothing(t *testing.T) {
	buf := make([]byte, 128)
	for _, m := range samples() {
		out := fresh(m.TypeID())
		allocs := testing.AllocsPerRun(1000, func() {
			m.Encode(buf)
			if err := out.Decode(buf); err != nil {
				panic(err)
			}
		})
		require.Zero(t, allocs, "type %d", m.TypeID())
	}
}

// FuzzDecode feeds arbitrary bytes to every decoder: Decode never panics,
// fails only with ErrShort for a short payload, and a decoded message
// re-encodes to the same bytes (padding aside) and decodes to itself.
func FuzzDecode(f *testing.F) {
	for _, m := range samples() {
		b := make([]byte, m.EncodedLen())
		m.Encode(b)
		f.Add(b)
	}
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{0xFF}, 80))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, typeID := range []int32{TypeQuote, TypeNewOrder, TypeCancelOrder, TypeExecutionReport, TypeRiskReject} {
			m := fresh(typeID)
			err := m.Decode(data)
			if len(data) < m.EncodedLen() {
				require.ErrorIs(t, err, ErrShort)
				continue
			}
			require.NoError(t, err)
			want := append([]byte{}, data[:m.EncodedLen()]...)
			for _, p := range padding[typeID] {
				clear(want[p[0]:p[1]])
			}
			got := make([]byte, m.EncodedLen())
			m.Encode(got)
			require.Equal(t, want, got)
			again := fresh(typeID)
			require.NoError(t, again.Decode(got))
			require.Equal(t, m, again)
		}
	})
}

func TestErrShortIsDistinct(t *testing.T) {
	err := (&Quote{}).Decode(make([]byte, 3))
	require.True(t, errors.Is(err, ErrShort))
	require.ErrorIs(t, err, mailbox.ErrTooShort, "the mailbox's Decoder contract")
	require.NotErrorIs(t, err, mailbox.ErrTypeID)
	require.EqualError(t, err, "msg: encoded message too short: quote needs 56 bytes, got 3")
}

// TestThroughMailbox sends every message type through a real mailbox with
// SendTyped and decodes it with DecodeTyped.
func TestThroughMailbox(t *testing.T) {
	mb, err := mailbox.New(mailbox.Config{Name: "msg-test"})
	require.NoError(t, err)
	for _, m := range samples() {
		require.NoError(t, mailbox.SendTyped(mb, m))
	}
	var got []codec
	n, err := mb.Drain(func(m *mailbox.Message) mailbox.Action {
		d := fresh(m.TypeID())
		require.NoError(t, mailbox.DecodeTyped(m, m.TypeID(), d))
		got = append(got, d)
		return mailbox.Continue
	}, 100)
	require.NoError(t, err)
	require.Equal(t, len(samples()), n)
	require.Equal(t, samples(), got)
}
