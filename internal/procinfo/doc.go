// Package procinfo asks the operating system about a process by pid: its
// start time, which with the pid identifies it (a pid the kernel reuses
// for another process comes with another start time), and whether it has
// exited without being reaped. Packages that record an owner's pid in a
// shared file (ipc's files, the journal's reader registry) use it to tell
// a dead owner from a live one.
//
// Running is the whole check: kill(pid, 0), then Info to refine it (a
// zombie, or another start time, is not the recorded process). It never
// reports a live process dead without evidence: where Info cannot ask (no
// procfs, a refused sysctl, an unsupported platform: known false), kill's
// answer stands.
//
// Start times are in the platform's own units (clock ticks after boot on
// Linux, microseconds since the Unix epoch on Darwin): compare them only
// with values Info gave on the same host.
package procinfo
