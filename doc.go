// Package duty is the root of a runtime for low-latency, actor-style
// messaging between agents: in one process, across processes on one host
// through shared memory, and beyond. It holds what every package shares:
// the roots of the corruption and closed errors. The parts live in the packages below it:
//
//   - agent, runner, idle: agents (OnStart, DoWork, OnClose), the runner
//     that drives one on a locked OS thread, and the idle strategies it
//     uses between duty cycles.
//   - ringbuf, broadcast: Agrona-layout ring buffers (one-to-one,
//     many-to-one) and a broadcast buffer, over any byte slice.
//   - mailbox: an agent's bounded many-to-one mailbox, on the heap or in a
//     file shared with other processes; multipart and fragmented
//     messages; the Actor that drains one from its duty cycle.
//   - message: typed messages (fixed-layout structs sent as their own
//     bytes), a router of typed handlers, reply addresses, request/reply.
//   - dutyfx: go.uber.org/fx modules for runner groups, mailboxes and
//     shared files.
//   - journal: a durable, segmented, memory-mapped log with tailers,
//     recovery and record/replay agents.
//   - natsbridge: mailboxes bridged between hosts through NATS, core or
//     JetStream.
//   - zmtp: ZeroMQ's wire protocol (ZMTP 3.1): PUSH/PULL and PUB/SUB
//     sockets over TCP or Unix sockets, bridged to mailboxes, that talk to
//     libzmq and its bindings.
//   - ipc: shared-memory files (create, open, own, remove, liveness,
//     cleanup), mailboxes in them, counters, error logs and latency
//     histograms (counters, errlog, histogram);
//     ipc/publication: an Aeron-style IPC publication and its
//     subscriptions.
//
// docs/architecture.md explains how they fit together.
package duty

import "github.com/dutyrt/duty/internal/sentinel"

// ErrCorrupt matches every error, from any duty package, that reports
// memory or data no correct peer writes: a record running past the end of
// a ring, a frame header that does not match its message, a file header
// whose fields contradict each other. Each package keeps its own sentinel
// (ringbuf.ErrCorrupt, ipc.ErrCorrupt, ...) for the narrower question;
// errors.Is(err, duty.ErrCorrupt) asks whether it was corruption at all.
var ErrCorrupt = sentinel.ErrCorrupt

// ErrClosed matches every error, from any duty package, that reports a
// use of something closed: a mailbox, a file, a socket, a journal, a
// runner. Each package keeps its own sentinel (mailbox.ErrClosed,
// zmtp.ErrClosed, ...) for the narrower question; errors.Is(err,
// duty.ErrClosed) asks whether it was closed at all.
var ErrClosed = sentinel.ErrClosed
