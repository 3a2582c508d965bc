package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/ipc/publication"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/ringbuf"
)

// W4T and W4L (docs/workloads.md): W1 and W3 through mailbox files, the
// receiver in a goroutine (inprocess) or a child process (crossprocess,
// ipc_process.go), against a Unix socket pair; and publication-2sub.

// deadlineEvery is how many messages a socket variant makes between two
// renewals of its connection deadline: the hang guard is "no progress for
// the repetition's timeout".
const deadlineEvery = 1 << 16

// mailboxDrain is the poller of a consumer that drains m (which this
// goroutine owns) into a checker, at most limit messages a call.
type mailboxDrain struct {
	m     *mailbox.Mailbox
	h     mailbox.Handler
	limit int
}

func drainInto(m *mailbox.Mailbox, c *checker, limit int) *mailboxDrain {
	return &mailboxDrain{m: m, h: c.handle, limit: limit}
}

func (d *mailboxDrain) DoWork() (int, error) { return d.m.Drain(d.h, d.limit) }

// mailboxRoundTrip is the pinger's round trip: send on out, then drain the
// echo from in into pc.
func mailboxRoundTrip(t *team, out, in *mailbox.Mailbox, pc *checker) func(p []byte) error {
	poll := drainInto(in, pc, 1)
	return func(p []byte) error {
		if err := t.retry(mailbox.ErrBackPressured, func() error { return out.Send(msgTypeID, p) }); err != nil {
			return err
		}
		return pollUntil(t, pc, pc.received+1, nil, poll)
	}
}

// mailboxEcho drains pings from in into c, sending each back on out, until
// c has seen n.
func mailboxEcho(t *team, in, out *mailbox.Mailbox, c *checker, n int) error {
	var werr error
	h := func(m *mailbox.Message) mailbox.Action {
		c.check(m.TypeID(), m.Payload())
		if err := t.retry(mailbox.ErrBackPressured, func() error { return out.Send(msgTypeID, m.Payload()) }); err != nil && werr == nil {
			werr = err
		}
		return mailbox.Continue
	}
	return pollUntil(t, c, n, nil, pollFunc(func() (int, error) {
		k, err := in.Drain(h, ringbuf.NoLimit)
		if werr != nil {
			return k, werr
		}
		return k, err
	}))
}

// inProcessMailboxes creates, in a fresh W4 directory, a mailbox file per
// name (own) and a second mapping of each, as another process would have
// (view); done closes them all and removes the directory.
func inProcessMailboxes(names ...string) (own, view []*mailbox.Mailbox, done func(), err error) {
	dir, cleanup, err := w4Dir()
	if err != nil {
		return nil, nil, nil, err
	}
	var files []*ipc.MailboxFile
	done = func() {
		for _, f := range files {
			f.Close()
		}
		cleanup()
	}
	for _, name := range names {
		o, of, err := createMailbox(dir, name)
		if err == nil {
			files = append(files, of)
			var v *mailbox.Mailbox
			var vf *ipc.MailboxFile
			if v, vf, err = openMailbox(of.Path()); err == nil {
				files, own, view = append(files, vf), append(own, o), append(view, v)
			}
		}
		if err != nil {
			done()
			return nil, nil, nil, err
		}
	}
	return own, view, done, nil
}

// mailboxFileStream is W4T's inprocess.
func mailboxFileStream(cfg *runConfig) (time.Duration, error) {
	own, view, done, err := inProcessMailboxes("w4t")
	if err != nil {
		return 0, err
	}
	defer done()
	t, c := newTeam(cfg.place), newChecker(1)
	return stream(cfg, t, c, func() error { return pollUntil(t, c, cfg.n, nil, drainInto(own[0], c, ringbuf.NoLimit)) },
		func() error {
			return produce(t, mailboxWriter{view[0]}, cfg.n, 0, cfg.corruptAt, mailbox.ErrBackPressured, nil)
		})
}

// mailboxFilePingPong is W4L's inprocess.
func mailboxFilePingPong(cfg *runConfig) (time.Duration, error) {
	own, view, done, err := inProcessMailboxes("ping", "pong")
	if err != nil {
		return 0, err
	}
	defer done()
	t, pc, c := newTeam(cfg.place), newChecker(1), newChecker(1)
	return roundTrips(cfg, t, pc, c, mailboxRoundTrip(t, view[0], own[1], pc),
		func() error { return mailboxEcho(t, own[0], view[1], c, cfg.n) })
}

