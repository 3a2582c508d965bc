package ringbuf_test

import (
	"encoding/binary"
	"fmt"

	"github.com/dutyrt/duty/ringbuf"
)

func Example() {
	buf, err := ringbuf.Allocate(1024) // 1 KiB of records + the 768-byte trailer
	if err != nil {
		panic(err)
	}
	ring, err := ringbuf.NewManyToOne(buf)
	if err != nil {
		panic(err)
	}

	// Producers (any number of goroutines).
	_ = ring.Write(1, []byte("hello"))
	_ = ring.Write(2, []byte("world"))

	// The one consumer.
	n, err := ring.Read(func(typeID int32, payload []byte) {
		fmt.Printf("type %d: %s\n", typeID, payload)
	}, ringbuf.NoLimit)
	fmt.Println(n, err)
	// Output:
	// type 1: hello
	// type 2: world
	// 2 <nil>
}

func ExampleManyToOne_TryClaim() {
	buf, _ := ringbuf.Allocate(1024)
	ring, _ := ringbuf.NewManyToOne(buf)

	// Zero copy: encode straight into the ring, then commit (or abort).
	claim, err := ring.TryClaim(7, 8)
	if err != nil {
		return // ringbuf.ErrFull: back-pressure
	}
	copy(claim.Payload, "12345678")
	if err := ring.Commit(claim.Index); err != nil {
		panic(err)
	}

	_, _ = ring.Read(func(typeID int32, payload []byte) {
		fmt.Printf("type %d: %s\n", typeID, payload)
	}, 1)
	// Output: type 7: 12345678
}

func ExampleManyToOne_ControlledRead() {
	buf, _ := ringbuf.Allocate(1024)
	ring, _ := ringbuf.NewManyToOne(buf)
	for _, s := range []string{"a", "b", "c"} {
		_ = ring.Write(1, []byte(s))
	}

	// The downstream can take only two messages now: ABORT leaves "c" in
	// the ring for the next duty cycle.
	room := 2
	n, _ := ring.ControlledRead(func(_ int32, payload []byte) ringbuf.Action {
		if room == 0 {
			return ringbuf.Abort
		}
		room--
		fmt.Printf("took %s\n", payload)
		return ringbuf.Continue
	}, ringbuf.NoLimit)
	fmt.Println("consumed", n)

	n, _ = ring.Read(func(_ int32, payload []byte) { fmt.Printf("later %s\n", payload) }, ringbuf.NoLimit)
	fmt.Println("consumed", n)
	// Output:
	// took a
	// took b
	// consumed 2
	// later c
	// consumed 1
}

func ExampleManyToOne_TryClaimBatch() {
	buf, _ := ringbuf.Allocate(1024)
	ring, _ := ringbuf.NewManyToOne(buf)

	// Three records, one claim, one publication.
	batch, err := ring.TryClaimBatch(3 * ringbuf.RecordSize(4))
	if err != nil {
		return
	}
	for i := 0; i < 3; i++ {
		p, _ := batch.Append(1, 4)
		copy(p, fmt.Sprintf("rec%d", i))
	}
	_ = ring.CommitBatch(batch)

	n, _ := ring.Read(func(_ int32, payload []byte) { fmt.Printf("%s ", payload) }, ringbuf.NoLimit)
	fmt.Println(n)
	// Output: rec0 rec1 rec2 3
}

func ExampleManyToOne_TryClaimRecords() {
	buf, _ := ringbuf.Allocate(1024)
	ring, _ := ringbuf.NewManyToOne(buf)

	// Four 8-byte quotes of type 2: one claim, one publication, and nothing
	// stored per record but the payloads.
	quotes, err := ring.TryClaimRecords(2, 8, 4)
	if err != nil {
		return
	}
	for i := range quotes.Len() {
		binary.LittleEndian.PutUint64(quotes.Payload(i), uint64(100+i))
	}
	_ = ring.CommitRecords(quotes)

	_, _ = ring.Read(func(typeID int32, payload []byte) {
		fmt.Print(typeID, ":", binary.LittleEndian.Uint64(payload), " ")
	}, ringbuf.NoLimit)
	fmt.Println()
	// Output: 2:100 2:101 2:102 2:103
}

func ExampleManyToOne_SetDemote() {
	buf, _ := ringbuf.Allocate(64 << 10)
	ring, _ := ringbuf.NewManyToOne(buf)

	// This ring's producers publish 16 records per claim, so its consumer
	// is the slower end: it keeps its time for reading rather than moving
	// released lines to the shared cache for the producers.
	ring.SetDemote(false)

	batch, err := ring.TryClaimRecords(1, 32, 16)
	if err != nil {
		return
	}
	_ = ring.CommitRecords(batch)
	n, _ := ring.Read(func(int32, []byte) {}, ringbuf.NoLimit)
	fmt.Println(n, "messages")
	// Output: 16 messages
}

func ExampleManyToOne_Unblock() {
	buf, _ := ringbuf.Allocate(1024)
	ring, _ := ringbuf.NewManyToOne(buf)

	_, _ = ring.TryClaim(1, 16) // a producer claims, then dies
	_ = ring.Write(1, []byte("behind the dead claim"))

	// The consumer sees no progress while the producer position is ahead;
	// after a liveness timeout it unblocks.
	ok, _ := ring.Unblock()
	fmt.Println("unblocked:", ok)
	_, _ = ring.Read(func(_ int32, payload []byte) { fmt.Printf("%s\n", payload) }, ringbuf.NoLimit)
	// Output:
	// unblocked: true
	// behind the dead claim
}

// A consumer that spins polls with Ready, which inlines, and calls Read
// only when a record is there: an empty poll makes no function call.
func ExampleOneToOne_Ready() {
	buf, _ := ringbuf.Allocate(1024)
	ring, _ := ringbuf.NewOneToOne(buf)

	go func() { _ = ring.Write(1, []byte("tick")) }() // the one producer

	for !ring.Ready() {
		// Spin (a real loop would also check for shutdown).
	}
	n, err := ring.Read(func(typeID int32, payload []byte) {
		fmt.Printf("type %d: %s\n", typeID, payload)
	}, ringbuf.NoLimit)
	fmt.Println(n, err)
	// Output:
	// type 1: tick
	// 1 <nil>
}
