package zmtpwire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
)

// FuzzDecoder feeds arbitrary bytes to the decoder: it never panics, ends
// with io.EOF, a wrapped io.ErrUnexpectedEOF, ErrTooLarge or ErrProtocol,
// returns only messages within its bounds, and keeps its buffer within
// BufferBound.
func FuzzDecoder(f *testing.F) {
	f.Add(encode(0, [][]byte{[]byte("hello")}))
	f.Add(encode(0, [][]byte{[]byte("a"), make([]byte, 255), make([]byte, 256)}))
	f.Add([]byte{FlagCommand, 6, 4, 'P', 'I', 'N', 'G', 0})
	f.Add([]byte{FlagLong, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{FlagLong, 0, 0, 0, 0, 0, 0x10, 0, 0, 1, 2, 3})
	f.Add([]byte{FlagMore, 1, 'x', FlagCommand, 0})
	f.Add([]byte{0x80, 0})
	f.Add([]byte{FlagMore, 0, FlagMore, 0, FlagMore, 0, 0, 0})
	const maxMsg, maxParts = 4096, 8
	f.Fuzz(func(t *testing.T, b []byte) {
		d := NewDecoder(&oneByteOrAll{b: b}, maxMsg, maxParts)
		got := 0
		for {
			k, err := d.Next()
			if d.BufferLen() > BufferBound(maxMsg, maxParts) {
				t.Fatalf("buffer %d above the bound", d.BufferLen())
			}
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) &&
					!errors.Is(err, ErrTooLarge) && !errors.Is(err, ErrProtocol) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			switch k {
			case KindMessage:
				total := 0
				for _, p := range d.Parts() {
					total += len(p)
				}
				if total > maxMsg || len(d.Parts()) > maxParts || len(d.Parts()) == 0 {
					t.Fatalf("message of %d bytes in %d parts", total, len(d.Parts()))
				}
				got += total
				if got > len(b) {
					t.Fatalf("%d message bytes out of %d input bytes", got, len(b))
				}
			case KindCommand:
				if len(d.Command()) > maxMsg {
					t.Fatalf("command of %d bytes", len(d.Command()))
				}
			default:
				t.Fatalf("kind %d", k)
			}
		}
	})
}

// decodeItems decodes b to its end and returns what came out, one string
// per message or command, and the class of the final error. mixed decodes
// as a socket's reader does: Next, then NextShorts and NextBuffered over
// what is buffered, the short runs parsed back frame by frame.
func decodeItems(b []byte, mixed bool) ([]string, string) {
	const maxMsg, maxParts = 4096, 8
	d := NewDecoder(&oneByteOrAll{b: b}, maxMsg, maxParts)
	var items []string
	add := func(k Kind) {
		if k == KindCommand {
			items = append(items, "c"+string(d.Command()))
			return
		}
		items = append(items, fmt.Sprintf("m%q", d.Parts()))
	}
	class := func(err error) string {
		for _, e := range []error{io.EOF, io.ErrUnexpectedEOF, ErrTooLarge, ErrProtocol} {
			if errors.Is(err, e) {
				return e.Error()
			}
		}
		return "other: " + err.Error()
	}
	for {
		k, err := d.Next()
		if err != nil {
			return items, class(err)
		}
		add(k)
		for mixed {
			if raw, n := d.NextShorts(3); n > 0 {
				for range n {
					size, h := FrameSize(raw)
					if raw[0] != 0 || h != ShortHeader {
						return items, "NextShorts returned a frame that is not short"
					}
					items = append(items, fmt.Sprintf("m%q", [][]byte{raw[h : h+size]}))
					raw = raw[h+size:]
				}
				if len(raw) != 0 {
					return items, "NextShorts left bytes"
				}
				continue
			}
			k, ok, err := d.NextBuffered()
			if err != nil {
				return items, class(err)
			}
			if !ok {
				break
			}
			add(k)
		}
	}
}

// FuzzDecoderBuffered: decoding what is buffered (NextShorts,
// NextBuffered) gives the same messages, commands and final error as
// Next alone, whatever the bytes.
func FuzzDecoderBuffered(f *testing.F) {
	f.Add(encode(0, [][]byte{[]byte("a")}, [][]byte{[]byte("b")}, [][]byte{[]byte("c"), []byte("d")}, [][]byte{make([]byte, 300)}))
	f.Add([]byte{0, 1, 'x', 0, 2, 'y', FlagCommand, 1, 0, 0, 0, 0})
	f.Add([]byte{0, 1, 'x', 0, 0xff, 1})
	f.Add([]byte{0, 1, 'x', 0x80, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		want, wantErr := decodeItems(b, false)
		got, gotErr := decodeItems(b, true)
		if gotErr != wantErr || !slices.Equal(got, want) {
			t.Fatalf("buffered decoding: %d items, %s; Next alone: %d items, %s", len(got), gotErr, len(want), wantErr)
		}
	})
}

// oneByteOrAll alternates reads of one byte with reads of all it has, so
// that state boundaries fall both within and between reads.
type oneByteOrAll struct {
	b   []byte
	odd bool
}

func (r *oneByteOrAll) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	r.odd = !r.odd
	n := len(r.b)
	if r.odd {
		n = 1
	}
	n = copy(p, r.b[:n])
	r.b = r.b[n:]
	return n, nil
}

// FuzzHandshake feeds arbitrary bytes to what reads a peer's handshake:
// the greeting, the first command, READY's properties. None panics; each
// refuses with its sentinel; a READY that parses names a socket type.
func FuzzHandshake(f *testing.F) {
	g := Greeting()
	e := NewEncoder(0)
	e.Command("READY", ReadyProperties("PUSH", []byte("id")))
	var ready bytes.Buffer
	_, _ = e.WriteTo(&ready)
	f.Add(append(g[:], ready.Bytes()...))
	f.Add(g[:11])
	f.Add(append(g[:], FlagCommand, 6, 5, 'E', 'R', 'R', 'O', 'R'))
	f.Add(append(g[:], FlagCommand, 12, 5, 'R', 'E', 'A', 'D', 'Y', 3, 'a', 'b', 'c', 0xff, 0xff))
	bad := g
	copy(bad[OffMechanism:], "PLAIN")
	f.Add(bad[:])
	f.Fuzz(func(t *testing.T, b []byte) {
		r := bytes.NewReader(b)
		if _, err := ReadGreeting(r, MechanismNULL); err != nil {
			if !errors.Is(err, ErrGreeting) && !errors.Is(err, ErrMechanism) {
				t.Fatalf("greeting: %v", err)
			}
			return
		}
		d := NewDecoder(r, 4096, 8)
		if k, err := d.Next(); err != nil || k != KindCommand {
			return
		}
		name, data, err := ParseCommand(d.Command())
		if err != nil {
			if !errors.Is(err, ErrProtocol) {
				t.Fatalf("command: %v", err)
			}
			return
		}
		if string(name) != "READY" {
			_ = ErrorReason(data)
			return
		}
		typ, _, err := ParseProperties(data)
		if err != nil {
			if !errors.Is(err, ErrHandshake) {
				t.Fatalf("properties: %v", err)
			}
			return
		}
		if typ == "" {
			t.Fatal("READY parsed without a socket type")
		}
	})
}
