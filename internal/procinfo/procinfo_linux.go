package procinfo

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Info asks /proc about pid, which kill(2) has just found. start is field
// 22 of /proc/<pid>/stat (clock ticks after boot); gone reports a zombie,
// or a process that vanished since kill. Without procfs mounted it cannot
// say (known false).
func Info(pid int) (start uint64, gone, known bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		// No /proc entry although kill succeeded: no procfs, or the process
		// vanished in between. Trust kill only when /proc is absent.
		if _, perr := os.Stat("/proc/self/stat"); perr != nil {
			return 0, false, false
		}
		return 0, true, true
	}
	st, state, err := ParseStat(b)
	if err != nil {
		return 0, false, false
	}
	return st, state == 'Z' || state == 'X', true
}

// ParseStat returns field 22 (starttime, clock ticks after boot) and field
// 3 (state) of a /proc/<pid>/stat line. The command name (field 2) may
// hold spaces and parentheses, so fields are counted after its last ')'.
func ParseStat(b []byte) (start uint64, state byte, err error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, fmt.Errorf("procinfo: /proc stat: no command name")
	}
	fields := bytes.Fields(b[i+1:])
	// Field n of the line is fields[n-3]: fields start at field 3.
	const stateField, startField = 0, 19
	if len(fields) <= startField || len(fields[stateField]) != 1 {
		return 0, 0, fmt.Errorf("procinfo: /proc stat: %d fields", len(fields)+2)
	}
	st, err := strconv.ParseUint(string(fields[startField]), 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("procinfo: /proc stat: start time: %w", err)
	}
	return st, fields[stateField][0], nil
}

// PidNamespace returns the inode of this process's pid namespace (the
// link /proc/self/ns/pid reads "pid:[INODE]"), 0 if unknown. A pid means
// something only in its own namespace.
func PidNamespace() uint64 {
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
