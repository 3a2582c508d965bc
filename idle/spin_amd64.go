//go:build amd64

package idle

// spinHint executes one x86 PAUSE instruction: the CPU spin-wait hint
// (Java's Thread.onSpinWait). It tells the core that this is a spin loop, so
// it saves power, yields pipeline resources to a hyper-thread sibling and
// avoids the memory-order mis-speculation penalty when the loop exits.
//
//go:noescape
func spinHint()
