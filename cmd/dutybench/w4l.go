package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// W4L: round trip (ping, pong) between two processes: over two shared-file
// mailboxes (each owned, and drained, by its receiver) with the ponger in
// a second process (crossprocess) or in a goroutine (inprocess), or over a
// Unix domain socket pair (unixsocket, the baseline). The pinger measures,
// as in W3, the time between successive pongs.

// ping runs the pinger over mailboxes: send on out, drain the pong from
// in (which this goroutine owns), n times.
func ping(out, in *mailbox.Mailbox, lat []int64, n, corruptAt int, abort *atomic.Bool) error {
	pc := newChecker(1)
	h := checkingHandler(pc)
	var p [payloadLen]byte
	putPayload(p[:], 0, 0)
	clk := newClock()
	last := clk.now()
	for i := range n {
		putSeq(&p, seqFor(i, corruptAt))
		if err := sendSpin(out, p[:], abort); err != nil {
			return err
		}
		for pc.received == i {
			k, err := in.Drain(h, 1)
			if err != nil {
				return err
			}
			if k == 0 && abort.Load() {
				return errAborted
			}
		}
		now := clk.now()
		lat[i] = now - last
		last = now
	}
	return pc.finish([]int{n})
}

// pong runs the ponger: drain pings from in (owned by this goroutine),
// check each, and send it back on out, n times.
func pong(in, out *mailbox.Mailbox, n int, abort *atomic.Bool) error {
	c := newChecker(1)
	var werr error
	h := func(m *mailbox.Message) mailbox.Action {
		c.check(m.TypeID(), m.Payload())
		if err := sendSpin(out, m.Payload(), abort); err != nil && werr == nil {
			werr = err
		}
		return mailbox.Continue
	}
	for c.received < n {
		k, err := in.Drain(h, ringbuf.NoLimit)
		if err != nil {
			return err
		}
		if werr != nil {
			return werr
		}
		if k == 0 && abort.Load() {
			return errAborted
		}
	}
	return c.finish([]int{n})
}

func w4lInProcess(cfg *runConfig) (time.Duration, error) {
	dir, cleanup, err := w4Dir()
	if err != nil {
		return 0, err
	}
	defer cleanup()
	var closers []func() error
	defer func() {
		for _, c := range closers {
			_ = c()
		}
	}()
	mb := func(create bool, path string) (*mailbox.Mailbox, error) {
		var m *mailbox.Mailbox
		var f *ipc.MailboxFile
		var err error
		if create {
			m, f, err = createMailbox(dir, path)
		} else {
			m, f, err = openMailbox(filepath.Join(dir, path))
		}
		if err == nil {
			closers = append(closers, f.Close)
		}
		return m, err
	}
	pingOwn, err := mb(true, "ping")
	if err != nil {
		return 0, err
	}
	pongOwn, err := mb(true, "pong")
	if err != nil {
		return 0, err
	}
	pingView, err := mb(false, "ping")
	if err != nil {
		return 0, err
	}
	pongView, err := mb(false, "pong")
	if err != nil {
		return 0, err
	}
	t := newTeam(cfg.place)
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	t.spawn(0, func() error {
		err := ping(pingView, pongOwn, lat, n, corruptAt, &t.abort)
		t.finish()
		return err
	})
	t.spawn(1, func() error { return pong(pingOwn, pongView, n, &t.abort) })
	return t.run(cfg.timeout)
}

