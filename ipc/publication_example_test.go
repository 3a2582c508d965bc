package ipc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dutyrt/duty/ipc"
)

// An IPC publication: the owner creates it and publishes; subscribers (here
// two, in the same process through their own mappings; normally other
// processes) join by path and poll, each at its own position.
func ExampleCreatePublication() {
	dir, err := os.MkdirTemp("", "duty-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	pub, err := ipc.CreatePublication(dir, "quotes", 64<<10)
	if err != nil {
		panic(err)
	}
	defer pub.Close()
	_, err = pub.Offer(1, []byte("nobody yet"))
	fmt.Println(err)

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	a, err := ipc.OpenSubscription(ctx, pub.File().Path())
	if err != nil {
		panic(err)
	}
	defer a.Close()
	b, err := ipc.OpenSubscription(ctx, pub.File().Path())
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
		if errors.Is(err, ipc.ErrEndOfStream) { // the publication was closed and a has read it all
			fmt.Println("a end of stream")
			break
		}
	}
	n, _ := b.Poll(func(int32, []byte) {}, 10)
	fmt.Println("b got", n, "messages")
	// Output:
	// ipc: publication not connected
	// a got EURUSD 1.0842
	// a got USDJPY 151.22
	// a end of stream
	// b got 2 messages
}
