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
// open it by path and send, with the mailbox package's API.
func ExampleCreateMailbox() {
	dir, err := os.MkdirTemp("", "duty-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	owner, err := ipc.CreateMailbox(dir, "orders", ipc.MailboxConfig{ConsumerTimeout: 5 * time.Second})
	if err != nil {
		panic(err)
	}
	defer owner.Close()

	// In a sending process:
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	sender, err := ipc.OpenMailbox(ctx, owner.Path())
	if err != nil {
		panic(err)
	}
	defer sender.Close()
	if err := sender.Send(1, []byte("buy 100")); err != nil {
		panic(err) // mailbox.ErrBackPressured, mailbox.ErrClosed, ipc.ErrConsumerDead, ...
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
	// Output:
	// type 1: ["buy 100"]
	// type 2: ["header" "body"]
	// delivered: 2 torn: 0
}

// The owner's mailbox drained by an agent: NewMailboxActor is
// mailbox.Actor plus the file's heartbeats. Here an agent.Invoker runs its
// duty cycle on the caller's goroutine; a runner.Runner would give it a
// thread of its own.
func ExampleNewMailboxActor() {
	dir, err := os.MkdirTemp("", "duty-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	owner, err := ipc.CreateMailbox(dir, "orders", ipc.MailboxConfig{})
	if err != nil {
		panic(err)
	}
	defer owner.Close() // after the actor closed: Close unmaps the file

	actor, err := ipc.NewMailboxActor("matcher", owner, func(m *mailbox.Message) mailbox.Action {
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
	fmt.Println("closed:", owner.IsClosed())
	// Output:
	// order "buy 100"
	// order "sell 50"
	// closed: true
}
