package mailbox

// Stats is a snapshot of a mailbox's statistics (see Counters for what
// each counter counts). It is read lock-free from any goroutine; the
// fields are read one by one, so they are not a single atomic picture.
type Stats struct {
	Name string
	// Capacity is the ring's capacity in bytes.
	Capacity int
	// Depth is the number of bytes queued now (headers, padding and open
	// claims included): an indication, as the ring's Size.
	Depth int
	// MaxDepth is the largest backlog Drain has seen, in bytes (see
	// Counters.MaxDepth).
	MaxDepth      int64
	BackPressured int64
	RefusedClosed int64
	Delivered     int64
	Torn          int64
	Corrupt       int64
	Discarded     int64
	Closed        bool
}

// Stats returns a snapshot of the mailbox's statistics. Safe from any
// goroutine.
func (m *Mailbox) Stats() Stats {
	return Stats{
		Name:          m.name,
		Capacity:      m.capacity,
		Depth:         m.ring.Size(),
		MaxDepth:      m.ctr.MaxDepth.Load(),
		BackPressured: m.ctr.BackPressured.Load(),
		RefusedClosed: m.ctr.RefusedClosed.Load(),
		Delivered:     m.ctr.Delivered.Load(),
		Torn:          m.ctr.Torn.Load(),
		Corrupt:       m.ctr.Corrupt.Load(),
		Discarded:     m.ctr.Discarded.Load(),
		Closed:        m.IsClosed(),
	}
}

// Counters returns the mailbox's counter words (its own, or those given in
// Config.Counters), for a caller that mirrors them elsewhere.
func (m *Mailbox) Counters() Counters { return m.ctr }
