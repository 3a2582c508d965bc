// Package procs sets GOMAXPROCS from the container's CPU quota for duty's
// commands and examples (go.uber.org/automaxprocs), reporting the decision
// through log/slog at debug level instead of printing it on stderr as the
// package's blank import does.
package procs
