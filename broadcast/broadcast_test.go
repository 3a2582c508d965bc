package broadcast

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/dutyrt/duty/internal/atomicbuf"
	"github.com/stretchr/testify/require"
)

func TestBadCapacity(t *testing.T) {
	for _, c := range []int{-16, 0, 1, 8, 15, 24, 100, 1000, maxCapacity * 2} {
		_, err := NewBuffer(c)
		require.ErrorIs(t, err, ErrCapacity, "capacity %d", c)
	}
	for _, n := range []int{0, 8, 128, 128 + 8, 128 + 24, 128 + 100, 1024, 1024 + 127, 1024 + 129} {
		b := atomicbuf.Make(n).Bytes()
		_, err := NewTransmitter(b)
		require.ErrorIs(t, err, ErrCapacity, "length %d", n)
		_, err = NewReceiver(b)
		require.ErrorIs(t, err, ErrCapacity, "length %d", n)
	}
	for _, c := range []int{minCapacity, 32, 1024, 1 << 20} {
		b, err := NewBuffer(c)
		require.NoError(t, err)
		require.Len(t, b, c+trailerLength)
		tx := newTx(t, b)
		require.Equal(t, c, tx.Capacity())
		require.Equal(t, c/8, tx.MaxMsgLength())
		rx := newRx(t, b)
		require.Equal(t, c, rx.Capacity())
		require.Equal(t, c/8, rx.MaxMsgLength())
	}
}

func TestMisalignedBuffer(t *testing.T) {
	const capacity = 64
	big := atomicbuf.Make(capacity + trailerLength + 8).Bytes()
	for off := 1; off < 8; off++ {
		b := big[off : off+capacity+trailerLength]
		_, err := NewTransmitter(b)
		require.ErrorIs(t, err, ErrCapacity)
		require.ErrorIs(t, err, atomicbuf.ErrMisaligned)
		_, err = NewReceiver(b)
		require.ErrorIs(t, err, ErrCapacity)
	}
	_, err := NewTransmitter(big[8 : 8+capacity+trailerLength])
	require.NoError(t, err)
}

// A transmitter or receiver created over a live buffer must not wipe it.
func TestConstructorsDoNotWrite(t *testing.T) {
	b := newBuf(t, 128)
	tx := newTx(t, b)
	for i := range 20 {
		require.NoError(t, tx.Transmit(int32(i+1), []byte(fmt.Sprint("message ", i))))
	}
	before := bytes.Clone(b)
	newTx(t, b)
	rx := newRx(t, b)
	NewCopyReceiver(rx, 0)
	require.Equal(t, before, b)
}

func TestTransmitRejectsTypeID(t *testing.T) {
	b := newBuf(t, 64)
	tx := newTx(t, b)
	for _, typ := range []int32{0, -1, -100} {
		require.ErrorIs(t, tx.Transmit(typ, []byte("x")), ErrTypeID)
	}
	require.Equal(t, make([]byte, len(b)), b, "a rejected message writes nothing")
	require.NoError(t, tx.Transmit(1, []byte("x")))
}

func TestTransmitRejectsTooLong(t *testing.T) {
	b := newBuf(t, 256)
	tx := newTx(t, b)
	err := tx.Transmit(1, make([]byte, 33))
	require.ErrorIs(t, err, ErrTooLong)
	require.Equal(t, make([]byte, len(b)), b)
	require.NoError(t, tx.Transmit(1, make([]byte, 32)))
	rx := newRx(t, b)
	require.True(t, rx.ReceiveNext())
	require.Len(t, rx.Payload(), 32)
}

func TestEmptyBuffer(t *testing.T) {
	b := newBuf(t, 64)
	rx := newRx(t, b)
	require.False(t, rx.ReceiveNext())
	require.False(t, rx.ReceiveNext())
	require.Zero(t, rx.LappedCount())
	require.NoError(t, rx.Err())
	cr := NewCopyReceiver(newRx(t, b), 0)
	n, err := cr.Receive(func(int32, []byte) { t.Fatal("no message") })
	require.NoError(t, err)
	require.Zero(t, n)

	// The first message transmitted after a receiver joined an untouched
	// buffer is delivered.
	tx := newTx(t, b)
	require.NoError(t, tx.Transmit(5, []byte("first")))
	require.Equal(t, []received{{5, "first"}}, drain(t, rx))
}

