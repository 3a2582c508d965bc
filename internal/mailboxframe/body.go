package mailboxframe

import (
	"encoding/binary"
	"errors"
	"sync/atomic"

	"github.com/dutyrt/duty/internal/record"
)

// BodyWriter copies the body of a message (the payload, or length-prefixed
// parts) into successive fragments.
type BodyWriter struct {
	parts [][]byte
	multi bool
	part  int // current part
	off   int // offset in the current part's prefix+bytes
}

// NewBodyWriter returns a writer of the body of a message of parts.
func NewBodyWriter(parts [][]byte) BodyWriter {
	return BodyWriter{parts: parts, multi: len(parts) > 1}
}

// Fill fills dst with the next len(dst) bytes of the body.
func (w *BodyWriter) Fill(dst []byte) {
	for len(dst) > 0 {
		p := w.parts[w.part]
		if w.multi && w.off == 0 && len(dst) >= partLengthPrefix+len(p) {
			// The whole part, prefix included, fits: the common case.
			binary.LittleEndian.PutUint32(dst, uint32(len(p)))
			copy(dst[partLengthPrefix:], p)
			dst = dst[partLengthPrefix+len(p):]
			w.part++
			continue
		}
		pre := 0
		if w.multi {
			pre = partLengthPrefix
			if w.off < pre {
				var lp [partLengthPrefix]byte
				binary.LittleEndian.PutUint32(lp[:], uint32(len(p)))
				n := copy(dst, lp[w.off:])
				dst = dst[n:]
				w.off += n
			}
		}
		if w.off >= pre {
			n := copy(dst, p[w.off-pre:])
			dst = dst[n:]
			w.off += n
			if w.off == pre+len(p) {
				w.part++
				w.off = 0
			}
		}
	}
}

// PutPartLengths writes the length prefixes of a body of parts of the
// given lengths into body, whose parts are then written in place (a
// claim of several parts); a body of one part has none.
func PutPartLengths(body []byte, lengths []int) {
	if len(lengths) < 2 {
		return
	}
	at := 0
	for _, l := range lengths {
		binary.LittleEndian.PutUint32(body[at:], uint32(l))
		at += partLengthPrefix + l
	}
}

// Part returns part i (0 <= i < n) of body, the body of a message of n
// parts that a claim wrote in place (PutPartLengths).
func Part(body []byte, n, i int) []byte {
	if n == 1 {
		return body
	}
	for {
		l := int(binary.LittleEndian.Uint32(body))
		body = body[partLengthPrefix:]
		if i == 0 {
			return body[:l:l]
		}
		body = body[l:]
		i--
	}
}

// ErrOutside is FillBatch's error for a batch record outside the ring: a
// batch the ring handed out, so never.
var ErrOutside = errors.New("a batch record outside the ring")

// FillBatch appends the first upTo records of a framed message, of type
// recordType (flags included), to b, a batch claimed from the ring whose
// records log views and whose tail is tail (all of them but in the tests
// that simulate a sender dying half-way), each sealed in a checksummed
// layout, and returns the index of the first record's header. Its errors
// are the batch's (record.Batch.Append) or ErrOutside.
func FillBatch(b *record.Batch, log *record.Log, tail *atomic.Int64, lay *Layout, recordType int32, h *Header, w *BodyWriter, upTo int) (int, error) {
	rest, over := int(h.BodyLen), lay.Over
	var first int  // the first record's index
	var pos0 int64 // and its position (checksummed layout)
	for i := range upTo {
		frag := min(rest, lay.MaxFrag)
		rec, err := b.Append(recordType, over+HeaderLength+frag)
		if err != nil {
			return 0, err
		}
		h.Index = uint32(i)
		var at int
		if i == 0 || lay.Checked {
			// The records of a batch are contiguous, in one lap: the first
			// one's position, read as soon as the batch is claimed, places
			// them all.
			var ok bool
			at, ok = log.IndexOf(rec)
			if !ok {
				return 0, ErrOutside
			}
			if i == 0 {
				first = at
				if lay.Checked {
					pos0 = ClaimPosition(tail.Load(), log.Capacity(), at)
				}
			}
		}
		if lay.Checked {
			PutHeader(rec[over:], h)
			w.Fill(rec[over+HeaderLength:])
			Seal(rec, recordType, pos0+int64(at-first))
		} else {
			PutHeader(rec, h)
			w.Fill(rec[HeaderLength:])
		}
		rest -= frag
	}
	return first, nil
}
