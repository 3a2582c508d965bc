package zmtpwire

import "encoding/binary"

// AppendMessage appends a message's frames to b, bodies copied, as
// Encoder.Message encodes them: every part but the last with MORE, no
// parts as one empty frame.
func AppendMessage(b []byte, parts [][]byte) []byte {
	if len(parts) == 1 && len(parts[0]) <= MaxShort {
		// The common small message: one short frame.
		p := parts[0]
		return append(append(b, 0, byte(len(p))), p...)
	}
	if len(parts) == 0 {
		return append(b, 0, 0)
	}
	last := len(parts) - 1
	for i, p := range parts {
		var f byte
		if i < last {
			f = FlagMore
		}
		if len(p) > MaxShort {
			b = append(b, f|FlagLong)
			b = binary.BigEndian.AppendUint64(b, uint64(len(p)))
		} else {
			b = append(b, f, byte(len(p)))
		}
		b = append(b, p...)
	}
	return b
}

// FramesLen returns the bytes of a message's frames, as AppendMessage
// encodes them.
func FramesLen(parts [][]byte) int {
	if len(parts) == 0 {
		return ShortHeader
	}
	n := 0
	for _, p := range parts {
		if len(p) > MaxShort {
			n += LongHeader + len(p)
		} else {
			n += ShortHeader + len(p)
		}
	}
	return n
}

// FrameSize returns the body size and header length of the frame at the
// start of b, whose header is whole there.
func FrameSize(b []byte) (size, header int) {
	if b[0]&FlagLong != 0 {
		return int(binary.BigEndian.Uint64(b[1:])), LongHeader
	}
	return int(b[1]), ShortHeader
}
