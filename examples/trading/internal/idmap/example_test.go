package idmap_test

import (
	"fmt"

	"github.com/dutyrt/duty/examples/trading/internal/idmap"
)

func Example() {
	m, _ := idmap.New(2) // all storage allocated here
	_ = m.Put(1001, 0)
	_ = m.Put(1002, 1)
	fmt.Println(m.Put(1003, 2)) // full: an error, not a resize
	slot, ok := m.Get(1002)
	fmt.Println(slot, ok)
	m.Delete(1001)
	fmt.Println(m.Put(1003, 2), m.Len())
	// Output:
	// idmap: full
	// 1 true
	// <nil> 2
}
