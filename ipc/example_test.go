package ipc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/dutyrt/duty/ipc"
)

// A ring in a shared file: the owner creates it and consumes; another
// process (here the same one, through a second mapping) opens it by path
// and produces.
func ExampleCreateRing() {
	dir, err := os.MkdirTemp("", "duty-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	owner, err := ipc.CreateRing(dir, "orders", 4096) // exclusive, preallocated, mode 0600
	if err != nil {
		panic(err)
	}
	defer owner.Close()

	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	peer, err := ipc.OpenRing(ctx, owner.File.Path()) // waits while the file is being created
	if err != nil {
		panic(err)
	}
	defer peer.Close()

	if err := peer.Write(1, []byte("buy 100")); err != nil {
		panic(err)
	}
	_ = owner.File.Heartbeat(time.Now().UnixMilli()) // from the owner's duty cycle
	_, _ = owner.Read(func(typeID int32, p []byte) { fmt.Printf("type %d: %s\n", typeID, p) }, 10)
	lv, err := peer.File.Liveness(time.Now(), 0)
	if err != nil {
		panic(err)
	}
	fmt.Println("owner alive:", lv.State == ipc.OwnerAlive)
	// Output:
	// type 1: buy 100
	// owner alive: true
}

// A live owner's file is never removed by another party; once the owner has
// closed it (or died and gone stale) it is.
func ExampleRemoveIfStale() {
	dir, err := os.MkdirTemp("", "duty-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	ef, err := ipc.CreateErrorLog(dir, "errors", 4096)
	if err != nil {
		panic(err)
	}
	err = ipc.RemoveIfStale(ef.File.Path())
	fmt.Println("while the owner lives:", errors.Is(err, ipc.ErrOwnerAlive))

	_ = ef.Close()
	fmt.Println("after the owner closed:", ipc.RemoveIfStale(ef.File.Path()))
	// Output:
	// while the owner lives: true
	// after the owner closed: <nil>
}

// Opening something that is not a duty file is a typed error, not a panic.
func ExampleOpenReadOnly() {
	dir, err := os.MkdirTemp("", "duty-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	path := dir + "/notes.txt"
	if err := os.WriteFile(path, append([]byte("hello, world"), make([]byte, 8192)...), 0o600); err != nil {
		panic(err)
	}
	_, err = ipc.OpenReadOnly(context.Background(), path)
	fmt.Println(errors.Is(err, ipc.ErrNotDutyFile))
	// Output:
	// true
}
