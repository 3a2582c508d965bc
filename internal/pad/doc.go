// Package pad is the padding that keeps a word one core writes off the
// cache lines other cores read: a blank field of type Line or Pair on each
// side of such a word, or between a struct's read-only fields and the
// fields one side writes.
//
// Pair, two lines, is the spacing between words written by different
// cores: Intel's adjacent-line prefetcher pulls lines in 128-byte pairs,
// so a word on the line next to another core's hot word still moves with
// it (the same spacing as the ring's trailer). Line is enough where what
// matters is that a word does not share its own line with a neighbour.
//
// The sizes are fixed, not the running CPU's (golang.org/x/sys/cpu's
// CacheLinePad differs between architectures): a struct whose layout a
// test checks is the same everywhere. Layouts shared with other processes
// (mailbox's words) spell their pads out in bytes instead, so that their
// offsets can be read off the declaration.
package pad
