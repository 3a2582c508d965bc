// Package layoutdoc keeps docs/layouts.md in sync with the layout
// constants in the code. Its own test checks the exported constants of
// ringbuf, broadcast, counters, errlog and histogram; a
// package whose layout constants are unexported, in part or all (ipc,
// mailbox, ipc/publication), checks its rows itself, from its internal
// test, with Check.
package layoutdoc
