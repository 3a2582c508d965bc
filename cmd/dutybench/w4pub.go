package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ipc/publication"
	"github.com/dutyrt/duty/ringbuf"
)

// publication-2sub (W4T): one IPC publication (ipc/publication; a 64 KiB
// log, the standard ring size) written by this process and read by two subscriber processes; the
// figure is n messages over the time from the first offer to the later of
// the two subscribers' last message. Three busy threads on two cores, as in
// W2: the publisher and the subscribers yield the CPU (sched_yield, so the
// other processes run) when back-pressured or empty, and nothing is pinned.
func init() {
	w4t.variants = append(w4t.variants, variant{name: "publication-2sub", run: w4tPublication2Sub})
}

const pubSubscribers = 2

func w4tPublication2Sub(cfg *runConfig) (time.Duration, error) {
	dir, cleanup, err := w4Dir()
	if err != nil {
		return 0, err
	}
	defer cleanup()
	pub, err := publication.Create(dir, "w4t-pub", ringCapacity)
	if err != nil {
		return 0, err
	}
	defer pub.Close()
	path := filepath.Join(dir, "w4t-pub")
	children := make([]*w4proc, 0, pubSubscribers)
	defer func() {
		for _, c := range children {
			c.stop()
		}
	}()
	for range pubSubscribers {
		c, err := startW4Child("w4t-pubsub", []string{"DUTYBENCH_W4_PATH=" + path, "DUTYBENCH_W4_N=" + strconv.Itoa(cfg.n)})
		if err != nil {
			return 0, err
		}
		children = append(children, c)
	}
	for _, c := range children {
		if err := c.ready(time.Minute); err != nil {
			return 0, err
		}
	}
	if pub.Stats().ActiveSubscribers != pubSubscribers {
		return 0, fmt.Errorf("dutybench: %d subscribers joined, want %d", pub.Stats().ActiveSubscribers, pubSubscribers)
	}
	t := newTeam(placement{})
	stops := make([]func(), 0, len(children))
	for _, c := range children {
		stops = append(stops, watchChild(c, &t.abort))
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
	}()
	var start int64
	n, corruptAt := cfg.n, cfg.corruptAt
	t.spawn(0, func() error {
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		wait := idle.Yielding()
		start = monoNow()
		for i := range n {
			putSeq(&p, seqFor(i, corruptAt))
			for {
				_, err := pub.Offer(msgTypeID, p[:])
				if err == nil {
					break
				}
				if err != publication.ErrBackPressured && err != publication.ErrAdminAction {
					return err
				}
				if t.abort.Load() {
					return errAborted
				}
				wait.Idle(0)
			}
			if i&0xffff == 0 {
				_ = pub.Heartbeat(time.Now().UnixMilli())
			}
		}
		t.finish()
		return nil
	})
	_, perr := t.run(cfg.timeout)
	var end int64
	var cerrs []error
	for _, c := range children {
		e, err := c.result(resultTimeout(perr, cfg.timeout))
		cerrs = append(cerrs, err)
		end = max(end, e)
	}
	if err := joinChild(perr, errors.Join(cerrs...)); err != nil {
		return 0, err
	}
	return time.Duration(end - start), nil
}

// w4tChildPubSub is a subscriber of publication-2sub: it joins, says
// ready, polls and checks n messages, and reports the monotonic time of the
// last one.
func w4tChildPubSub() error {
	n, err := envN("DUTYBENCH_W4_N")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub, err := publication.OpenSubscription(ctx, os.Getenv("DUTYBENCH_W4_PATH"), publication.WithFileOptions(ipc.WithWaitForFile()))
	if err != nil {
		return err
	}
	defer sub.Close()
	c := newChecker(1)
	h := ringbuf.Handler(c.check)
	wait := idle.Yielding()
	fmt.Println("ready")
	k := childCount(n)
	for c.received < k {
		got, err := sub.Poll(h, ringbuf.NoLimit)
		if err != nil {
			return err
		}
		wait.Idle(got)
	}
	end := monoNow()
	exitEarly(k, n)
	if err := c.finish([]int{n}); err != nil {
		return err
	}
	fmt.Printf("done %d\n", end)
	return nil
}
