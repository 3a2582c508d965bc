//go:build !linux && !darwin

package procinfo

// Info cannot ask the process table on this platform (known false): the
// caller trusts kill(2) alone, so a reused pid passes for its dead
// predecessor (the conservative error: what it owned is kept).
func Info(pid int) (start uint64, gone, known bool) { return 0, false, false }

// PidNamespace is unknown (0) on this platform.
func PidNamespace() uint64 { return 0 }
