package broadcast_test

import (
	"errors"
	"fmt"

	"github.com/dutyrt/duty/broadcast"
)

// One transmitter, two receivers: a zero-copy Receiver that validates after
// reading, and a CopyReceiver that does it for the caller.
func Example() {
	buf, err := broadcast.NewBuffer(1024)
	if err != nil {
		panic(err)
	}
	tx, _ := broadcast.NewTransmitter(buf)
	rx, _ := broadcast.NewReceiver(buf)
	cr := broadcast.NewCopyReceiver(mustReceiver(buf), 0)

	_ = tx.Transmit(1, []byte("hello"))
	_ = tx.Transmit(2, []byte("world"))

	for rx.ReceiveNext() {
		msg := string(rx.Payload()) // read (here: copy) first...
		if rx.Validate() {          // ...then check it was not overwritten meanwhile
			fmt.Println("raw:", rx.TypeID(), msg)
		}
	}
	for {
		n, err := cr.Receive(func(typeID int32, payload []byte) {
			fmt.Println("copy:", typeID, string(payload))
		})
		if n == 0 || err != nil {
			break
		}
	}
	// Output:
	// raw: 1 hello
	// raw: 2 world
	// copy: 1 hello
	// copy: 2 world
}

// A receiver that falls a whole ring behind is lapped: the raw receiver
// counts it and goes on with the latest message; the copy receiver reports it.
func Example_lapped() {
	buf, _ := broadcast.NewBuffer(64) // max message 8 bytes
	tx, _ := broadcast.NewTransmitter(buf)
	rx := mustReceiver(buf)
	cr := broadcast.NewCopyReceiver(mustReceiver(buf), 0)

	for i := range 10 {
		_ = tx.Transmit(1, []byte{'0' + byte(i)})
	}
	if rx.ReceiveNext() && rx.Validate() {
		fmt.Println("raw receiver continues at", string(rx.Payload()), "after", rx.LappedCount(), "lap")
	}
	_, err := cr.Receive(func(int32, []byte) {})
	fmt.Println(errors.Is(err, broadcast.ErrLapped), err)
	// Output:
	// raw receiver continues at 9 after 1 lap
	// true broadcast: unable to keep up with broadcast
}

// A receiver created late joins at the latest message.
func ExampleNewReceiver() {
	buf, _ := broadcast.NewBuffer(1024)
	tx, _ := broadcast.NewTransmitter(buf)
	_ = tx.Transmit(1, []byte("old"))
	_ = tx.Transmit(1, []byte("latest"))

	rx, _ := broadcast.NewReceiver(buf)
	for rx.ReceiveNext() {
		if p := string(rx.Payload()); rx.Validate() {
			fmt.Println(p)
		}
	}
	// Output: latest
}

func ExampleTransmitter_Transmit_errors() {
	buf, _ := broadcast.NewBuffer(64)
	tx, _ := broadcast.NewTransmitter(buf)
	fmt.Println(tx.Transmit(0, nil))
	fmt.Println(tx.Transmit(1, make([]byte, 9)))
	_, err := broadcast.NewBuffer(100)
	fmt.Println(errors.Is(err, broadcast.ErrCapacity))
	// Output:
	// broadcast: type id must be greater than zero: type=0
	// broadcast: message too long: length=9, max=8
	// true
}

func mustReceiver(buf []byte) *broadcast.Receiver {
	rx, err := broadcast.NewReceiver(buf)
	if err != nil {
		panic(err)
	}
	return rx
}
