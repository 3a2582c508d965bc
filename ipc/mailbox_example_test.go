package ipc_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
)

// A mailbox in a shared file: the owner creates it and drains it; any
// number of other processes (here the same one, through a second mapping)
// open it by path and send. Both get an ordinary *mailbox.Mailbox, and the
// file's handle to close.
func ExampleCreateMailbox() {
	dir, err := os.MkdirTemp("", "duty-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	owner, file, err := ipc.CreateMailbox(dir, "orders", mailbox.Config{}, ipc.WithConsumerTimeout(5*time.Second))
	if err != nil {
		panic(err)
	}
	defer file.Close()

	// In a sending process:
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sender, senderFile, err := ipc.OpenMailbox(ctx, file.File.Path())
	if err != nil {
		panic(err)
	}
	defer senderFile.Close()
	if err := sender.Send(1, []byte("buy 100")); err != nil {
		panic(err) // mailbox.ErrBackPressured, mailbox.ErrClosed, mailbox.ErrConsumerDead, ...
	}
	if err := sender.SendParts(2, []byte("header"), []byte("body")); err != nil {
		panic(err)
	}

	// The owner's duty cycle:
	_, err = owner.Drain(func(m *mailbox.Message) mailbox.Action {
		fmt.Printf("type %d: %q\n", m.TypeID(), m.Parts())
		return mailbox.Continue
	}, 16)
	if err != nil {
		panic(err)
	}
	st := owner.Stats()
	fmt.Println("delivered:", st.Delivered, "torn:", st.Torn)
	fmt.Println("the sender sees:", sender.Stats().Delivered)
	// Output:
	// type 1: ["buy 100"]
	// type 2: ["header" "body"]
	// delivered: 2 torn: 0
	// the sender sees: 2
}

// The owner's mailbox drained by an agent: mailbox.NewActor, whose duty
// cycles keep the file's heartbeats too. Here the caller's goroutine runs
// its duty cycle by hand; a runner.Runner would give it a thread of its
// own.
func ExampleCreateMailbox_actor() {
	dir, err := os.MkdirTemp("", "duty-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	owner, file, err := ipc.CreateMailbox(dir, "orders", mailbox.Config{})
	if err != nil {
		panic(err)
	}
	defer file.Close() // after the actor closed: Close unmaps the file

	actor, err := mailbox.NewActor("matcher", owner, func(m *mailbox.Message) mailbox.Action {
		fmt.Printf("order %q\n", m.Payload())
		return mailbox.Continue
	})
	if err != nil {
		panic(err)
	}
	if err := actor.OnStart(); err != nil {
		panic(err)
	}
	_ = owner.Send(1, []byte("buy 100")) // any process that opened the file
	if _, err := actor.DoWork(); err != nil {
		panic(err)
	}
	_ = owner.Send(1, []byte("sell 50"))
	if err := actor.OnClose(); err != nil { // delivers what is queued
		panic(err)
	}
	fmt.Println(owner.Err())
	// Output:
	// order "buy 100"
	// order "sell 50"
	// mailbox: closed
}
