package mailbox_test

import (
	"fmt"
	"strconv"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/runner"
)

// Two actors ping-pong, each draining its own mailbox in its duty cycle and
// sending to the other's. Invokers drive them step by step here; a
// runner.Runner per actor runs them on their own threads in a real program.
func ExampleNewActor() {
	pingBox, _ := mailbox.New(mailbox.Config{Name: "ping"})
	pongBox, _ := mailbox.New(mailbox.Config{Name: "pong"})

	var buf [20]byte
	pinger, _ := mailbox.NewActor("pinger", pingBox, func(m *mailbox.Message) mailbox.Action {
		n, _ := strconv.Atoi(string(m.Payload()))
		fmt.Println("pinger got", n)
		if n < 3 {
			if pongBox.Send(1, strconv.AppendInt(buf[:0], int64(n+1), 10)) == mailbox.ErrBackPressured {
				return mailbox.Abort // try again next cycle
			}
		}
		return mailbox.Continue
	})
	ponger, _ := mailbox.NewActor("ponger", pongBox, func(m *mailbox.Message) mailbox.Action {
		fmt.Println("ponger got", string(m.Payload()))
		if pingBox.Send(1, m.Payload()) == mailbox.ErrBackPressured {
			return mailbox.Abort
		}
		return mailbox.Continue
	})
	a, _ := agent.NewInvoker(pinger)
	b, _ := agent.NewInvoker(ponger)
	_ = a.Start()
	_ = b.Start()
	_ = pongBox.Send(1, []byte("1"))
	for range 5 {
		_, _ = b.Invoke()
		_, _ = a.Invoke()
	}
	_ = a.Close()
	_ = b.Close()
	fmt.Println(pingBox.Err(), "|", pongBox.Err())
	// Output:
	// ponger got 1
	// pinger got 1
	// ponger got 2
	// pinger got 2
	// ponger got 3
	// pinger got 3
	// mailbox: closed | mailbox: closed
}

// A multipart message arrives whole: all its parts, in order, in one
// handler call.
func ExampleMailbox_SendParts() {
	mb, _ := mailbox.New(mailbox.Config{})
	_ = mb.SendParts(3, []byte("topic"), []byte("key"), []byte("value"))
	_, _ = mb.Drain(func(m *mailbox.Message) mailbox.Action {
		for i := range m.NumParts() {
			fmt.Printf("part %d: %s\n", i, m.Part(i))
		}
		return mailbox.Continue
	}, 1)
	// Output:
	// part 0: topic
	// part 1: key
	// part 2: value
}

// The back-pressure idiom: a handler whose downstream is full returns
// Abort; the message stays in the mailbox and comes again next time.
func ExampleMailbox_Drain() {
	mb, _ := mailbox.New(mailbox.Config{})
	_ = mb.Send(1, []byte("order-1"))
	_ = mb.Send(1, []byte("order-2"))
	downstreamFree := 1
	h := func(m *mailbox.Message) mailbox.Action {
		if downstreamFree == 0 {
			return mailbox.Abort
		}
		downstreamFree--
		fmt.Println("forwarded", string(m.Payload()))
		return mailbox.Continue
	}
	n, _ := mb.Drain(h, 10)
	fmt.Println("drained", n)
	downstreamFree = 5
	n, _ = mb.Drain(h, 10)
	fmt.Println("drained", n)
	// Output:
	// forwarded order-1
	// drained 1
	// forwarded order-2
	// drained 1
}

// Close(Discard) refuses new sends and reports what it dropped.
func ExampleMailbox_Close() {
	mb, _ := mailbox.New(mailbox.Config{})
	_ = mb.Send(1, []byte("a"))
	_ = mb.Send(1, []byte("b"))
	n, err := mb.Close(mailbox.Discard)
	fmt.Println("discarded", n, err)
	fmt.Println(mb.Send(1, nil))
	fmt.Println("stats discarded", mb.Stats().Discarded)
	// Output:
	// discarded 2 <nil>
	// mailbox: closed
	// stats discarded 2
}

// An actor on its own thread that sleeps until a message arrives: the
// runner idles it with NewWakeIdle over its mailbox, and a send from any
// goroutine (or process) wakes it.
func ExampleNewWakeIdle() {
	mb, _ := mailbox.New(mailbox.Config{Name: "orders"})
	got := make(chan string, 1)
	actor, _ := mailbox.NewActor("orders", mb, func(m *mailbox.Message) mailbox.Action {
		got <- string(m.Payload())
		return mailbox.Continue
	})
	wake, _ := mailbox.NewWakeIdle(mailbox.WakeConfig{}, mb)
	r, _ := runner.New(actor, runner.WithIdle(wake))
	r.Start()
	defer r.Close()

	_ = mb.Send(1, []byte("buy 10"))
	fmt.Println(<-got)
	// Output: buy 10
}
