package main

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/dutyrt/duty/internal/prefetch"
)

// thisHost describes the machine dutybench runs on.
func thisHost() Host {
	cpu := runtime.GOARCH
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		if m := modelName(f); m != "" {
			cpu = m
		}
		f.Close()
	}
	return Host{CPU: cpu, CPUs: runtime.NumCPU(), PrefetchW: prefetch.CanPrefetchWrite(), CLDemote: prefetch.CanDemote()}
}

// modelName returns the value of the first "model name" line of a
// /proc/cpuinfo, or "" if there is none.
func modelName(r io.Reader) string {
	s := bufio.NewScanner(r)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}
