package zmtp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
)

// Greeting layout (docs/zmtp.md, "Greeting"): 64 bytes, sent by both
// peers before anything else.
const (
	greetingLen     = 64
	sigFirst        = 0xff // signature byte 0
	sigLast         = 0x7f // signature byte 9; bytes 1..8 are padding
	offMajor        = 10
	offMinor        = 11
	offMechanism    = 12
	mechanismLen    = 20
	offAsServer     = 32
	versionMajor    = 3
	versionMinor    = 1
	mechanismNULL   = "NULL"
	mechanismCURVE  = "CURVE"
	propSocketType  = "Socket-Type"
	propIdentity    = "Identity"
	maxPropertyName = 255
)

// greeting returns this side's greeting: ZMTP 3.1, NULL, as-server clear
// (NULL has no client and server roles).
func greeting() [greetingLen]byte {
	var g [greetingLen]byte
	g[0], g[9] = sigFirst, sigLast
	g[offMajor], g[offMinor] = versionMajor, versionMinor
	copy(g[offMechanism:], mechanismNULL)
	return g
}

// curveGreeting returns this side's greeting for CURVE, as-server set on
// the CURVE server.
func curveGreeting(asServer bool) [greetingLen]byte {
	g := greeting()
	clear(g[offMechanism : offMechanism+mechanismLen])
	copy(g[offMechanism:], mechanismCURVE)
	if asServer {
		g[offAsServer] = 1
	}
	return g
}

// readGreeting reads the peer's greeting and returns its minor version
// (0 for a ZMTP 3.0 peer, 1 for 3.1 and later). It reads the signature
// and major version first, so that a peer of another protocol is refused
// from its first eleven bytes.
func readGreeting(r io.Reader) (minor byte, err error) {
	return readGreetingOf(r, mechanismNULL)
}

// readGreetingOf is readGreeting for a mechanism: the peer's greeting must
// name mech. Its as-server flag is not checked: libzmq leaves it clear in
// either role; two peers of one role fail in the handshake that follows.
func readGreetingOf(r io.Reader, mech string) (minor byte, err error) {
	var g [greetingLen]byte
	if _, err := io.ReadFull(r, g[:offMinor]); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrGreeting, err)
	}
	if g[0] != sigFirst || g[9] != sigLast {
		return 0, fmt.Errorf("%w: signature % x", ErrGreeting, g[:10])
	}
	if g[offMajor] < versionMajor {
		return 0, fmt.Errorf("%w: ZMTP major version %d", ErrGreeting, g[offMajor])
	}
	if _, err := io.ReadFull(r, g[offMinor:]); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrGreeting, err)
	}
	name := bytes.TrimRight(g[offMechanism:offMechanism+mechanismLen], "\x00")
	if !bytes.Equal(name, []byte(mech)) {
		return 0, fmt.Errorf("%w: %q, want %q", ErrMechanism, name, mech)
	}
	// A peer of a later major version speaks ours (the specification's
	// version negotiation): treat it as 3.1.
	if g[offMajor] > versionMajor || g[offMinor] >= versionMinor {
		return versionMinor, nil
	}
	return 0, nil
}

// appendProperty appends one READY metadata property: name length (1
// byte), name, value length (4 bytes, big-endian), value.
func appendProperty(b []byte, name string, value []byte) []byte {
	b = append(b, byte(len(name)))
	b = append(b, name...)
	b = binary.BigEndian.AppendUint32(b, uint32(len(value)))
	return append(b, value...)
}

// readyProperties is the data of this side's READY command.
func readyProperties(t Type, identity []byte) []byte {
	b := appendProperty(nil, propSocketType, []byte(t.String()))
	return appendProperty(b, propIdentity, identity)
}

// parseProperties reads READY metadata and returns the peer's socket type
// and identity. Names compare without regard to case.
func parseProperties(b []byte) (socketType string, identity []byte, err error) {
	for len(b) > 0 {
		n := int(b[0])
		if n == 0 || len(b) < 1+n+4 {
			return "", nil, fmt.Errorf("%w: truncated property", ErrHandshake)
		}
		name := string(b[1 : 1+n])
		vlen := binary.BigEndian.Uint32(b[1+n:])
		b = b[1+n+4:]
		if uint64(vlen) > uint64(len(b)) {
			return "", nil, fmt.Errorf("%w: property %q runs past the command", ErrHandshake, name)
		}
		value := b[:vlen]
		b = b[vlen:]
		switch {
		case strings.EqualFold(name, propSocketType):
			socketType = string(value)
		case strings.EqualFold(name, propIdentity):
			identity = bytes.Clone(value)
		}
	}
	if socketType == "" {
		return "", nil, fmt.Errorf("%w: READY without Socket-Type", ErrHandshake)
	}
	return socketType, identity, nil
}

// parseCommand splits a command frame's body into name and data.
func parseCommand(b []byte) (name, data []byte, err error) {
	if len(b) == 0 || int(b[0]) > len(b)-1 {
		return nil, nil, fmt.Errorf("%w: malformed command of %d bytes", ErrProtocol, len(b))
	}
	n := int(b[0])
	return b[1 : 1+n], b[1+n:], nil
}
