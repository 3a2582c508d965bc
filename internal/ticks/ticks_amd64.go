package ticks

import (
	"os"
	"strings"

	"github.com/dutyrt/duty/internal/x86"
)

// useTSC: the TSC is invariant (CPUID 0x80000007, EDX bit 8: it ticks at a
// constant rate in every power state) and the kernel keeps time with it
// (it checks at boot that the CPUs' counters agree, and switches away from
// the TSC if they drift), and it advances.
var useTSC = detect()

func detect() bool {
	if x86.MaxExtendedLeaf() < 0x80000007 {
		return false
	}
	if _, _, _, edx := x86.CPUID(0x80000007, 0); edx&(1<<8) == 0 {
		return false
	}
	b, err := os.ReadFile("/sys/devices/system/clocksource/clocksource0/current_clocksource")
	if err != nil || strings.TrimSpace(string(b)) != "tsc" {
		return false
	}
	a := rdtsc()
	return rdtsc() > a
}

// rdtsc is RDTSC. Assembly takes its result on the stack (ABI0): one
// store and load per call, negligible beside RDTSC's own latency.
func rdtsc() int64
