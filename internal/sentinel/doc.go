// Package sentinel holds the roots that duty's packages' sentinels match:
// every package's corruption sentinel (ringbuf.ErrCorrupt, ipc.ErrCorrupt,
// ...) is made by Corrupt and every package's closed sentinel
// (mailbox.ErrClosed, zmtp.ErrClosed, ...) by Closed, so that
// errors.Is(err, duty.ErrCorrupt) answers "was this corruption?" and
// errors.Is(err, duty.ErrClosed) "was it closed?" whatever package
// reported it, while errors.Is(err, ringbuf.ErrCorrupt) keeps answering
// the narrower question.
package sentinel
