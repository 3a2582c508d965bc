// Package mmapfile is duty's one layer over memory-mapped files, for ipc's
// shared files and the journal's segments alike: mapping and unmapping,
// preallocation that never leaves a sparse file (so a store through a
// mapping never meets a full disk as SIGBUS), the owner's advisory lock,
// msync of a range, directory syncs, pre-faulting, hole punching, revoking
// a mapping under readers, and the poll a reader makes while another
// process finishes a file.
//
// Every function reports the system's error as it is (an errno, or
// ErrUnsupported where the platform lacks the operation); callers wrap it
// with the path and their own sentinel. Nothing here keeps state.
package mmapfile
