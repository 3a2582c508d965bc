// Package nanosleep sleeps the calling OS thread for a short period
// without telling the Go runtime: on Linux a raw nanosleep(2), during
// which the thread keeps its P, as a spinning goroutine keeps it.
//
// It is for pauses of tens of microseconds on a thread that would
// otherwise spin (an idle strategy's first parks, a wait for a claim
// being filled). Told of a system call that long, the runtime's monitor
// takes the P back, starts another thread to look for work and keeps
// waking itself at its shortest interval, and the sleeper must win a P
// back when it wakes; time.Sleep on a locked thread costs about a
// millisecond whatever the period (docs/idle.md). A stop-the-world or a
// preemption request waits for at most one sleep: its signal ends the
// nanosleep early (EINTR). Elsewhere Sleep is time.Sleep.
package nanosleep
