// Package message gives mailbox messages Go types: a codec for
// fixed-layout structs, an interface for types with an encoding of their
// own, and a Router that hands each message to the typed handler of its
// type id, so that an agent's duty cycle is one drain of its mailbox into
// its router.
//
//	type Order struct {
//		ID    uint64
//		Price int64
//		Qty   int32
//		Side  uint8
//		_     [3]byte // explicit padding: the layout has no hidden bytes
//	}
//	var Orders = message.MustFixed[Order](1) // type id 1, checked once
//
//	err := Orders.Send(mb, &Order{ID: 7, Price: 101, Qty: 5}) // one copy, no allocation
//
//	r := message.NewRouter()
//	message.Handle(r, Orders, func(o *Order) error { ...; return nil })
//	actor, err := mailbox.NewReceiverActor("engine", mb, r)
//
// # Fixed layouts
//
// Fixed[T] sends a T as its own bytes: no reflection and no field-by-field
// encoding on the hot path. NewFixed checks T once: its fields (at any
// depth of structs and arrays) are fixed-size integers, floats, complex
// numbers and bools (not int, uint or uintptr, whose size depends on the
// platform; no pointers, strings, slices, maps, channels, functions or
// interfaces), and the struct has no implicit padding, at the end either:
// every byte of the layout belongs to a field, blank fields (_ [3]byte)
// included. Such a layout is the same on every platform Go supports, and
// the bytes are little-endian, Agrona's byte order; NewFixed refuses to
// run on a big-endian machine (ErrLayout). A message of a Fixed type
// is one part of exactly Size bytes.
//
// Decoding bytes another process wrote is checked: a payload of the wrong
// length, or a bool field holding a byte other than 0 or 1 (which Go's
// bool cannot represent), is an error (ErrPayload), never a
// value with undefined behaviour.
//
// # Other encodings
//
// A type whose encoding is its own (variable length, strings) implements
// Codec[T]; Send and Handle take any Codec. Fixed[T] is a Codec[T] too.
//
// # Request and reply
//
// A request type starts with a RequestHeader (a call id and the caller's
// Address, a fixed 32-byte name), a reply type with a ReplyHeader. The
// caller's Calls asks (Calls.Ask), routes the replies on the caller's
// router and times calls out from its duty cycle (Calls.Poll), with
// defaults for the deadline and its timer wheel; each call ends once, with
// its reply or ErrTimeout. The server answers with Fixed.Reply, which a
// Registry resolves to a mailbox in this process or in a Directory such as
// ipc.Dir (mailbox files).
//
// # Routing
//
// A Router maps type ids to typed handlers. It is a mailbox.Receiver, and
// a mailbox.Dispatcher whose routes the drain calls directly:
// DrainTo(r, n) and NewReceiverActor use it. A handler
// gets a *T that is valid only during its call: for a Fixed type it points
// into the mailbox's ring when the payload is aligned for T (zero copy),
// or to the route's own copy otherwise; for a Codec, to the route's value
// that Decode filled. Copy what must outlive the call. A message whose type
// id has no route goes to the fallback (Router.Fallback), or is counted
// and reported as an error wrapping ErrNoRoute. A payload that does not
// decode is counted and reported, and the drain goes on. A handler's error
// is reported the same way (see mailbox.Receiver): it reaches the runner's
// error handler when the router runs in an actor.
//
// # Back-pressure
//
// A handler whose send finds the destination full returns that send's
// error (wrapping mailbox.ErrBackPressured): the router then leaves the
// message in the mailbox and ends the drain (mailbox.Abort, Agrona's
// ABORT), and the next duty cycle delivers the same message again, so a
// reply is never lost to a full mailbox. The router counts it in
// RouterStats.Aborted, not as a failure. mailbox.ErrConsumerDead (the
// destination's consumer has stopped) is not back-pressure: that message
// is consumed and the error reported.
//
// Sends and dispatch allocate nothing; a Router is used by the one
// goroutine that drains its mailbox.
package message
