package zmtpcurve

import (
	"bytes"
	"errors"
	"testing"

	"github.com/dutyrt/duty/internal/zmtpwire"
)

// FuzzCurveHandshakeCommands feeds arbitrary data to each decoder of
// CURVE's handshake commands: none panics, each refuses with
// zmtpwire.ErrHandshake.
func FuzzCurveHandshakeCommands(f *testing.F) {
	f.Add(make([]byte, helloLen))
	f.Add(make([]byte, welcomeLen))
	f.Add(make([]byte, initiateMin+40))
	f.Add(make([]byte, readyMin+10))
	f.Add([]byte{1, 0})
	var k1, k2, k3 [32]byte
	k1[0], k2[1], k3[2] = 1, 2, 3
	f.Fuzz(func(t *testing.T, b []byte) {
		check := func(err error) {
			if err == nil {
				t.Fatal("random bytes passed a box")
			}
			if !errors.Is(err, zmtpwire.ErrHandshake) {
				t.Fatalf("%v", err)
			}
		}
		_, err := openHello(b, &k1)
		check(err)
		_, _, err = openWelcome(b, &k1, &k2)
		check(err)
		_, _, _, err = openInitiate(b, &k1, &k2, &k3, &k1, k2)
		check(err)
		_, _, err = openReady(b, &k1)
		check(err)
	})
}

// FuzzCurveMessages reads arbitrary bytes as a stream of MESSAGEs: an
// error wrapping zmtpwire.ErrProtocol or zmtpwire.ErrTooLarge, or io.EOF's kind, never a
// panic; and boxed frames read back as they were written.
func FuzzCurveMessages(f *testing.F) {
	var a, b [32]byte
	a[0], b[0] = 9, 7
	sealer := newConn(nil, &a, &b, prefixMsgC, prefixMsgS)
	sealer.sendNonce = 3
	sealer.out = nil
	sealer.seal(zmtpwire.AppendMessage(nil, [][]byte{[]byte("a"), pattern(1, 300)}))
	f.Add(sealer.out, []byte("ab"))
	f.Add([]byte{0, 40, 7, 'M'}, []byte{})
	f.Fuzz(func(t *testing.T, raw, frames []byte) {
		cc := newConn(nil, &a, &b, prefixMsgS, prefixMsgC)
		cc.maxFrame = 1 << 16
		cc.raw = raw
		for {
			ok, err := cc.unbox()
			if err != nil {
				if !errors.Is(err, zmtpwire.ErrProtocol) && !errors.Is(err, zmtpwire.ErrTooLarge) {
					t.Fatalf("%v", err)
				}
				break
			}
			if !ok {
				break
			}
		}
		// Round trip: frames as one message's parts, split at each byte.
		parts := bytes.Split(frames, []byte("b"))
		enc := zmtpwire.AppendMessage(nil, parts)
		w := newConn(nil, &a, &b, prefixMsgC, prefixMsgS)
		w.sendNonce = 3
		w.seal(enc)
		r := newConn(nil, &a, &b, prefixMsgS, prefixMsgC)
		r.maxFrame = 1 << 30
		r.raw = w.out
		var got []byte
		for {
			ok, err := r.unbox()
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			got = append(got, r.plain[r.ppos:]...)
		}
		if !bytes.Equal(got, enc) {
			t.Fatalf("round trip: % x, want % x", got, enc)
		}
	})
}

// pattern returns n bytes depending on seed and offset.
func pattern(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*131 + i*7 + i>>8)
	}
	return b
}
