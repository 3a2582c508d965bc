//go:build race || !amd64

package broadcast

import "encoding/binary"

// Under -race, and on architectures whose memory model (unlike x86-TSO) lets
// a plain store become visible before an earlier atomic store, or a plain
// load be satisfied after a later atomic load, payload bytes are copied as
// 8-byte atomic words. Every access a receiver and the transmitter make to
// shared memory is then a sync/atomic operation, which Go makes sequentially
// consistent: a receiver that loads a word of the new record's payload loads
// the new tail intent afterwards and discards the copy. The race detector
// sees no race. The last, partial word of a payload also writes the record's
// alignment slack, which belongs to the record and is never read.
//
// The raw Receiver's Payload slice still aliases the ring: reading it with
// plain loads while the transmitter runs is a data race the detector reports.
// Use the CopyReceiver for concurrent reads in race-enabled builds.

const atomicPayload = true

func writePayload(v *view, off int64, p []byte) {
	i := 0
	for ; i+8 <= len(p); i += 8 {
		v.buf.Int64At(int(off) + i).Store(int64(binary.LittleEndian.Uint64(p[i:])))
	}
	if i < len(p) {
		var w [8]byte
		copy(w[:], p[i:])
		v.buf.Int64At(int(off) + i).Store(int64(binary.LittleEndian.Uint64(w[:])))
	}
}

func readPayload(dst []byte, v *view, off int64) {
	i := 0
	for ; i+8 <= len(dst); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], uint64(v.buf.Int64At(int(off)+i).Load()))
	}
	if i < len(dst) {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], uint64(v.buf.Int64At(int(off)+i).Load()))
		copy(dst[i:], w[:])
	}
}
