package broadcast

import "fmt"

// defaultScratchLength is the scratch buffer size NewCopyReceiver uses when
// given none (Agrona's SCRATCH_BUFFER_LENGTH).
const defaultScratchLength = 4096

// CopyReceiver wraps a Receiver: it copies each message into a private
// scratch buffer, validates the copy, and only then hands it to the caller.
// Unlike the Receiver it turns loss into an error, ErrLapped. Like the
// Receiver it is for one goroutine.
type CopyReceiver struct {
	r       *Receiver
	scratch []byte
}

// NewCopyReceiver returns a copy receiver over r with a scratch buffer of
// scratch bytes (defaultScratchLength if scratch <= 0). Messages longer than
// the scratch buffer are reported as ErrTooLong.
func NewCopyReceiver(r *Receiver, scratch int) *CopyReceiver {
	if scratch <= 0 {
		scratch = defaultScratchLength
	}
	return &CopyReceiver{r: r, scratch: make([]byte, scratch)}
}

// receiver returns the wrapped receiver (for LappedCount, say).
func (c *CopyReceiver) receiver() *Receiver { return c.r }

// Receive delivers at most one message to handler and returns the number
// delivered, 0 or 1 (docs/agrona.md, "Copy receiver"). The payload handed
// to handler is the scratch buffer: valid only during the call. It does not
// allocate.
//
// Errors, after which the receiver has moved past the message:
//   - ErrLapped (returned as is, unwrapped): messages were lost, either
//     because the transmitter lapped the receiver before ReceiveNext, or
//     because the message was overwritten while it was copied;
//   - ErrTooLong: the message does not fit the scratch buffer;
//   - ErrCorrupt: the buffer is corrupt (sticky, see Receiver.Err).
func (c *CopyReceiver) Receive(handler func(typeID int32, payload []byte)) (int, error) {
	r := c.r
	lapped := r.lapped.Load()
	if !r.ReceiveNext() {
		if r.err != nil {
			return 0, r.err
		}
		// A call that found the receiver lapped and then nothing intact
		// at latest (every attempt overwritten while it read) still lost
		// messages: say so now, or the next call's snapshot hides it.
		if r.lapped.Load() != lapped {
			return 0, ErrLapped
		}
		return 0, nil
	}
	if r.lapped.Load() != lapped {
		return 0, ErrLapped
	}
	typeID, n := r.typeID, r.length
	if n > len(c.scratch) {
		if !r.Validate() {
			return 0, ErrLapped // the length itself may be torn
		}
		return 0, fmt.Errorf("%w: length=%d, scratch=%d", ErrTooLong, n, len(c.scratch))
	}
	dst := c.scratch[:n]
	readPayload(dst, &r.v, r.recordOffset+headerLength)
	if !r.Validate() {
		return 0, ErrLapped
	}
	handler(typeID, dst)
	return 1, nil
}
