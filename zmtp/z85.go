package zmtp

import (
	"errors"
	"fmt"
)

// Z85 (rfc.zeromq.org, spec 32) is the text form of CURVE keys that
// libzmq's zmq_curve_keypair and zmq_z85_encode print: four bytes become
// five printable characters. Its input is a multiple of four bytes; its
// text a multiple of five characters.

const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

// z85Value maps a character to its digit plus one; zero for a character
// outside the alphabet.
var z85Value = func() (v [256]byte) {
	for i := 0; i < len(z85Alphabet); i++ {
		v[z85Alphabet[i]] = byte(i + 1)
	}
	return v
}()

// ErrZ85 reports text that is not Z85 (a length not a multiple of five, a
// character outside the alphabet, a group above 2^32-1), or bytes whose
// length is not a multiple of four.
var ErrZ85 = errors.New("zmtp: bad Z85")

// Z85Encode returns the Z85 text of b, whose length must be a multiple of
// four (ErrZ85 otherwise).
func Z85Encode(b []byte) (string, error) {
	if len(b)%4 != 0 {
		return "", fmt.Errorf("%w: %d bytes, not a multiple of 4", ErrZ85, len(b))
	}
	out := make([]byte, 0, len(b)/4*5)
	for i := 0; i < len(b); i += 4 {
		v := uint32(b[i])<<24 | uint32(b[i+1])<<16 | uint32(b[i+2])<<8 | uint32(b[i+3])
		var g [5]byte
		for j := 4; j >= 0; j-- {
			g[j] = z85Alphabet[v%85]
			v /= 85
		}
		out = append(out, g[:]...)
	}
	return string(out), nil
}

// Z85Decode returns the bytes of Z85 text s (ErrZ85 for text that is
// not Z85).
func Z85Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("%w: %d characters, not a multiple of 5", ErrZ85, len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := 0; j < 5; j++ {
			d := z85Value[s[i+j]]
			if d == 0 {
				return nil, fmt.Errorf("%w: character %q at %d", ErrZ85, s[i+j], i+j)
			}
			v = v*85 + uint64(d-1)
		}
		if v > 0xffffffff {
			return nil, fmt.Errorf("%w: group %q above 2^32-1", ErrZ85, s[i:i+5])
		}
		out = append(out, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return out, nil
}
