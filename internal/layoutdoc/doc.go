// Package layoutdoc has no code: its test keeps docs/layouts.md in sync with
// the layout constants of ringbuf, broadcast, ipc/counters and ipc.
package layoutdoc
