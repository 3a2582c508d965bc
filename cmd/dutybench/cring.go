//go:build cring

package main

// The practical limit of W1 on this machine, measured in the same run as
// everything else: BENCH.md's "minimal C ring with Agrona's protocol". The
// record header's length word is the publication; the consumer zeroes what
// it read and publishes head once per read; the producer stores its tail
// and re-reads head only when its cached head says full; padding at the
// wrap. One record per publication (cring-write) or 16 per claim
// (cring-batch16). The consumer checks every message as the Go checker
// does. Built only with -tags cring (cgo and a C compiler): the default
// build of dutybench needs neither.

/*
#cgo CFLAGS: -O2
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdatomic.h>

enum { REC = 40, TYPE = 1 };

typedef struct {
	uint8_t *data;
	int64_t cap;
	_Atomic int64_t *tail;
	_Atomic int64_t *head;
} cring;

static inline _Atomic int32_t *len_at(cring *r, int64_t i) { return (_Atomic int32_t *)(r->data + i); }

// produce sends n messages, batch records per claim (the last claim takes
// what is left); message corrupt_at (if >= 0) carries a wrong sequence number.
static void cring_produce(cring *r, int64_t n, int64_t batch, int64_t corrupt_at) {
	int64_t tail = 0, head_cache = 0, mask = r->cap - 1;
	for (int64_t i = 0; i < n; i += batch) {
		if (batch > n - i) batch = n - i;
		int64_t aligned = REC * batch;
		for (;;) {
			int64_t idx = tail & mask, to_end = r->cap - idx, required = aligned;
			if (required > to_end) required = to_end + aligned;
			if (required > r->cap - (tail - head_cache)) {
				head_cache = atomic_load_explicit(r->head, memory_order_acquire);
				if (required > r->cap - (tail - head_cache)) continue;
			}
			if (aligned > to_end) {
				*(int32_t *)(r->data + idx + 4) = -1;
				atomic_store_explicit(len_at(r, idx), (int32_t)to_end, memory_order_release);
				tail += to_end;
				idx = 0;
			}
			for (int64_t j = 0; j < batch; j++) {
				uint8_t *rec = r->data + idx + REC * j;
				int64_t seq = i + j, id = 0;
				if (seq == corrupt_at) seq++;
				if (j > 0) *(int32_t *)rec = REC;
				*(int32_t *)(rec + 4) = TYPE;
				memcpy(rec + 8, &seq, 8);
				memcpy(rec + 16, &id, 8);
				memset(rec + 24, 0, 16);
			}
			atomic_store_explicit(len_at(r, idx), REC, memory_order_release);
			tail += aligned;
			atomic_store_explicit(r->tail, tail, memory_order_release);
			break;
		}
	}
}

// consume reads n messages and returns how many did not match; the first
// mismatch's sequence number and the one expected go to *seq and *want.
static int64_t cring_consume(cring *r, int64_t n, int64_t *got, int64_t *want) {
	int64_t head = 0, expected = 0, received = 0, bad = 0, mask = r->cap - 1;
	while (received < n) {
		int64_t idx = head & mask, k = 0;
		while (idx + k < r->cap) {
			int32_t len = atomic_load_explicit(len_at(r, idx + k), memory_order_acquire);
			if (len <= 0) break;
			uint8_t *rec = r->data + idx + k;
			int32_t type = *(int32_t *)(rec + 4);
			if (type == TYPE) {
				int64_t seq, id;
				memcpy(&seq, rec + 8, 8);
				memcpy(&id, rec + 16, 8);
				if (len != REC || seq != expected || id != 0) {
					if (bad++ == 0) { *got = seq; *want = expected; }
					expected = seq;
				}
				expected++;
				received++;
			}
			k += (len + 7) & ~7;
		}
		if (k > 0) {
			memset(r->data + idx, 0, k);
			head += k;
			atomic_store_explicit(r->head, head, memory_order_release);
		}
	}
	return bad;
}
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/dutyrt/duty/ringbuf"
)

func init() {
	w1.variants = append(w1.variants,
		variant{name: "cring-write", extra: true, run: func(cfg *runConfig) (time.Duration, error) { return w1CRing(cfg, 1) }},
		variant{name: "cring-batch16", extra: true, run: func(cfg *runConfig) (time.Duration, error) { return w1CRing(cfg, batchRecords) }},
	)
}

func w1CRing(cfg *runConfig, batch int) (time.Duration, error) {
	// C memory: the ring is handed to C for the whole repetition.
	size := C.size_t(ringCapacity + ringbuf.TrailerLength)
	mem := C.aligned_alloc(128, size)
	if mem == nil {
		return 0, fmt.Errorf("cring: out of memory")
	}
	defer C.free(mem)
	C.memset(mem, 0, size)
	base := unsafe.Pointer(mem)
	r := &C.cring{
		data: (*C.uint8_t)(base),
		cap:  ringCapacity,
		tail: (*C.int64_t)(unsafe.Add(base, ringCapacity+ringbuf.TailPositionOffset)),
		head: (*C.int64_t)(unsafe.Add(base, ringCapacity+ringbuf.HeadPositionOffset)),
	}
	cr := (*C.cring)(C.malloc(C.size_t(unsafe.Sizeof(*r))))
	defer C.free(unsafe.Pointer(cr))
	*cr = *r
	t := newTeam(cfg.place)
	n := C.int64_t(cfg.n)
	t.spawn(0, func() error {
		C.cring_produce(cr, n, C.int64_t(batch), C.int64_t(cfg.corruptAt))
		return nil
	})
	t.spawn(1, func() error {
		var got, want C.int64_t
		bad := C.cring_consume(cr, n, &got, &want)
		t.finish()
		if bad != 0 {
			return fmt.Errorf("%w: C ring: %d messages did not match, the first: producer 0 sequence %d, want %d", errPayload, bad, got, want)
		}
		return nil
	})
	return t.run(cfg.timeout)
}