func w4lCrossProcess(cfg *runConfig) (time.Duration, error) {
	dir, cleanup, err := w4Dir()
	if err != nil {
		return 0, err
	}
	defer cleanup()
	pongOwn, pongFile, err := createMailbox(dir, "pong")
	if err != nil {
		return 0, err
	}
	defer pongFile.Close()
	pingPath := filepath.Join(dir, "ping")
	child, err := startW4Child("w4l-mailbox", append(childEnv(cfg.place, 1),
		"DUTYBENCH_W4_PING="+pingPath, "DUTYBENCH_W4_PONG="+pongFile.File.Path(), "DUTYBENCH_W4_N="+strconv.Itoa(cfg.n)))
	if err != nil {
		return 0, err
	}
	defer child.stop()
	if err := child.ready(time.Minute); err != nil {
		return 0, err
	}
	pingView, pingFile, err := openMailbox(pingPath)
	if err != nil {
		return 0, err
	}
	defer pingFile.Close()
	t := newTeam(cfg.place)
	watch := watchChild(child, &t.abort)
	defer watch()
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	t.spawn(0, func() error {
		err := ping(pingView, pongOwn, lat, n, corruptAt, &t.abort)
		t.finish()
		return err
	})
	elapsed, perr := t.run(cfg.timeout)
	_, cerr := child.result(resultTimeout(perr, cfg.timeout))
	if err := joinChild(perr, cerr); err != nil {
		return 0, err
	}
	return elapsed, nil
}

// w4lChildMailbox is the ponger of crossprocess: it creates (and drains)
// the ping mailbox and answers on the parent's pong mailbox.
func w4lChildMailbox() error {
	n, err := envN("DUTYBENCH_W4_N")
	if err != nil {
		return err
	}
	path := os.Getenv("DUTYBENCH_W4_PING")
	in, inFile, err := createMailbox(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return err
	}
	defer inFile.Close()
	out, outFile, err := openMailbox(os.Getenv("DUTYBENCH_W4_PONG"))
	if err != nil {
		return err
	}
	defer outFile.Close()
	fmt.Println("ready")
	var never atomic.Bool // the parent ends this process by closing its stdin
	k := childCount(n)
	if err := pong(in, out, k, &never); err != nil {
		return err
	}
	exitEarly(k, n)
	fmt.Printf("done %d\n", monoNow())
	return nil
}

func w4lSocket(cfg *runConfig) (time.Duration, error) {
	conn, theirs, err := socketPair()
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	child, err := startW4Child("w4l-socket", append(childEnv(placement{}, 1), "DUTYBENCH_W4_N="+strconv.Itoa(cfg.n)), theirs)
	_ = theirs.Close()
	if err != nil {
		return 0, err
	}
	defer child.stop()
	if err := child.ready(time.Minute); err != nil {
		return 0, err
	}
	n, corruptAt, lat := cfg.n, cfg.corruptAt, cfg.lat[:cfg.n]
	pc := newChecker(1)
	var p, q [payloadLen]byte
	putPayload(p[:], 0, 0)
	time.Sleep(20 * time.Millisecond)
	start := time.Now()
	perr := func() error {
		clk := newClock()
		last := clk.now()
		for i := range n {
			if i%deadlineEvery == 0 {
				if err := conn.SetDeadline(time.Now().Add(cfg.timeout)); err != nil {
					return err
				}
			}
			putSeq(&p, seqFor(i, corruptAt))
			if _, err := conn.Write(p[:]); err != nil {
				return err
			}
			if _, err := io.ReadFull(conn, q[:]); err != nil {
				return err
			}
			pc.checkArray(&q)
			now := clk.now()
			lat[i] = now - last
			last = now
		}
		return pc.finish([]int{n})
	}()
	elapsed := time.Since(start)
	_, cerr := child.result(resultTimeout(perr, cfg.timeout))
	if err := joinChild(perr, cerr); err != nil {
		return 0, err
	}
	return elapsed, nil
}

// w4lChildSocket echoes n 32-byte messages, checking each.
func w4lChildSocket() error {
	n, err := envN("DUTYBENCH_W4_N")
	if err != nil {
		return err
	}
	conn, err := childConn()
	if err != nil {
		return err
	}
	defer conn.Close()
	c := newChecker(1)
	var p [payloadLen]byte
	fmt.Println("ready")
	k := childCount(n)
	for range k {
		if _, err := io.ReadFull(conn, p[:]); err != nil {
			return err
		}
		c.checkArray(&p)
		if _, err := conn.Write(p[:]); err != nil {
			return err
		}
	}
	exitEarly(k, n)
	if err := c.finish([]int{n}); err != nil {
		return err
	}
	fmt.Printf("done %d\n", monoNow())
	return nil
}
