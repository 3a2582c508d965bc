package main

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/dutyrt/duty/internal/pad"
)

// The payload (docs/workloads.md, "Common rules"): [0,8) the producer's
// sequence number, [8,16) its id, [16,32) zero, little-endian; type id 1.
const (
	payloadLen = 32
	msgTypeID  = 1
)

var errPayload = errors.New("dutybench: payload mismatch")

// putPayload writes a message into p, zeroing [16,32): a claimed slot of a
// one-to-one ring holds old bytes.
func putPayload(p []byte, seq, producer uint64) {
	p = p[:payloadLen:payloadLen]
	binary.LittleEndian.PutUint64(p[0:8], seq)
	binary.LittleEndian.PutUint64(p[8:16], producer)
	binary.LittleEndian.PutUint64(p[16:24], 0)
	binary.LittleEndian.PutUint64(p[24:32], 0)
}

func putSeq(p *[payloadLen]byte, seq uint64) {
	binary.LittleEndian.PutUint64(p[0:8], seq)
}

// seqFor returns message i's sequence number: i, but off by one at
// corruptAt.
func seqFor(i, corruptAt int) uint64 {
	if i == corruptAt {
		return uint64(i) + 1
	}
	return uint64(i)
}

// checker verifies every message a consumer receives: type 1, 32 bytes, a
// known producer id, and seq == expected[producer]. It records the first
// mismatch and keeps counting, so that the producers never block on a
// consumer that gave up.
//
// Its words are kept two cache lines (pad.Pair) from anything else (the
// struct padded at both ends, expected inside a larger allocation): W3's
// two checkers, one per side and allocated one after the other, would
// otherwise share lines that every round trip moves between the cores.
type checker struct {
	_        pad.Pair
	expected []uint64
	received int
	err      error
	_        pad.Pair
}

func newChecker(producers int) *checker {
	const margin = pad.PairSize / 8 // uint64s
	exp := make([]uint64, margin+producers+margin)
	return &checker{expected: exp[margin : margin+producers : margin+producers]}
}

func (c *checker) reset() {
	clear(c.expected)
	c.received = 0
	c.err = nil
}

// check is a ringbuf.Handler, all in line: a call per message would be one
// more in every ring variant's consumer.
func (c *checker) check(typeID int32, p []byte) {
	c.received++
	if typeID != msgTypeID || len(p) != payloadLen {
		c.mismatch(fmt.Sprintf("message %d: type %d, %d bytes; want type %d, %d bytes", c.received, typeID, len(p), msgTypeID, payloadLen))
		return
	}
	seq := binary.LittleEndian.Uint64(p[0:8])
	id := binary.LittleEndian.Uint64(p[8:16])
	if id >= uint64(len(c.expected)) || seq != c.expected[id] {
		c.wrongSequence(seq, id)
		return
	}
	c.expected[id]++
}

//go:noinline
func (c *checker) wrongSequence(seq, id uint64) {
	if id >= uint64(len(c.expected)) {
		c.mismatch(fmt.Sprintf("message %d: producer id %d, want < %d", c.received, id, len(c.expected)))
		return
	}
	c.mismatch(fmt.Sprintf("message %d: producer %d sequence %d, want %d", c.received, id, seq, c.expected[id]))
	c.expected[id] = seq + 1 // resynchronise: report only the first
}

func (c *checker) checkArray(p *[payloadLen]byte) { c.check(msgTypeID, p[:]) }

//go:noinline
func (c *checker) mismatch(what string) {
	if c.err == nil {
		c.err = fmt.Errorf("%w: %s", errPayload, what)
	}
}

// finish returns the first mismatch, or an error if the per-producer
// counts are not want.
func (c *checker) finish(want []int) error {
	if c.err != nil {
		return c.err
	}
	for id, n := range want {
		if c.expected[id] != uint64(n) {
			return fmt.Errorf("%w: producer %d: %d messages in sequence, want %d", errPayload, id, c.expected[id], n)
		}
	}
	return nil
}
