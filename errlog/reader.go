package errlog

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/internal/atomicbuf"
)

// Observation is one distinct error read from a log.
type Observation struct {
	// Count is the number of times the error was observed. A new record
	// written by Agrona can briefly show 0 (it publishes the record before
	// counting the observation); a duty Log stores 1 before publishing, so
	// its records never show 0. It is read as an unsigned 32-bit
	// word, so the count of a Java writer that wrapped past 2^31 stays
	// right up to 2^32; a duty Log stops counting at MaxInt32.
	Count int64
	// First and Last are the times of the first and the last observation
	// (ms precision, from the writer's clock).
	First, Last time.Time
	// Text is the encoded error: its type and message, the stack of the
	// call that recorded it, its causes (see the package documentation).
	Text string
}

// Read calls fn with every observation in buf whose last observation time
// is at or after since (epoch ms; 0 or less: all of them, even those
// timestamped before 1970 by their writer), in the order
// they were first recorded, and returns how many it delivered. It is
// Agrona's ErrorLogReader.read: from offset 0, while a header fits, load
// the record length (atomically: it is the word a writer publishes last);
// a length of 0 ends the log; otherwise deliver and advance by the aligned
// length.
//
// buf may be written concurrently by a Log, in this process or in another
// one mapping the same memory: Read only loads from it and sees every
// record published before it reached that record. It trusts nothing: a
// record with a length below headerLength (other than 0; negative
// included) or running past the end of buf stops the walk with an error
// wrapping ErrCorrupt, after delivering the records before it (Agrona's
// reader stops silently on a negative length and clamps one past the end). A buf that is not 8-byte aligned gives an error.
// The work is bounded by len(buf)/recordAlignment records whatever buf
// holds.
//
// Each delivered Text is a new string (one allocation per observation).
func Read(buf []byte, since int64, fn func(Observation)) (int, error) {
	b, err := wrap(buf)
	if err != nil {
		return 0, err
	}
	n := 0
	_, err = walk(b, func(off, length int) {
		last := b.Int64At(off + lastObservationTimestampOffset).Load()
		if since > 0 && last < since {
			return
		}
		text := buf[off+encodedErrorOffset : off+length]
		fn(Observation{
			Count: int64(uint32(b.Int32At(off + observationCountOffset).Load())),
			First: time.UnixMilli(b.Int64At(off + firstObservationTimestampOffset).Load()),
			Last:  time.UnixMilli(last),
			Text:  string(text),
		})
		n++
	})
	return n, err
}

// HasErrors reports whether buf holds at least one record: Agrona's
// ErrorLogReader.hasErrors (capacity of at least 4 bytes and a first length
// above 0). A buf that is not 8-byte aligned has none that can be read.
func HasErrors(buf []byte) bool {
	b, err := wrap(buf)
	if err != nil || b.Len() < 4 {
		return false
	}
	return b.Int32At(lengthOffset).Load() > 0
}

// wrap checks buf's alignment.
func wrap(buf []byte) (atomicbuf.Buffer, error) {
	b, err := atomicbuf.New(buf)
	if err != nil {
		return b, fmt.Errorf("%w: buffer at %p: %w", errMisaligned, unsafe.SliceData(buf), err)
	}
	return b, nil
}

// walk visits every published record of b in order with its offset and
// length (headerLength <= length <= b.Len()-off), and returns the offset
// where the log ends: the first offset whose length word is 0 (or where no
// header fits). A length below headerLength other than 0 (negative
// included: no writer stores one) or past the end of b is ErrCorrupt; the
// returned offset is then that record's.
func walk(b atomicbuf.Buffer, visit func(off, length int)) (int, error) {
	capacity := b.Len()
	off := 0
	for off <= capacity-headerLength {
		length := int(b.Int32At(off + lengthOffset).Load())
		switch {
		case length == 0:
			return off, nil
		case length < headerLength:
			return off, corrupt("record at %d: length %d below the header's %d", off, length, headerLength)
		case length > capacity-off:
			return off, corrupt("record at %d: length %d past the end of the %d-byte buffer", off, length, capacity)
		}
		visit(off, length)
		off += alignRecord(length)
	}
	return off, nil
}
