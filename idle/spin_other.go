//go:build !amd64

package idle

// spinHint is a portable no-op: there is no spin-wait hint outside amd64
// here. The call still keeps a spin loop preemptible.
func spinHint() {}