// nEnv tells a child how many messages the parent sends.
func nEnv(cfg *runConfig) string { return "DUTYBENCH_W4_N=" + strconv.Itoa(cfg.n) }

// crossProcessStream is W4T's crossprocess: the child creates and drains
// the mailbox; the figure ends at its last message.
func crossProcessStream(cfg *runConfig) (time.Duration, error) {
	return using(w4Dir, func(dir string) (time.Duration, error) {
		path := filepath.Join(dir, "w4t")
		spec := childSpec{role: "w4t-mailbox", env: append(placementEnv(cfg.place, 1), "DUTYBENCH_W4_PATH="+path, nEnv(cfg))}
		return withChildren(cfg, cfg.place, true, []childSpec{spec}, func(t *team, begin func()) error {
			return openedMailbox(path, begin, func(m *mailbox.Mailbox) error {
				return produce(t, mailboxWriter{m}, cfg.n, 0, cfg.corruptAt, mailbox.ErrBackPressured, nil)
			})
		})
	})
}

func childMailboxConsumer() (func(*team, *checker, int) error, func(), error) {
	path := os.Getenv("DUTYBENCH_W4_PATH")
	m, f, err := createMailbox(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return nil, nil, err
	}
	return func(t *team, c *checker, k int) error {
		return pollUntil(t, c, k, nil, drainInto(m, c, ringbuf.NoLimit))
	}, func() { f.Close() }, nil
}

// crossProcessPingPong is W4L's crossprocess: the child creates and drains
// the ping mailbox and answers on this process's pong mailbox.
func crossProcessPingPong(cfg *runConfig) (time.Duration, error) {
	return using(w4Dir, func(dir string) (time.Duration, error) {
		pongOwn, pongFile, err := createMailbox(dir, "pong")
		if err != nil {
			return 0, err
		}
		defer pongFile.Close()
		pingPath := filepath.Join(dir, "ping")
		spec := childSpec{role: "w4l-mailbox", env: append(placementEnv(cfg.place, 1),
			"DUTYBENCH_W4_PING="+pingPath, "DUTYBENCH_W4_PONG="+pongFile.Path(), nEnv(cfg))}
		return withChildren(cfg, cfg.place, false, []childSpec{spec}, func(t *team, begin func()) error {
			return openedMailbox(pingPath, begin, func(pingView *mailbox.Mailbox) error {
				pc := newChecker(1)
				if err := pingLoop(cfg.n, cfg.corruptAt, cfg.lat[:cfg.n], mailboxRoundTrip(t, pingView, pongOwn, pc)); err != nil {
					return err
				}
				return pc.finish([]int{cfg.n})
			})
		})
	})
}

func childMailboxPonger() (func(*team, *checker, int) error, func(), error) {
	path := os.Getenv("DUTYBENCH_W4_PING")
	in, inFile, err := createMailbox(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return nil, nil, err
	}
	out, outFile, err := openMailbox(os.Getenv("DUTYBENCH_W4_PONG"))
	if err != nil {
		inFile.Close()
		return nil, nil, err
	}
	return func(t *team, c *checker, k int) error { return mailboxEcho(t, in, out, c, k) },
		func() { outFile.Close(); inFile.Close() }, nil
}

// withSocketChild runs a socket variant's repetition: a child in role gets
// one end of a socket pair, work the other.
func withSocketChild(cfg *runConfig, role string, childEnd bool, work func(conn net.Conn, begin func()) error) (time.Duration, error) {
	conn, theirs, err := socketPair()
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	spec := childSpec{role: role, env: append(placementEnv(placement{}, 1), nEnv(cfg)), files: []*os.File{theirs}}
	return withChildren(cfg, placement{}, childEnd, []childSpec{spec}, func(_ *team, begin func()) error { return work(conn, begin) })
}

func renewDeadline(conn net.Conn, i int, timeout time.Duration) error {
	if i%deadlineEvery != 0 {
		return nil
	}
	return conn.SetDeadline(time.Now().Add(timeout))
}

// socketStream is W4T's unixsocket: through 64 KiB bufio buffers (the
// ring's size) on both ends.
func socketStream(cfg *runConfig) (time.Duration, error) {
	return withSocketChild(cfg, "w4t-socket", true, func(conn net.Conn, begin func()) error {
		w := bufio.NewWriterSize(conn, ringCapacity)
		var p [payloadLen]byte
		putPayload(p[:], 0, 0)
		begin()
		for i := range cfg.n {
			if err := renewDeadline(conn, i, cfg.timeout); err != nil {
				return err
			}
			putSeq(&p, seqFor(i, cfg.corruptAt))
			if _, err := w.Write(p[:]); err != nil {
				return err
			}
		}
		return w.Flush()
	})
}

