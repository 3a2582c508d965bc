package main

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"

	"github.com/dutyrt/duty/internal/prefetch"
)

// Host describes the machine of a run: figures from different CPUs, or
// from a guest and bare metal, are not comparable.
type Host struct {
	CPU        string `json:"cpu"`        // /proc/cpuinfo's first "model name", or GOARCH
	Vendor     string `json:"vendor"`     // /proc/cpuinfo's "vendor_id" (or "CPU implementer"), or ""
	CPUs       int    `json:"cpus"`       // runtime.NumCPU: the vCPUs this process may use
	Hypervisor string `json:"hypervisor"` // hypervisorName
	PrefetchW  bool   `json:"prefetchw"`  // the rings' write prefetch is PREFETCHW
	CLDemote   bool   `json:"cldemote"`   // the many-to-one consumer's demotion does something
}

func thisHost() Host {
	h := Host{CPU: runtime.GOARCH, CPUs: runtime.NumCPU(), PrefetchW: prefetch.CanPrefetchWrite(), CLDemote: prefetch.CanDemote()}
	guest := false
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		info := cpuInfo(f)
		f.Close()
		h.CPU, h.Vendor = cmp.Or(info["model name"], h.CPU), cmp.Or(info["vendor_id"], info["CPU implementer"])
		guest = strings.Contains(" "+info["flags"]+" ", " hypervisor ")
	}
	h.Hypervisor = hypervisorName(guest)
	return h
}

// cpuInfo returns the keys and values of the first processor's block of a
// /proc/cpuinfo.
func cpuInfo(r io.Reader) map[string]string {
	out := map[string]string{}
	s := bufio.NewScanner(r)
	for s.Scan() {
		key, value, ok := strings.Cut(s.Text(), ":")
		key = strings.TrimSpace(key)
		if !ok {
			if len(out) > 0 {
				break // the end of the first block
			}
			continue
		}
		if _, seen := out[key]; !seen {
			out[key] = strings.TrimSpace(value)
		}
	}
	return out
}

func (h Host) String() string {
	feature := func(name string, on bool) string {
		if on {
			return name
		}
		return "no " + name
	}
	return fmt.Sprintf("%s (%s, %d vCPUs, hypervisor %s; %s, %s)", h.CPU, h.Vendor, h.CPUs, h.Hypervisor,
		feature("PREFETCHW", h.PrefetchW), feature("CLDEMOTE", h.CLDemote))
}

// hypervisorName returns the hypervisor's CPUID vendor ("KVMKVMKVM", ...),
// "unknown" for a guest (CPUID's or /proc/cpuinfo's word) whose hypervisor
// does not say, "none" on bare metal.
func hypervisorName(guest bool) string {
	v, ok := cpuidHypervisor()
	switch {
	case ok && v != "":
		return v
	case ok || guest:
		return "unknown"
	}
	return "none"
}
