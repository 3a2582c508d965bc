package journal

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// processInfo asks /proc about pid, which kill(2) has just found: its
// start time (field 22 of /proc/<pid>/stat, clock ticks after boot: with
// the pid, an identity that a reused pid does not share), and whether it
// is gone (a zombie, or vanished since kill). Without procfs it cannot say
// (known false), and the caller trusts kill.
func processInfo(pid int) (start uint64, gone, known bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if _, perr := os.Stat("/proc/self/stat"); perr != nil {
			return 0, false, false // no procfs
		}
		return 0, true, true
	}
	st, state, err := parseProcStat(b)
	if err != nil {
		return 0, false, false
	}
	return st, state == 'Z' || state == 'X', true
}

// parseProcStat returns field 22 (starttime) and field 3 (state) of a
// /proc/<pid>/stat line. The command name (field 2) may hold spaces and
// parentheses, so fields are counted after its last ')'.
func parseProcStat(b []byte) (uint64, byte, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("journal: /proc stat: no command name")
	}
	fields := bytes.Fields(b[i+1:])
	const state, startTime = 0, 19 // field n is fields[n-3]
	if len(fields) <= startTime || len(fields[state]) != 1 {
		return 0, 0, fmt.Errorf("journal: /proc stat: %d fields", len(fields)+2)
	}
	st, err := strconv.ParseUint(string(fields[startTime]), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("journal: /proc stat: start time: %w", err)
	}
	return st, fields[state][0], nil
}

// pidNamespace returns the inode of this process's pid namespace (the
// link /proc/self/ns/pid reads "pid:[INODE]"), 0 if unknown. A pid means
// something only in its own namespace: slots of another namespace are
// never judged dead.
func pidNamespace() uint64 {
	s, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return 0
	}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "pid:["), "]")
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