func TestReceiveInOrder(t *testing.T) {
	b := newBuf(t, 1024)
	tx := newTx(t, b)
	rx := newRx(t, b)
	var want []received
	for i := range 10 {
		m := received{int32(i%3 + 1), fmt.Sprint("payload-", i, "-", string(make([]byte, i)))}
		want = append(want, m)
		require.NoError(t, tx.Transmit(m.typeID, []byte(m.payload)))
	}
	require.NoError(t, tx.Transmit(4, nil))
	want = append(want, received{4, ""})
	require.Equal(t, want, drain(t, rx))
	require.False(t, rx.ReceiveNext())
	require.Zero(t, rx.LappedCount())
}

func TestLateJoinAtLatest(t *testing.T) {
	b := newBuf(t, 1024)
	tx := newTx(t, b)
	for i := range 3 {
		require.NoError(t, tx.Transmit(1, []byte{byte(i)}))
	}
	rx := newRx(t, b)
	require.Equal(t, []received{{1, "\x02"}}, drain(t, rx), "joins with the latest message")
	require.NoError(t, tx.Transmit(1, []byte{3}))
	require.Equal(t, []received{{1, "\x03"}}, drain(t, rx))
	require.Zero(t, rx.LappedCount())
}

// A record that ends exactly at the end of the ring needs no padding, and the
// next one starts at offset 0.
func TestExactFitAtEnd(t *testing.T) {
	const capacity = 64
	b := newBuf(t, capacity)
	tx := newTx(t, b)
	stepwise := newRx(t, b)
	var got []received
	for i := range 4 { // 4 records of 16 bytes fill the ring exactly
		require.NoError(t, tx.Transmit(1, []byte(fmt.Sprint("abcdefg", i))))
		got = append(got, drain(t, stepwise)...)
	}
	require.Equal(t, trailer{64, 64, 48}, readTrailer(b, capacity))
	require.NoError(t, tx.Transmit(2, []byte("wrapped")))
	got = append(got, drain(t, stepwise)...)
	require.Equal(t, int32(15), le32(b, 0), "no padding: the record is at offset 0")
	require.Equal(t, trailer{80, 80, 64}, readTrailer(b, capacity))
	require.Equal(t, []received{{1, "abcdefg0"}, {1, "abcdefg1"}, {1, "abcdefg2"}, {1, "abcdefg3"}, {2, "wrapped"}}, got)
	require.Zero(t, stepwise.LappedCount())
}

// With 8 bytes left only a padding header fits; the receiver skips it.
func TestPaddingWithEightBytesLeft(t *testing.T) {
	const capacity = 64
	b := newBuf(t, capacity)
	tx := newTx(t, b)
	rx := newRx(t, b)
	require.NoError(t, tx.Transmit(1, nil)) // [0, 8)
	for range 3 {
		require.NoError(t, tx.Transmit(1, []byte("12345678"))) // 16 each, up to 56
	}
	require.Len(t, drain(t, rx), 4)
	require.NoError(t, tx.Transmit(3, []byte("next")))
	require.Equal(t, int32(-1), le32(b, 56+typeOffset))
	require.Equal(t, []received{{3, "next"}}, drain(t, rx))
	require.Zero(t, rx.LappedCount())
}

// Padding of more than a header, read by a receiver in the middle of a batch.
func TestPaddingMidBatch(t *testing.T) {
	const capacity = 128
	b := newBuf(t, capacity)
	tx := newTx(t, b)
	rx := newRx(t, b)
	var want []received
	// 5 records of 24 bytes: up to 120, then a 16-byte record needs padding.
	for i := range 5 {
		m := received{1, fmt.Sprintf("%016d", i)}
		want = append(want, m)
		require.NoError(t, tx.Transmit(m.typeID, []byte(m.payload)))
	}
	require.Equal(t, want, drain(t, rx))
	want = want[:0]
	for i := range 3 {
		m := received{2, fmt.Sprintf("%08d", i)}
		want = append(want, m)
		require.NoError(t, tx.Transmit(m.typeID, []byte(m.payload)))
	}
	require.Equal(t, int32(-1), le32(b, 120+typeOffset))
	require.Equal(t, int32(8), le32(b, 120))
	require.Equal(t, want, drain(t, rx))
}

