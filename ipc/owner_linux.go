package ipc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// processInfo asks /proc about pid, which kill(2) has just found. start is
// field 22 of /proc/<pid>/stat (clock ticks after boot); gone reports a
// zombie, or a process that vanished since kill. Without procfs mounted it
// cannot say (known false), and processRunning trusts kill.
func processInfo(pid int) (start uint64, gone, known bool) {
	st, state, err := procStat(pid)
	if err != nil {
		// No /proc entry although kill succeeded: no procfs, or the process
		// vanished in between. Trust kill only when /proc is absent.
		if _, perr := os.Stat("/proc/self/stat"); perr != nil {
			return 0, false, false
		}
		return 0, true, true
	}
	return st, state == 'Z' || state == 'X', true
}

// procStat returns field 22 (starttime, clock ticks after boot) and field 3
// (state) of /proc/<pid>/stat. The command name (field 2) may hold spaces
// and parentheses, so fields are counted after its last ')'.
func procStat(pid int) (uint64, byte, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("ipc: /proc/%d/stat: no command name", pid)
	}
	fields := bytes.Fields(b[i+1:])
	// Field n of the file is fields[n-3]: fields start at field 3.
	const state, startTime = 0, 19
	if len(fields) <= startTime || len(fields[state]) != 1 {
		return 0, 0, fmt.Errorf("ipc: /proc/%d/stat: %d fields", pid, len(fields)+2)
	}
	st, err := strconv.ParseUint(string(fields[startTime]), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("ipc: /proc/%d/stat: start time: %w", pid, err)
	}
	return st, fields[state][0], nil
}
