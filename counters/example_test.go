package counters_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/dutyrt/duty/clock"
	"github.com/dutyrt/duty/counters"
)

// An owner allocates counters; a reader (here over the same slices, in
// practice in another process mapping the same file) lists them.
func Example() {
	metadata, values, err := counters.NewRegions(16)
	if err != nil {
		panic(err)
	}
	m, err := counters.NewManager(metadata, values, counters.Config{FreeToReuseTimeout: counters.DefaultFreeToReuseTimeout})
	if err != nil {
		panic(err)
	}
	cycles, _ := m.Allocate("duty cycles: gateway", counters.UserType(0, counters.KindCounter), nil)
	errs, _ := m.Allocate("errors: gateway", counters.UserType(1, counters.KindCounter), nil)
	for range 3 {
		cycles.Add(1)
	}
	errs.Add(1)

	r, _ := counters.NewReader(metadata, values)
	_ = r.ForEachRecord(func(rec counters.Record) bool {
		fmt.Printf("%d %-6s %-7s %-20s %d\n", rec.ID, counters.TypeName(rec.TypeID), counters.KindOf(rec.TypeID), rec.Label, rec.Value)
		return true
	})
	// Output:
	// 0 user:0 counter duty cycles: gateway 3
	// 1 user:1 counter errors: gateway      1
}

// One buffer (a section of a shared file) holds both regions.
func ExampleLayout() {
	r, _ := counters.Layout(1024)
	fmt.Println(r.MetadataOffset, r.MetadataLength, r.ValuesOffset, r.ValuesLength, r.Length)

	buf, _, _ := counters.NewRegions(2048) // stands in for a mapped section
	metadata, values, _ := counters.Split(buf[:r.Length])
	_, err := counters.NewManager(metadata, values, counters.Config{})
	fmt.Println(len(metadata), len(values), err)
	// Output:
	// 0 524288 524288 131072 655360
	// 524288 131072 <nil>
}

// A freed id is reused only after its deadline; the registration id tells a
// reader that the slot now holds another counter.
func ExampleManager_Allocate() {
	clk := clock.NewManual(time.UnixMilli(0)) // a test clock; clock.System by default
	m, _ := newManager(1, counters.Config{FreeToReuseTimeout: time.Second, Clock: clk})
	a, _ := m.Allocate("a", 1, nil)
	fmt.Println(a.ID(), a.RegistrationID())
	_ = a.Close()

	_, err := m.Allocate("b", 1, nil)
	fmt.Println(errors.Is(err, counters.ErrFull))

	clk.Advance(time.Second)
	b, _ := m.Allocate("b", 1, nil)
	fmt.Println(b.ID(), b.RegistrationID())
	// Output:
	// 0 1
	// true
	// 0 2
}

// A restarted owner recovers the regions instead of starting over them.
func ExampleRecover() {
	metadata, values, _ := counters.NewRegions(4)
	old, _ := counters.NewManager(metadata, values, counters.Config{})
	c, _ := old.Allocate("position", counters.UserType(0, counters.KindGauge), nil)
	c.Set(4096)
	// ... the old owner's process dies ...

	_, err := counters.NewManager(metadata, values, counters.Config{})
	fmt.Println(errors.Is(err, counters.ErrInUse))

	m, live, _ := counters.Recover(metadata, values, counters.Config{})
	adopted := live[0] // the new owner keeps updating it

	next, _ := m.Allocate("another", counters.UserType(0, counters.KindGauge), nil)
	rec, _ := m.Reader().Record(adopted.ID())
	fmt.Println(string(rec.Label), adopted.Get(), next.ID(), next.RegistrationID())
	// Output:
	// true
	// position 4096 1 2
}

func newManager(n int, cfg counters.Config) (*counters.Manager, error) {
	metadata, values, err := counters.NewRegions(n)
	if err != nil {
		return nil, err
	}
	return counters.NewManager(metadata, values, cfg)
}