func TestSeveralReceivers(t *testing.T) {
	b := newBuf(t, 256)
	tx := newTx(t, b)
	rxs := []*Receiver{newRx(t, b), newRx(t, b), newRx(t, b)}
	crs := []*CopyReceiver{NewCopyReceiver(newRx(t, b), 64), NewCopyReceiver(newRx(t, b), 64)}
	var want []received
	got := make([][]received, len(rxs)+len(crs))
	for i := range 100 {
		m := received{int32(i%7 + 1), fmt.Sprint(i)}
		want = append(want, m)
		require.NoError(t, tx.Transmit(m.typeID, []byte(m.payload)))
		if i%5 == 4 { // 5 records of 16 bytes: well within a ring
			for j, rx := range rxs {
				got[j] = append(got[j], drain(t, rx)...)
			}
			for j, cr := range crs {
				for {
					n, err := cr.Receive(func(typ int32, p []byte) {
						got[len(rxs)+j] = append(got[len(rxs)+j], received{typ, string(p)})
					})
					require.NoError(t, err)
					if n == 0 {
						break
					}
				}
			}
		}
	}
	for j := range got {
		require.Equal(t, want, got[j], "receiver %d", j)
	}
}

func TestSlowReceiverIsLapped(t *testing.T) {
	const capacity = 128
	b := newBuf(t, capacity)
	tx := newTx(t, b)
	slow, fast := newRx(t, b), newRx(t, b)
	require.NoError(t, tx.Transmit(1, []byte("seen")))
	require.Equal(t, []received{{1, "seen"}}, drain(t, slow))

	var all []received
	for i := range 30 { // 30 records of 16 bytes: almost four rings
		m := received{2, fmt.Sprintf("%08d", i)}
		require.NoError(t, tx.Transmit(m.typeID, []byte(m.payload)))
		all = append(all, drain(t, fast)...)
	}
	require.Len(t, all, 31)
	require.Zero(t, fast.LappedCount())

	require.True(t, slow.ReceiveNext())
	require.Equal(t, int64(1), slow.LappedCount(), "one lap detected, however many missed")
	require.Equal(t, "00000029", string(slow.Payload()), "continues at the latest message")
	require.True(t, slow.Validate())
	require.False(t, slow.ReceiveNext())

	require.NoError(t, tx.Transmit(3, []byte("after")))
	require.Equal(t, []received{{3, "after"}}, drain(t, slow))
	require.Equal(t, int64(1), slow.LappedCount())
}

func TestCopyReceiverLapped(t *testing.T) {
	b := newBuf(t, 128)
	tx := newTx(t, b)
	cr := NewCopyReceiver(newRx(t, b), 0)
	require.Same(t, cr.receiver(), cr.r)
	for i := range 20 {
		require.NoError(t, tx.Transmit(1, []byte{byte(i)}))
	}
	n, err := cr.Receive(func(int32, []byte) { t.Fatal("lost messages are reported, not delivered") })
	require.Zero(t, n)
	require.ErrorIs(t, err, ErrLapped)
	require.Equal(t, "broadcast: unable to keep up with broadcast", err.Error())
	require.Equal(t, int64(1), cr.receiver().LappedCount())

	// The receiver moved past the lost messages and goes on.
	require.NoError(t, tx.Transmit(2, []byte("on")))
	var got []received
	n, err = cr.Receive(func(typ int32, p []byte) { got = append(got, received{typ, string(p)}) })
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, []received{{2, "on"}}, got)
}

func TestCopyReceiverTooLong(t *testing.T) {
	b := newBuf(t, 1024)
	tx := newTx(t, b)
	cr := NewCopyReceiver(newRx(t, b), 4)
	require.NoError(t, tx.Transmit(1, []byte("too long")))
	require.NoError(t, tx.Transmit(1, []byte("fits")))
	_, err := cr.Receive(func(int32, []byte) { t.Fatal("not delivered") })
	require.ErrorIs(t, err, ErrTooLong)
	var got string
	n, err := cr.Receive(func(_ int32, p []byte) { got = string(p) })
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Equal(t, "fits", got)
}

