package zmtpwire

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
	GreetingLen    = 64
	sigFirst       = 0xff // signature byte 0
	sigLast        = 0x7f // signature byte 9; bytes 1..8 are padding
	OffMajor       = 10
	offMinor       = 11
	OffMechanism   = 12
	MechanismLen   = 20
	offAsServer    = 32
	versionMajor   = 3
	versionMinor   = 1
	MechanismNULL  = "NULL"
	MechanismCURVE = "CURVE"
	propSocketType = "Socket-Type"
	propIdentity   = "Identity"
)

// Greeting returns this side's greeting: ZMTP 3.1, NULL, as-server clear
// (NULL has no client and server roles).
func Greeting() [GreetingLen]byte {
	var g [GreetingLen]byte
	g[0], g[9] = sigFirst, sigLast
	g[OffMajor], g[offMinor] = versionMajor, versionMinor
	copy(g[OffMechanism:], MechanismNULL)
	return g
}

// CurveGreeting returns this side's greeting for CURVE, as-server set on
// the CURVE server.
func CurveGreeting(asServer bool) [GreetingLen]byte {
	g := Greeting()
	clear(g[OffMechanism : OffMechanism+MechanismLen])
	copy(g[OffMechanism:], MechanismCURVE)
	if asServer {
		g[offAsServer] = 1
	}
	return g
}

// ReadGreeting reads the peer's greeting, which must name mechanism mech
// (ErrMechanism otherwise), and returns its minor version (0 for a ZMTP
// 3.0 peer, 1 for 3.1 and later). It reads the signature and major
// version first, so that a peer of another protocol is refused from its
// first eleven bytes (ErrGreeting). The as-server flag is not checked:
// libzmq leaves it clear in either role; two peers of one role fail in
// the handshake that follows.
func ReadGreeting(r io.Reader, mech string) (minor byte, err error) {
	var g [GreetingLen]byte
	if _, err := io.ReadFull(r, g[:offMinor]); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrGreeting, err)
	}
	if g[0] != sigFirst || g[9] != sigLast {
		return 0, fmt.Errorf("%w: signature % x", ErrGreeting, g[:10])
	}
	if g[OffMajor] < versionMajor {
		return 0, fmt.Errorf("%w: ZMTP major version %d", ErrGreeting, g[OffMajor])
	}
	if _, err := io.ReadFull(r, g[offMinor:]); err != nil {
		return 0, fmt.Errorf("%w: %w", ErrGreeting, err)
	}
	name := bytes.TrimRight(g[OffMechanism:OffMechanism+MechanismLen], "\x00")
	if !bytes.Equal(name, []byte(mech)) {
		return 0, fmt.Errorf("%w: %q, want %q", ErrMechanism, name, mech)
	}
	// A peer of a later major version speaks ours (the specification's
	// version negotiation): treat it as 3.1.
	if g[OffMajor] > versionMajor || g[offMinor] >= versionMinor {
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

// ReadyProperties is the data of a READY command that announces
// socketType (PUSH, PULL, ...) and identity.
func ReadyProperties(socketType string, identity []byte) []byte {
	b := appendProperty(nil, propSocketType, []byte(socketType))
	return appendProperty(b, propIdentity, identity)
}

// ParseProperties reads READY metadata and returns the peer's socket type
// and identity. Names compare without regard to case.
func ParseProperties(b []byte) (socketType string, identity []byte, err error) {
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

// ParseCommand splits a command frame's body into name and data
// (ErrProtocol for a body too short for its name).
func ParseCommand(b []byte) (name, data []byte, err error) {
	if len(b) == 0 || int(b[0]) > len(b)-1 {
		return nil, nil, fmt.Errorf("%w: malformed command of %d bytes", ErrProtocol, len(b))
	}
	n := int(b[0])
	return b[1 : 1+n], b[1+n:], nil
}

// ErrorReason returns the reason an ERROR command's data carries: its
// length-prefixed text, or the data as it is when the prefix is wrong.
func ErrorReason(data []byte) string {
	if len(data) == 0 || int(data[0]) > len(data)-1 {
		return string(data)
	}
	return string(data[1 : 1+int(data[0])])
}

// ReadCommand reads the next frame of a handshake, which must be command
// want, and returns its data. A message, another command, or an ERROR
// from the peer (its reason in the error) fail with ErrHandshake.
func ReadCommand(dec *Decoder, want string) ([]byte, error) {
	k, err := dec.Next()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	if k != KindCommand {
		return nil, fmt.Errorf("%w: a message before %s", ErrHandshake, want)
	}
	name, data, err := ParseCommand(dec.Command())
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrHandshake, err)
	}
	switch string(name) {
	case want:
		return data, nil
	case "ERROR":
		return nil, fmt.Errorf("%w: peer says %q", ErrHandshake, ErrorReason(data))
	}
	return nil, fmt.Errorf("%w: %q instead of %s", ErrHandshake, name, want)
}
