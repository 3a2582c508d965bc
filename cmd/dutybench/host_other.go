//go:build !amd64

package main

// cpuidHypervisor knows nothing without CPUID.
func cpuidHypervisor() (string, bool) { return "", false }