// Validate is false once the message read may have been overwritten, even
// if the receiver's next ReceiveNext has not yet noticed the lap. As in
// Agrona the test is conservative: a record counts as lost as soon as the
// tail intent reaches one ring past it.
func TestValidateDetectsOverwrite(t *testing.T) {
	const capacity = 64
	b := newBuf(t, capacity)
	tx := newTx(t, b)
	rx := newRx(t, b)
	require.NoError(t, tx.Transmit(1, []byte("original")))
	require.True(t, rx.ReceiveNext())
	require.True(t, rx.Validate())
	for range 2 {
		require.NoError(t, tx.Transmit(2, []byte("xxxxxxxx")))
	}
	require.True(t, rx.Validate(), "two records later the first is intact")
	require.NoError(t, tx.Transmit(2, []byte("xxxxxxxx")))
	require.False(t, rx.Validate(), "the tail intent reached a ring past the record")
	require.NoError(t, tx.Transmit(2, []byte("yyyyyyyy")))
	require.Equal(t, "yyyyyyyy", string(rx.Payload()), "the aliased payload shows the overwrite")
	require.False(t, rx.Validate())
}

// A transmitter created over a live buffer continues at its tail.
func TestTransmitterRestart(t *testing.T) {
	b := newBuf(t, 128)
	tx := newTx(t, b)
	rx := newRx(t, b)
	require.NoError(t, tx.Transmit(1, []byte("one")))
	tx2 := newTx(t, b)
	require.NoError(t, tx2.Transmit(1, []byte("two")))
	require.Equal(t, []received{{1, "one"}, {1, "two"}}, drain(t, rx))
}

// A transmitter that died after storing the tail intent and before the tail
// may have overwritten records up to intent - capacity; its successor never
// lowers the intent, so receivers still reject them.
func TestTransmitterRestartKeepsIntent(t *testing.T) {
	const capacity = 64
	b := newBuf(t, capacity)
	tx := newTx(t, b)
	rx := newRx(t, b)
	require.NoError(t, tx.Transmit(1, []byte("abcdefgh"))) // [0, 16)
	require.NoError(t, tx.Transmit(1, []byte("abcdefgh"))) // [16, 32)
	require.NoError(t, tx.Transmit(1, []byte("abcdefgh"))) // [32, 48)
	require.NoError(t, tx.Transmit(1, nil))                // [48, 56)
	require.True(t, rx.ReceiveNext())                      // record at 0
	require.True(t, rx.Validate())
	// The dead transmitter announced a 16-byte record: padding [56, 64),
	// then [64, 80), which wraps over [0, 16).
	binary64(b, capacity+tailIntentCounterOffset, 80)
	require.False(t, rx.Validate())
	tx2 := newTx(t, b)
	require.NoError(t, tx2.Transmit(1, nil)) // its own intent would be 64
	require.Equal(t, trailer{80, 64, 56}, readTrailer(b, capacity))
	require.False(t, rx.Validate(), "the record at 0 may be torn")
}

// TestTransmitterRejectsImpossibleIntent: a tail intent more than one
// record (plus the padding before it) past the tail cannot have been left
// by a transmitter. Taking it as the floor of every later intent used to
// make every message look overwritten to every receiver, for as long as
// the transmitter had not caught up with that bogus position: a
// copy receiver got ErrLapped on every call and delivered nothing, and no
// error said why. NewTransmitter reports it as ErrCorrupt, as it does a
// bad tail.
func TestTransmitterRejectsImpossibleIntent(t *testing.T) {
	const capacity = 128 // max payload 16, records of up to 24 bytes
	b := newBuf(t, capacity)
	require.NoError(t, newTx(t, b).Transmit(1, []byte("abcdefgh"))) // tail 16
	// The most a correct transmitter leaves: padding of 16 bytes (tail at
	// offset 112) and a record of 24. Here: intent 16 + 40 is fine.
	binary64(b, capacity+tailIntentCounterOffset, 16+40)
	_, err := NewTransmitter(b)
	require.NoError(t, err)

	binary64(b, capacity+tailIntentCounterOffset, 16+100*capacity)
	tx, err := NewTransmitter(b)
	require.ErrorIs(t, err, ErrCorrupt)
	require.Nil(t, tx)
}

func binary64(b []byte, off int, v int64) {
	for i := range 8 {
		b[off+i] = byte(uint64(v) >> (8 * i))
	}
}

func binary32(b []byte, off int, v int32) {
	for i := range 4 {
		b[off+i] = byte(uint32(v) >> (8 * i))
	}
}

