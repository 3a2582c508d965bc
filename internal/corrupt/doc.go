// Package corrupt is the one corruption marker of duty's packages: every
// package's corruption sentinel (ringbuf.ErrCorrupt, ipc.ErrCorrupt, ...)
// is made by New, so that errors.Is(err, duty.ErrCorrupt) answers "was
// this corruption?" whatever package reported it, while errors.Is(err,
// ringbuf.ErrCorrupt) keeps answering the narrower question.
package corrupt
