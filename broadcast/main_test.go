package broadcast

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// newBuf returns a zeroed buffer with a ring of capacity bytes.
func newBuf(t testing.TB, capacity int) []byte {
	t.Helper()
	b, err := NewBuffer(capacity)
	require.NoError(t, err)
	return b
}

func newTx(t testing.TB, b []byte) *Transmitter {
	t.Helper()
	tx, err := NewTransmitter(b)
	require.NoError(t, err)
	return tx
}

func newRx(t testing.TB, b []byte) *Receiver {
	t.Helper()
	rx, err := NewReceiver(b)
	require.NoError(t, err)
	return rx
}

// msgPayload returns the payload of message seq: n bytes, the first 8 (when
// n >= 8) holding seq, every other byte a function of seq and its index, so
// that a torn or misplaced payload is detected by checkPayload.
func msgPayload(dst []byte, seq uint64, n int) []byte {
	p := dst[:n]
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], seq)
	for i := range p {
		if i < 8 {
			p[i] = s[i]
		} else {
			p[i] = byte(seq*31 + uint64(i)*7 + uint64(n))
		}
	}
	return p
}

// checkPayload returns the sequence number in p and whether p is exactly
// msgPayload(seq, len(p)). p must be at least 8 bytes.
func checkPayload(p []byte) (uint64, bool) {
	if len(p) < 8 {
		return 0, false
	}
	seq := binary.LittleEndian.Uint64(p)
	n := len(p)
	for i := 8; i < n; i++ {
		if p[i] != byte(seq*31+uint64(i)*7+uint64(n)) {
			return seq, false
		}
	}
	return seq, true
}

type received struct {
	typeID  int32
	payload string
}

// drain reads every available message with the raw receiver.
func drain(t testing.TB, rx *Receiver) []received {
	t.Helper()
	var got []received
	for rx.ReceiveNext() {
		m := received{rx.TypeID(), string(rx.Payload())}
		require.True(t, rx.Validate())
		got = append(got, m)
	}
	require.NoError(t, rx.Err())
	return got
}
