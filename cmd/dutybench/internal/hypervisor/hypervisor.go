// Package hypervisor names the hypervisor a program runs under, for
// dutybench's description of its host. It is a package of its own because
// it needs Go assembly (CPUID), which dutybench's cgo build (-tags cring)
// cannot hold.
package hypervisor

// Vendor returns the hypervisor's CPUID vendor string (leaf 0x40000000:
// "KVMKVMKVM", "Microsoft Hv", ...) when CPUID leaf 1 says the CPU is a
// guest's, "unknown" for a guest whose hypervisor does not say (or where
// there is no CPUID: guest is the caller's word on it, from
// /proc/cpuinfo's flags), and "none" on bare metal.
func Vendor(guest bool) string {
	v, ok := cpuidVendor()
	switch {
	case ok && v != "":
		return v
	case ok || guest:
		return "unknown"
	}
	return "none"
}
