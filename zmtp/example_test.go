package zmtp_test

import (
	"context"
	"fmt"

	"github.com/dutyrt/duty/zmtp"
)

// A PUSH socket sends a two-part message to a PULL socket over loopback
// TCP.
func Example() {
	pull, _ := zmtp.NewSocket(zmtp.Pull, zmtp.Options{})
	defer pull.Close()
	ep, _ := pull.Bind("tcp://127.0.0.1:0")

	push, _ := zmtp.NewSocket(zmtp.Push, zmtp.Options{})
	defer push.Close()
	_ = push.Connect(ep)
	_ = push.Send([]byte("quote"), []byte("EURUSD 1.0842"))

	var m zmtp.Message
	if err := pull.Recv(context.Background(), &m); err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range m.Parts() {
		fmt.Printf("%s\n", p)
	}
	// Output:
	// quote
	// EURUSD 1.0842
}
