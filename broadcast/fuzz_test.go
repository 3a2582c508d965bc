package broadcast

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzReceiverOnCorruptBuffer fills a buffer (ring and trailer) with
// arbitrary bytes, then drives a receiver and a copy receiver over it while
// applying arbitrary writes between steps, as a buggy or malicious process
// sharing the memory could. They must never panic or spin: every call
// returns, with a well-formed message or an error.
//
//	go test -run '^$' -fuzz FuzzReceiverOnCorruptBuffer ./broadcast/
func FuzzReceiverOnCorruptBuffer(f *testing.F) {
	const capacity = 256
	valid := newBuf(f, capacity)
	tx := newTx(f, valid)
	for i := range 40 {
		_ = tx.Transmit(int32(i%3+1), make([]byte, i%33))
	}
	f.Add(valid, []byte{})
	f.Add(valid, []byte{0, 1, 0xff, 4, 1, 0x80, 8, 1, 3})
	f.Add(make([]byte, capacity+trailerLength), []byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 1, 0, 0, 0}, []byte{0x10, 1, 0xff})
	// The trailer's counters rewritten under a valid ring (writes are
	// offset low, offset high, value): the tail intent ahead of the tail,
	// the tail far ahead, the latest record past the tail.
	at := func(off int, v byte) []byte { return []byte{byte(off), byte(off >> 8), v} }
	f.Add(valid, at(capacity+tailIntentCounterOffset+1, 0x10))
	f.Add(valid, at(capacity+tailCounterOffset+7, 0x7f))
	f.Add(valid, at(capacity+latestCounterOffset+2, 0x7f))

	f.Fuzz(func(t *testing.T, content, writes []byte) {
		b := newBuf(t, capacity)
		copy(b, content)
		rx, err := NewReceiver(b)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			return
		}
		rx2, err := NewReceiver(b)
		require.NoError(t, err)
		cr := NewCopyReceiver(rx2, 24)
		handler := func(typ int32, p []byte) {
			if typ < 1 || len(p) > 24 {
				t.Fatalf("copy receiver delivered type %d, %d bytes", typ, len(p))
			}
		}
		for step := range 64 {
			if len(writes) >= 3 { // one arbitrary byte write per step
				off := (int(writes[0]) | int(writes[1])<<8) % len(b)
				b[off] = writes[2]
				writes = writes[3:]
			}
			if rx.ReceiveNext() {
				p := rx.Payload()
				if rx.TypeID() < 1 || len(p) > rx.MaxMsgLength() || len(p) != rx.length {
					t.Fatalf("step %d: message type %d, %d bytes", step, rx.TypeID(), len(p))
				}
				_ = rx.Validate()
			} else if err := rx.Err(); err != nil {
				require.ErrorIs(t, err, ErrCorrupt)
			}
			_, err := cr.Receive(handler)
			if err != nil && !errors.Is(err, ErrLapped) && !errors.Is(err, ErrTooLong) {
				require.ErrorIs(t, err, ErrCorrupt)
			}
		}
	})
}

// FuzzTransmitModel transmits an arbitrary sequence of messages and checks
// what receivers see against the list of messages sent: a receiver that reads
// after every message, and a copy receiver that reads in batches small enough
// never to be lapped, see exactly what was sent; a receiver that reads only
// now and then sees messages in order, never a wrong one, and if it was
// never lapped, all of them.
//
//	go test -run '^$' -fuzz FuzzTransmitModel ./broadcast/
func FuzzTransmitModel(f *testing.F) {
	f.Add(uint8(3), []byte{0, 1, 2, 3, 16, 17, 255, 8, 9, 9, 9})
	f.Add(uint8(0), []byte{16, 16, 16, 16, 16, 16, 16, 16, 16, 16})
	f.Add(uint8(200), []byte{7, 15, 0, 0, 0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Fuzz(func(t *testing.T, every uint8, spec []byte) {
		const capacity = 128 // max payload 16, records of 8..24 bytes
		b := newBuf(t, capacity)
		tx := newTx(t, b)
		eager := newRx(t, b)
		batched := NewCopyReceiver(newRx(t, b), 16)
		sometimes := newRx(t, b)
		period := int(every)%40 + 1

		type msg struct {
			typ int32
			p   string
		}
		var sent, gotEager, gotBatched, gotSometimes []msg
		var buf [16]byte
		drainBatched := func() {
			for {
				n, err := batched.Receive(func(typ int32, p []byte) { gotBatched = append(gotBatched, msg{typ, string(p)}) })
				require.NoError(t, err)
				if n == 0 {
					return
				}
			}
		}
		pending := 0 // bytes transmitted since batched last read
		for i, c := range spec {
			n := int(c) % (tx.MaxMsgLength() + 1)
			p := buf[:n]
			for j := range p {
				p[j] = byte(i*13 + j)
			}
			m := msg{int32(c%5 + 1), string(p)}
			record := int(align(int64(n + headerLength)))
			// Padding can cost up to a record more; 3 records of 24 bytes
			// plus padding stay below a ring.
			if pending+record > capacity/2 {
				drainBatched()
				pending = 0
			}
			require.NoError(t, tx.Transmit(m.typ, p))
			sent = append(sent, m)
			pending += record
			for eager.ReceiveNext() {
				gotEager = append(gotEager, msg{eager.TypeID(), string(eager.Payload())})
				require.True(t, eager.Validate())
			}
			if i%period == period-1 {
				for sometimes.ReceiveNext() {
					gotSometimes = append(gotSometimes, msg{sometimes.TypeID(), string(sometimes.Payload())})
					require.True(t, sometimes.Validate())
				}
			}
		}
		drainBatched()
		for sometimes.ReceiveNext() {
			gotSometimes = append(gotSometimes, msg{sometimes.TypeID(), string(sometimes.Payload())})
		}
		require.Equal(t, sent, gotEager)
		require.Equal(t, sent, gotBatched)
		require.Zero(t, eager.LappedCount())
		require.Zero(t, batched.receiver().LappedCount())
		if sometimes.LappedCount() == 0 {
			require.Equal(t, sent, gotSometimes)
		} else {
			// An in-order subsequence ending with the last message.
			j := 0
			for _, m := range gotSometimes {
				for j < len(sent) && sent[j] != m {
					j++
				}
				require.Less(t, j, len(sent), "message %v not sent, or out of order", m)
				j++
			}
			require.Equal(t, sent[len(sent)-1], gotSometimes[len(gotSometimes)-1])
		}
		for _, rx := range []*Receiver{eager, batched.receiver(), sometimes} {
			require.NoError(t, rx.Err())
		}
	})
}
