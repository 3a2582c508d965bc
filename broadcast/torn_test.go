package broadcast

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// tornHeader races a ReceiveNext with a transmitter that laps the record
// the receiver is about to read: the receiver's lap check sees the old tail
// intent, then (testHookAfterLapCheck) the transmitter's new intent is in
// place and the record has been overwritten by one whose payload bytes sit
// where the receiver reads the header (length 136, type 9: plausible). It
// returns the receiver after that call.
//
// forge puts bytes that look like a header (length 16, type 77) at the
// start of the payload of the lap-0 record at position 384, which is where
// a receiver that trusted the torn header would read next.
func tornHeader(t *testing.T, forge bool) *Receiver {
	const capacity = 1024 // max payload 128, max record 136
	b := newBuf(t, capacity)
	tx := newTx(t, b)
	rx := newRx(t, b)
	intent := func() int64 { return rx.v.tailIntent.Load() }

	lap0 := func(i int) []byte { // 120-byte payloads: records of 128 bytes at 0, 128, ...
		p := make([]byte, 120)
		if forge && i == 3 { // record at position 384, payload at ring offset 392
			binary.LittleEndian.PutUint32(p[0:], 16)
			binary.LittleEndian.PutUint32(p[4:], 77)
			copy(p[8:], "FORGED!!")
		}
		return p
	}
	for i := range 3 {
		require.NoError(t, tx.Transmit(1, lap0(i)))
	}
	for range 2 { // the receiver reads positions 0 and 128: next = 256
		require.True(t, rx.ReceiveNext())
		require.True(t, rx.Validate())
	}
	for i := 3; i < 8; i++ {
		require.NoError(t, tx.Transmit(1, lap0(i)))
	}
	// Lap 1: two records of 120 bytes: tail 1264 (offset 240). The record at
	// 256 is still intact (256+1024 > 1264).
	require.NoError(t, tx.Transmit(2, make([]byte, 112)))
	require.NoError(t, tx.Transmit(2, make([]byte, 112)))
	old := intent()
	require.Equal(t, int64(1264), old)

	// The next record, at 1264 (offset 240, 136 bytes), covers offset 256:
	// its payload bytes 8..16 land on the header the receiver reads.
	p := make([]byte, 128)
	binary.LittleEndian.PutUint32(p[8:], 136) // read as length 136
	binary.LittleEndian.PutUint32(p[12:], 9)  // read as type 9
	require.NoError(t, tx.Transmit(3, p))
	newIntent := intent()

	rx.v.tailIntent.Store(old) // what the receiver's lap check loads
	testHookAfterLapCheck = func() { rx.v.tailIntent.Store(newIntent) }
	defer func() { testHookAfterLapCheck = nil }()
	require.True(t, rx.ReceiveNext())
	return rx
}

// TestTornHeaderIsNotTrusted: the receiver notices that the header it read
// may be torn, counts the lap and moves to the latest message; after it,
// nothing is delivered that was not transmitted and nothing is reported
// corrupt (a receiver that trusted the torn header went on inside an old
// payload: a forged message, or ErrCorrupt on a correct buffer).
func TestTornHeaderIsNotTrusted(t *testing.T) {
	for _, forge := range []bool{false, true} {
		rx := tornHeader(t, forge)
		require.Equal(t, int32(3), rx.TypeID(), "the latest message, not the torn record")
		require.Len(t, rx.Payload(), 128)
		require.True(t, rx.Validate())
		require.Equal(t, int64(1), rx.LappedCount())

		cr := NewCopyReceiver(rx, 0)
		n, err := cr.Receive(func(typeID int32, payload []byte) {
			t.Errorf("delivered a message never transmitted: type %d, %q", typeID, payload)
		})
		require.NoError(t, err, "a correct transmitter's buffer")
		require.Zero(t, n, "caught up")
		require.NoError(t, rx.Err())
	}
}

// TestCopyReceiverReportsALapWithNothingAfterIt: ReceiveNext can count a
// lap and still return false (every attempt found the record at latest
// overwritten while it read it). Receive must then report ErrLapped: with
// (0, nil) the loss would never be reported, because the next Receive
// snapshots the count already raised. The receiver's view is set up with
// trailer words as a transmitter lapping it during the call would leave
// them at each load: the record at latest overwritten (here, zeros) and the
// intent a ring past it.
func TestCopyReceiverReportsALapWithNothingAfterIt(t *testing.T) {
	const capacity = 1024
	b := newBuf(t, capacity)
	rx := newRx(t, b) // next = 0
	rx.v.latest.Store(512)
	rx.v.tailIntent.Store(512 + capacity)
	rx.v.tail.Store(512 + capacity)
	cr := NewCopyReceiver(rx, 0)
	n, err := cr.Receive(func(int32, []byte) {})
	require.Zero(t, n)
	require.Equal(t, ErrLapped, err, "lap counted: the loss must be reported")
	require.Positive(t, rx.LappedCount())
}
