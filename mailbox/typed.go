package mailbox

// Encoder is a fixed-layout binary message that writes itself straight
// into claimed ring space. Implement it on a value type (no pointers
// inside) and SendTyped sends it without allocating or copying twice.
type Encoder interface {
	// TypeID returns the message's type id (1..MaxTypeID).
	TypeID() int32
	// EncodedLen returns the number of bytes Encode writes: at most
	// Mailbox.MaxClaimLength.
	EncodedLen() int
	// Encode writes the message into b, which is EncodedLen bytes long
	// and aliases the ring. It must not panic: the claim would stay open
	// until the liveness check releases it (counted as torn).
	Encode(b []byte)
}

// Decoder reads a fixed-layout message from a payload. Decode must check
// the length and return an error wrapping ErrTooShort for a short payload,
// never panic, and must not retain b (it aliases the ring).
type Decoder interface {
	Decode(b []byte) error
}

// SendTyped claims EncodedLen bytes, lets msg encode itself into them and
// commits: one copy, no allocation. Outcomes as for Mailbox.Claim.
func SendTyped[E Encoder](mb *Mailbox, msg E) error {
	c, err := mb.Claim(msg.TypeID(), msg.EncodedLen())
	if err != nil {
		return err
	}
	msg.Encode(c.Payload())
	return c.Commit()
}

// DecodeTyped decodes m's payload into d, after checking that m is a
// one-part message of type typeID; a mismatch is an error wrapping
// ErrTypeID or ErrParts.
func DecodeTyped[D Decoder](m *Message, typeID int32, d D) error {
	if m.typeID != typeID {
		return errTypeMismatch(m.typeID, typeID)
	}
	if len(m.parts) != 1 {
		return errPartsMismatch(len(m.parts))
	}
	return d.Decode(m.parts[0])
}