func TestCorruptBuffer(t *testing.T) {
	const capacity = 128
	type corruption struct {
		name string
		// mutate gets a buffer with one 16-byte record at position 0 and a
		// receiver positioned before it.
		mutate func(b []byte)
	}
	cases := []corruption{
		{"zero length under tail", func(b []byte) { binary32(b, 0, 0) }},
		{"negative length", func(b []byte) { binary32(b, 0, -16) }},
		{"length below header", func(b []byte) { binary32(b, 0, 7) }},
		{"length above max", func(b []byte) { binary32(b, 0, capacity/8+headerLength+1) }},
		{"type zero", func(b []byte) { binary32(b, typeOffset, 0) }},
		{"type below padding", func(b []byte) { binary32(b, typeOffset, -2) }},
		{"padding at offset 0", func(b []byte) { binary32(b, typeOffset, paddingTypeID) }},
		{"lapped, latest misaligned", func(b []byte) {
			binary64(b, capacity+tailIntentCounterOffset, 1000)
			binary64(b, capacity+tailCounterOffset, 1000)
			binary64(b, capacity+latestCounterOffset, 3)
		}},
		{"lapped, latest negative", func(b []byte) {
			binary64(b, capacity+tailIntentCounterOffset, 1000)
			binary64(b, capacity+latestCounterOffset, -8)
		}},
		{"lapped, latest huge", func(b []byte) {
			binary64(b, capacity+tailIntentCounterOffset, 1<<63-1)
			binary64(b, capacity+latestCounterOffset, 1<<63-8)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newBuf(t, capacity)
			rx := newRx(t, b)
			cr := NewCopyReceiver(newRx(t, b), 0)
			require.NoError(t, newTx(t, b).Transmit(1, []byte("abcdefgh")))
			c.mutate(b)
			require.False(t, rx.ReceiveNext())
			require.ErrorIs(t, rx.Err(), ErrCorrupt)
			require.False(t, rx.ReceiveNext(), "corruption is sticky")
			require.False(t, rx.Validate())
			n, err := cr.Receive(func(int32, []byte) { t.Fatal("corrupt record delivered") })
			require.Zero(t, n)
			require.ErrorIs(t, err, ErrCorrupt)
		})
	}

	t.Run("record past the end of the ring", func(t *testing.T) {
		b := newBuf(t, capacity)
		tx := newTx(t, b)
		for range 7 {
			require.NoError(t, tx.Transmit(1, []byte("abcdefgh"))) // up to 112
		}
		rx := newRx(t, b) // at latest = 96
		require.NoError(t, tx.Transmit(1, []byte("abcdefgh")))
		require.True(t, rx.ReceiveNext())
		binary32(b, 112, 24) // 112 + 24 > 128
		require.False(t, rx.ReceiveNext())
		require.ErrorIs(t, rx.Err(), ErrCorrupt)
	})

	t.Run("bad counters at construction", func(t *testing.T) {
		b := newBuf(t, capacity)
		binary64(b, capacity+latestCounterOffset, 4)
		_, err := NewReceiver(b)
		require.ErrorIs(t, err, ErrCorrupt)
		binary64(b, capacity+tailCounterOffset, -8)
		_, err = NewTransmitter(b)
		require.ErrorIs(t, err, ErrCorrupt)
	})

	t.Run("error message", func(t *testing.T) {
		b := newBuf(t, capacity)
		rx := newRx(t, b)
		binary64(b, capacity+tailCounterOffset, 8)
		require.False(t, rx.ReceiveNext())
		require.True(t, errors.Is(rx.Err(), ErrCorrupt))
		require.Contains(t, rx.Err().Error(), "broadcast: corrupt buffer: record header length=0 type=0 at position 0")
	})
}

func TestZeroAllocs(t *testing.T) {
	b := newBuf(t, 1024)
	tx := newTx(t, b)
	cr := NewCopyReceiver(newRx(t, b), 0)
	payload := make([]byte, 64)
	sink := 0
	handler := func(typ int32, p []byte) { sink += int(typ) + len(p) }
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = tx.Transmit(1, payload)
	}), "Transmit")
	rx := newRx(t, b)
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = tx.Transmit(1, payload)
		for rx.ReceiveNext() {
			sink += len(rx.Payload()) + int(rx.TypeID())
			_ = rx.Validate()
		}
	}), "Receiver")
	require.Zero(t, testing.AllocsPerRun(1000, func() {
		_ = tx.Transmit(1, payload)
		_, _ = cr.Receive(handler)
	}), "CopyReceiver")
	require.NotZero(t, sink)
}
