package queue

import "errors"

// ErrCapacity reports a capacity a queue cannot have: below 1 (below 2 for
// a ManyToMany), above 1<<30 once rounded up to a power of two, or
// too large for its slot array to fit in the address space.
// Constructors wrap it with the requested value; test with errors.Is.
var ErrCapacity = errors.New("queue: invalid capacity")
