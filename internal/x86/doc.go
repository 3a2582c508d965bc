// Package x86 reads the processor's identification (CPUID) for the packages
// that choose an instruction by what the CPU has: internal/prefetch
// (PREFETCHW) and internal/ticks (an invariant TSC). amd64 only.
package x86
