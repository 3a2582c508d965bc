// Package layoutdoc keeps docs/layouts.md in sync with the layout
// constants in the code. Each package with rows on the page (ringbuf,
// broadcast, counters, errlog, histogram, ipc, mailbox, ipc/publication)
// checks them from its internal test with Check, since most of those
// constants are unexported; this package's own test checks that every row
// belongs to such a package.
package layoutdoc
