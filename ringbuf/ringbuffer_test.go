package ringbuf

// ringBuffer is what both ring types implement, for the tests that run
// on either (ManyToOne also has Unblock and SetDemote).
type ringBuffer interface {
	Capacity() int
	MaxMessageLength() int
	Write(typeID int32, payload []byte) error
	TryClaim(typeID int32, length int) (Claim, error)
	Commit(index int) error
	Abort(index int) error
	WriteBatch(typeID int32, payloads [][]byte) error
	TryClaimBatch(size int) (Batch, error)
	CommitBatch(b Batch) error
	AbortBatch(b Batch) error
	TryClaimRecords(typeID int32, length, count int) (Records, error)
	CommitRecords(rs Records) error
	AbortRecords(rs Records) error
	Read(h Handler, limit int) (int, error)
	ControlledRead(h ControlledHandler, limit int) (int, error)
	Ready() bool
	Size() int
	ProducerPosition() int64
	ConsumerPosition() int64
	NextCorrelationID() int64
	ConsumerHeartbeatTime() int64
	SetConsumerHeartbeatTime(epochMillis int64)
	Buffer() []byte
}

var (
	_ ringBuffer = (*OneToOne)(nil)
	_ ringBuffer = (*ManyToOne)(nil)
)

// unblock runs r's Unblock where it has one (a ManyToOne's); a OneToOne has
// none: with one producer nobody else can have left a claim open.
func unblock(r any) (bool, error) {
	if u, ok := r.(interface{ Unblock() (bool, error) }); ok {
		return u.Unblock()
	}
	return false, nil
}
