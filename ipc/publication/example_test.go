package publication_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dutyrt/duty/ipc/publication"
)

// An IPC publication: the owner creates it and publishes; subscribers (here
// two, in the same process through their own mappings; normally other
// processes) join by path and poll, each at its own position.
func ExampleCreate() {
	dir, err := os.MkdirTemp("", "duty-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	pub, err := publication.Create(dir, "quotes", 64<<10)
	if err != nil {
		panic(err)
	}
	defer pub.Close()
	_, err = pub.Offer(1, []byte("nobody yet"))
	fmt.Println(err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	a, err := publication.OpenSubscription(ctx, pub.File().Path())
	if err != nil {
		panic(err)
	}
	defer a.Close()
	b, err := publication.OpenSubscription(ctx, pub.File().Path())
	if err != nil {
		panic(err)
	}
	defer b.Close()

	for _, q := range []string{"EURUSD 1.0842", "USDJPY 151.22"} {
		if _, err := pub.Offer(1, []byte(q)); err != nil {
			panic(err)
		}
	}
	_ = pub.Heartbeat(time.Now().UnixMilli()) // from the owner's duty cycle
	pub.Close()                               // end of stream

	for {
		_, err := a.Poll(func(typeID int32, payload []byte) {
			fmt.Printf("a got %s\n", payload)
		}, 10)
		if errors.Is(err, publication.ErrEndOfStream) { // the publication was closed and a has read it all
			fmt.Println("a end of stream")
			break
		}
	}
	n, _ := b.Poll(func(int32, []byte) {}, 10)
	fmt.Println("b got", n, "messages")
	// Output:
	// publication: not connected
	// a got EURUSD 1.0842
	// a got USDJPY 151.22
	// a end of stream
	// b got 2 messages
}

// A claim writes the payload in place, in the log: TryClaim reserves the
// space, the caller fills Payload, and Commit publishes it (Abort would
// turn it into padding). Every claim must be completed, on error paths too.
func ExamplePublication_TryClaim() {
	dir, err := os.MkdirTemp("", "duty-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	pub, err := publication.Create(dir, "orders", 64<<10)
	if err != nil {
		panic(err)
	}
	defer pub.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	sub, err := publication.OpenSubscription(ctx, pub.File().Path())
	if err != nil {
		panic(err)
	}
	defer sub.Close()

	// The owner's claim makes room by updating the limit itself. A
	// publisher retries the transient outcomes (ErrBackPressured,
	// ErrAdminAction, ErrNotConnected) from its duty cycle.
	c, err := pub.TryClaim(2, len("BUY 100"))
	if err != nil {
		panic(err)
	}
	copy(c.Payload, "BUY 100")
	if err := c.Commit(); err != nil {
		panic(err)
	}
	fmt.Println("published up to", c.Position())

	_, err = sub.Poll(func(typeID int32, payload []byte) {
		fmt.Printf("type %d: %s\n", typeID, payload)
	}, 10)
	fmt.Println(err, sub.Position())
	// Output:
	// published up to 16
	// type 2: BUY 100
	// <nil> 16
}
