package broadcast

import "sync/atomic"

// maxAttempts bounds the work of one ReceiveNext call when the transmitter
// laps the receiver while it reads a header: the call then gives up and
// returns false, and the next call starts again from latest. A correct
// transmitter that laps a receiver this many times in a row within one call
// leaves nothing readable anyway; a corrupt buffer cannot make the call spin.
const maxAttempts = 4

// testHookAfterLapCheck, when set (tests only), runs between ReceiveNext's
// lap check and its header reads: where a transmitter's overwrite races
// with the receiver.
var testHookAfterLapCheck func()

// Receiver reads messages from a broadcast buffer, zero copy. Any number of
// receivers may read one buffer, each from its own goroutine; one Receiver is
// not safe for concurrent use, except LappedCount.
//
// A receiver is lossy: if the transmitter laps it (writes a whole ring while
// it is not reading), it jumps to the latest message and counts a lap. Every
// message read from the ring may be overwritten while the caller reads it, so
// the caller must call Validate after reading and discard the message if it
// returns false. CopyReceiver does this for you.
type Receiver struct {
	v            view
	cursor       int64 // position of the record exposed by the last ReceiveNext
	next         int64 // position of the record after it
	recordOffset int64
	length       int // payload length of the exposed record
	typeID       int32
	maxRecord    int64 // MaxMsgLength + headerLength
	err          error
	lapped       atomic.Int64
}

// NewReceiver returns a receiver over buf that joins at the latest message:
// the first ReceiveNext returns the most recent complete message (on a buffer
// never written to, the first one transmitted). It never writes to buf.
//
// Errors: ErrCapacity (a length or alignment it cannot use), ErrCorrupt (a latest counter no
// transmitter can have written).
func NewReceiver(buf []byte) (*Receiver, error) {
	v, err := newView(buf)
	if err != nil {
		return nil, err
	}
	latest := v.latest.Load()
	if !validPosition(latest) {
		return nil, corruptError("latest counter %d", latest)
	}
	return &Receiver{
		v:         v,
		cursor:    latest,
		next:      latest,
		maxRecord: int64(maxMsgLength(int(v.capacity))) + headerLength,
	}, nil
}

// ReceiveNext moves to the next message and reports whether there is one.
// It returns false when the receiver has caught up with the transmitter,
// and, for good, once the buffer is found corrupt (see Err). After a true
// return, TypeID and Payload describe the message until the next call;
// read them, then call Validate.
//
// If the transmitter has lapped the receiver, ReceiveNext increments
// LappedCount (once per detection, however many laps were missed) and
// continues at the latest message; a call that is lapped again while it
// retries counts that lap too. It does not allocate, and does bounded work on any buffer
// contents.
func (r *Receiver) ReceiveNext() bool {
	if r.err != nil {
		return false
	}
	v := &r.v
	// tail is loaded before anything it publishes: a record below tail is
	// complete (or overwritten since, which tailIntent reveals).
	if v.tail.Load() <= r.next {
		return false
	}
	cursor := r.next
	for range maxAttempts {
		if cursor+v.capacity <= v.tailIntent.Load() {
			r.lapped.Add(1)
			latest := v.latest.Load()
			// A correct transmitter's latest is at least a ring minus two
			// records past a lapped cursor, so it cannot go backwards.
			if !validPosition(latest) || latest < r.next {
				r.err = corruptError("latest counter %d behind receiver position %d", latest, r.next)
				return false
			}
			cursor = latest
		}
		if testHookAfterLapCheck != nil {
			testHookAfterLapCheck()
		}
		start := cursor
		off := cursor & v.mask
		length, typeID := v.header(off)
		if typeID == paddingTypeID && off != 0 && int64(length) == v.capacity-off {
			cursor += int64(length)
			off = 0
			length, typeID = v.header(0)
		}
		// The header words just read are only the record's if the
		// transmitter had not started to overwrite it by then. It stores
		// the tail intent before it writes any byte of a record, so this
		// load, after the header loads, sees an intent that laps start if
		// they might have read a newer record's bytes (start <= cursor, so
		// this covers a padding header and the record after it). Without
		// it, a torn header that looks valid would set next inside another
		// record, where the lap check above no longer sees a lap: the next
		// call would read payload bytes as a header, and deliver them as a
		// message or report a correct buffer as corrupt.
		if start+v.capacity <= v.tailIntent.Load() {
			cursor = start
			continue // the lap check counts the lap and moves to latest
		}
		if typeID >= 1 && length >= headerLength && int64(length) <= r.maxRecord &&
			off+align(int64(length)) <= v.capacity {
			r.cursor = cursor
			r.next = cursor + align(int64(length))
			r.recordOffset = off
			r.length = int(length) - headerLength
			r.typeID = typeID
			return true
		}
		// An intact header that no correct transmitter writes.
		r.err = corruptError("record header length=%d type=%d at position %d", length, typeID, cursor)
		return false
	}
	return false
}

// TypeID returns the type id of the message exposed by ReceiveNext.
func (r *Receiver) TypeID() int32 { return r.typeID }

// Payload returns the payload of the message exposed by ReceiveNext. The
// slice aliases the ring: the transmitter may overwrite it at any time, so
// use what was read only if Validate returns true afterwards, and never
// retain the slice past the next ReceiveNext. Do not write to it.
func (r *Receiver) Payload() []byte {
	off := r.recordOffset + headerLength
	return r.v.ring[off : off+int64(r.length) : off+int64(r.length)]
}

// Validate reports whether the message exposed by ReceiveNext was still
// intact after the caller finished reading it: false means the transmitter
// may have overwritten it meanwhile, and everything read must be discarded.
// Ordering: it loads the tail intent (sequentially consistent) after the
// caller's reads, and the transmitter stores the intent before it writes
// any byte of the record that overwrites this one (payload_plain.go and
// payload_atomic.go say when plain payload reads are ordered).
func (r *Receiver) Validate() bool {
	return r.err == nil && r.cursor+r.v.capacity > r.v.tailIntent.Load()
}

// LappedCount returns how many times the transmitter was found to have
// lapped this receiver. It may be called from any goroutine.
func (r *Receiver) LappedCount() int64 { return r.lapped.Load() }

// Err returns the ErrCorrupt error that stopped the receiver, or nil.
// Corruption is sticky: a new receiver over the same buffer starts again
// from the latest message.
func (r *Receiver) Err() error { return r.err }

// Capacity returns the ring capacity in bytes (without the trailer).
func (r *Receiver) Capacity() int { return int(r.v.capacity) }

// MaxMsgLength returns the largest payload a correct transmitter sends.
func (r *Receiver) MaxMsgLength() int { return int(r.maxRecord) - headerLength }
