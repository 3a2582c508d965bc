package procinfo

import "golang.org/x/sys/unix"

// sZomb is p_stat of a process that has exited and not been reaped
// (SZOMB in <sys/proc.h>; x/sys/unix does not define it).
const sZomb = 5

// Info asks the kernel's process table (sysctl kern.proc.pid) about pid,
// which kill(2) has just found. start is the process's start time
// (kinfo_proc's p_starttime, set at fork, as microseconds since the Unix
// epoch); gone reports a zombie. When the sysctl fails (the process
// vanished since kill, or the call is refused, as in some sandboxes) it
// cannot say (known false).
func Info(pid int) (start uint64, gone, known bool) {
	kp, err := unix.SysctlKinfoProc("kern.proc.pid", pid)
	if err != nil || kp.Proc.P_pid != int32(pid) {
		return 0, false, false
	}
	t := kp.Proc.P_starttime
	return uint64(t.Sec)*1_000_000 + uint64(t.Usec), kp.Proc.P_stat == sZomb, true
}

// PidNamespace is 0 (unknown): Darwin has no pid namespaces.
func PidNamespace() uint64 { return 0 }