// childSocket is unixsocket's child: W4T's reads through a 64 KiB
// bufio.Reader, W4L's (echo) reads and writes back each message.
//
//go:noinline // a variant factory: see runFunc
func childSocket(echo bool) func() (func(*team, *checker, int) error, func(), error) {
	return func() (func(*team, *checker, int) error, func(), error) {
		conn, err := childConn()
		if err != nil {
			return nil, nil, err
		}
		var r io.Reader = conn
		if !echo {
			r = bufio.NewReaderSize(conn, ringCapacity)
		}
		return func(_ *team, c *checker, k int) error {
			var p [payloadLen]byte
			for range k {
				if _, err := io.ReadFull(r, p[:]); err != nil {
					return err
				}
				c.checkArray(&p)
				if echo {
					if _, err := conn.Write(p[:]); err != nil {
						return err
					}
				}
			}
			return nil
		}, func() { conn.Close() }, nil
	}
}

// socketPingPong is W4L's unixsocket: one write and one read per round
// trip.
func socketPingPong(cfg *runConfig) (time.Duration, error) {
	return withSocketChild(cfg, "w4l-socket", false, func(conn net.Conn, begin func()) error {
		pc := newChecker(1)
		var q [payloadLen]byte
		begin()
		err := pingLoop(cfg.n, cfg.corruptAt, cfg.lat[:cfg.n], func(p []byte) error {
			if err := renewDeadline(conn, pc.received, cfg.timeout); err != nil {
				return err
			}
			if _, err := conn.Write(p); err != nil {
				return err
			}
			if _, err := io.ReadFull(conn, q[:]); err != nil {
				return err
			}
			pc.checkArray(&q)
			return nil
		})
		if err != nil {
			return err
		}
		return pc.finish([]int{cfg.n})
	})
}

// publicationTwoSubscribers is W4T's publication-2sub: timed from the
// first offer to the later subscriber's last message. Three busy threads
// on two cores: every side yields when back-pressured or empty, and
// nothing is pinned.
func publicationTwoSubscribers(cfg *runConfig) (time.Duration, error) {
	return using(w4Dir, func(dir string) (time.Duration, error) {
		pub, err := publication.Create(dir, "w4t-pub", ringCapacity)
		if err != nil {
			return 0, err
		}
		defer pub.Close()
		spec := childSpec{role: "w4t-pubsub", env: []string{"DUTYBENCH_W4_PATH=" + filepath.Join(dir, "w4t-pub"), nEnv(cfg)}}
		return withChildren(cfg, placement{}, true, []childSpec{spec, spec}, func(t *team, begin func()) error {
			if got := pub.Stats().ActiveSubscribers; got != 2 {
				return fmt.Errorf("dutybench: %d subscribers joined, want 2", got)
			}
			wait := idle.Yielding()
			begin()
			return produce(t, &publicationWriter{pub: pub}, cfg.n, 0, cfg.corruptAt, publication.ErrBackPressured, func() { wait.Idle(0) })
		})
	})
}

// publicationWriter offers to a publication, an administrative refusal
// counted as back pressure, and heartbeats every 65,536 messages.
type publicationWriter struct {
	pub  *publication.Publication
	sent int
}

func (w *publicationWriter) Write(typeID int32, p []byte) error {
	_, err := w.pub.Offer(typeID, p)
	if err == publication.ErrAdminAction {
		return publication.ErrBackPressured
	}
	if err == nil {
		if w.sent&0xffff == 0 {
			_ = w.pub.Heartbeat(time.Now().UnixMilli())
		}
		w.sent++
	}
	return err
}

func childSubscriber() (func(*team, *checker, int) error, func(), error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sub, err := publication.OpenSubscription(ctx, os.Getenv("DUTYBENCH_W4_PATH"), publication.WithFileOptions(ipc.WithWaitForFile()))
	if err != nil {
		return nil, nil, err
	}
	return func(t *team, c *checker, k int) error {
		h := ringbuf.Handler(c.check)
		return pollUntil(t, c, k, idle.Yielding(), pollFunc(func() (int, error) { return sub.Poll(h, ringbuf.NoLimit) }))
	}, func() { sub.Close() }, nil
}
