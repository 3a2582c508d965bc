package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// W4T: one producer, one consumer, throughput, the consumer in a second
// process (crossprocess; the parent's producer runs in slot 0, the child's
// consumer is locked and pinned as slot 1 would be), or in a goroutine of
// this process over the same kind of shared-file mailbox (inprocess), or
// behind a Unix domain socket (unixsocket, the baseline).

// deadlineEvery is how many messages (or round trips) a socket variant
// makes between two renewals of its connection deadline: the hang guard is
// "no progress for the repetition's timeout", since a loaded machine can
// make a million socket round trips take longer than any fixed bound.
const deadlineEvery = 1 << 16

// socketBuffer is the bufio size on both ends of the socket baseline: the
// ring's 64 KiB.
const socketBuffer = ringCapacity

// produceMailbox sends n messages as producer 0 to m, spinning while full.
func produceMailbox(m *mailbox.Mailbox, n, corruptAt int, abort *atomic.Bool) error {
	var p [payloadLen]byte
	putPayload(p[:], 0, 0)
	for i := range n {
		putSeq(&p, seqFor(i, corruptAt))
		if err := sendSpin(m, p[:], abort); err != nil {
			return err
		}
	}
	return nil
}

// checkingHandler returns a mailbox handler feeding c.
func checkingHandler(c *checker) mailbox.Handler {
	return func(m *mailbox.Message) mailbox.Action {
		c.check(m.TypeID(), m.Payload())
		return mailbox.Continue
	}
}

// drainChecked drains m into c until it has seen n messages.
func drainChecked(m *mailbox.Mailbox, c *checker, n int, abort *atomic.Bool) error {
	h := checkingHandler(c)
	for c.received < n {
		k, err := m.Drain(h, ringbuf.NoLimit)
		if err != nil {
			return err
		}
		if k == 0 && abort != nil && abort.Load() {
			return errAborted
		}
	}
	return nil
}

func w4tInProcess(cfg *runConfig) (time.Duration, error) {
	dir, cleanup, err := w4Dir()
	if err != nil {
		return 0, err
	}
	defer cleanup()
	own, ownFile, err := createMailbox(dir, "w4t")
	if err != nil {
		return 0, err
	}
	defer ownFile.Close()
	view, viewFile, err := openMailbox(ownFile.File.Path()) // the producer's own mapping, as another process has
	if err != nil {
		return 0, err
	}
	defer viewFile.Close()
	t := newTeam(cfg.place)
	c := newChecker(1)
	n, corruptAt := cfg.n, cfg.corruptAt
	t.spawn(0, func() error { return produceMailbox(view, n, corruptAt, &t.abort) })
	t.spawn(1, func() error {
		if err := drainChecked(own, c, n, &t.abort); err != nil {
			return err
		}
		t.finish()
		return c.finish([]int{n})
	})
	return t.run(cfg.timeout)
}

func w4tCrossProcess(cfg *runConfig) (time.Duration, error) {
	dir, cleanup, err := w4Dir()
	if err != nil {
		return 0, err
	}
	defer cleanup()
	path := filepath.Join(dir, "w4t")
	child, err := startW4Child("w4t-mailbox", append(childEnv(cfg.place, 1),
		"DUTYBENCH_W4_PATH="+path, "DUTYBENCH_W4_N="+strconv.Itoa(cfg.n)))
	if err != nil {
		return 0, err
	}
	defer child.stop()
	if err := child.ready(time.Minute); err != nil {
		return 0, err
	}
	m, f, err := openMailbox(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	t := newTeam(cfg.place)
	watch := watchChild(child, &t.abort)
	defer watch()
	var start int64
	n, corruptAt := cfg.n, cfg.corruptAt
	t.spawn(0, func() error {
		start = monoNow()
		err := produceMailbox(m, n, corruptAt, &t.abort)
		t.finish() // the end that counts is the child's
		return err
	})
	_, perr := t.run(cfg.timeout)
	end, cerr := child.result(resultTimeout(perr, cfg.timeout))
	if err := joinChild(perr, cerr); err != nil {
		return 0, err
	}
	return time.Duration(end - start), nil
}

// watchChild sets abort when the child exits before the returned stop
// function is called, so that a producer spinning on a full ring gives up.
func watchChild(child *w4proc, abort *atomic.Bool) (stop func()) {
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		select {
		case <-child.exited:
			abort.Store(true)
		case <-done:
		}
	}()
	return func() { close(done); <-ended }
}

// resultTimeout is how long to wait for the child's result: the
// repetition's hang guard, or a moment when this side already failed.
func resultTimeout(parentErr error, timeout time.Duration) time.Duration {
	if parentErr != nil {
		return time.Second
	}
	return timeout
}

// w4tChildMailbox is the consumer of crossprocess: it creates the mailbox
// (its owner drains), says ready, drains and checks n messages, and
// reports the monotonic time of the last one.
func w4tChildMailbox() error {
	n, err := envN("DUTYBENCH_W4_N")
	if err != nil {
		return err
	}
	path := os.Getenv("DUTYBENCH_W4_PATH")
	m, f, err := createMailbox(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return err
	}
	defer f.Close()
	c := newChecker(1)
	fmt.Println("ready")
	k := childCount(n)
	if err := drainChecked(m, c, k, nil); err != nil {
		return err
	}
	end := monoNow()
	exitEarly(k, n)
	if err := c.finish([]int{n}); err != nil {
		return err
	}
	fmt.Printf("done %d\n", end)
	return nil
}

func w4tSocket(cfg *runConfig) (time.Duration, error) {
	conn, theirs, err := socketPair()
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	child, err := startW4Child("w4t-socket", append(childEnv(placement{}, 1), "DUTYBENCH_W4_N="+strconv.Itoa(cfg.n)), theirs)
	_ = theirs.Close() // the child has its copy
	if err != nil {
		return 0, err
	}
	defer child.stop()
	if err := child.ready(time.Minute); err != nil {
		return 0, err
	}
	w := bufio.NewWriterSize(conn, socketBuffer)
	var p [payloadLen]byte
	putPayload(p[:], 0, 0)
	time.Sleep(20 * time.Millisecond)
	start := monoNow()
	perr := func() error {
		for i := range cfg.n {
			if i%deadlineEvery == 0 {
				if err := conn.SetDeadline(time.Now().Add(cfg.timeout)); err != nil {
					return err
				}
			}
			putSeq(&p, seqFor(i, cfg.corruptAt))
			if _, err := w.Write(p[:]); err != nil {
				return err
			}
		}
		return w.Flush()
	}()
	end, cerr := child.result(resultTimeout(perr, cfg.timeout))
	if err := joinChild(perr, cerr); err != nil {
		return 0, err
	}
	return time.Duration(end - start), nil
}

// w4tChildSocket reads and checks n 32-byte messages through a 64 KiB
// bufio.Reader.
func w4tChildSocket() error {
	n, err := envN("DUTYBENCH_W4_N")
	if err != nil {
		return err
	}
	conn, err := childConn()
	if err != nil {
		return err
	}
	defer conn.Close()
	r := bufio.NewReaderSize(conn, socketBuffer)
	c := newChecker(1)
	var p [payloadLen]byte
	fmt.Println("ready")
	k := childCount(n)
	for range k {
		if _, err := io.ReadFull(r, p[:]); err != nil {
			return err
		}
		c.checkArray(&p)
	}
	end := monoNow()
	exitEarly(k, n)
	if err := c.finish([]int{n}); err != nil {
		return err
	}
	fmt.Printf("done %d\n", end)
	return nil
}
