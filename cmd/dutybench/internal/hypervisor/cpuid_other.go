//go:build !amd64

package hypervisor

// cpuidVendor knows nothing without CPUID.
func cpuidVendor() (string, bool) { return "", false }
