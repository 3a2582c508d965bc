package x86

// CPUID executes CPUID with leaf eax and subleaf ecx and returns EAX, EBX,
// ECX and EDX.
func CPUID(eax, ecx uint32) (a, b, c, d uint32)

// MaxExtendedLeaf returns the highest extended leaf (0x80000000 and up)
// CPUID answers.
func MaxExtendedLeaf() uint32 {
	a, _, _, _ := CPUID(0x80000000, 0)
	return a
}
