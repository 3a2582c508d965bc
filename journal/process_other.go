//go:build unix && !linux

package journal

// processInfo cannot ask the process table on this platform: a reader's
// start identity is unknown (0 in its slot) and liveness rests on kill(2)
// alone, so a dead reader whose pid was reused keeps its slot (the
// conservative error: its segments are kept, short of the hard limit)
// until that process ends too.
func processInfo(pid int) (start uint64, gone, known bool) { return 0, false, false }

// pidNamespace is unknown (0) on this platform.
func pidNamespace() uint64 { return 0 }
