// Package countertype holds the type ids of duty's own counters: the
// registry the library's packages allocate their counters under. Users read
// these counters by label, or by type name through counters.TypeName and
// counters.KindOf; the numbers are part of the shared-file format (a Java
// or stat-tool reader sees them), listed in docs/counters.md.
//
// Type ids are application-defined in Agrona; Aeron uses 0 (system
// counters) and small positive numbers (1 publisher limit, 4 subscriber
// position, 11 client heartbeat, 100s for archive and cluster). duty
// reserves DutyMin..DutyMax and never allocates outside it; applications
// that put their own counters in the same regions use UserMin and above
// (counters.UserType).
package countertype

const (
	// DutyMin is the first type id reserved for duty.
	DutyMin int32 = 1000

	// SubscriberPosition: a subscriber's position in a publication or
	// mailbox log (Aeron sub-pos). Single writer: the subscriber.
	SubscriberPosition int32 = 1000
	// PublisherLimit: the position a publisher may write up to (Aeron
	// pub-lmt). Single writer: whoever computes the limit.
	PublisherLimit int32 = 1001
	// PublisherPosition: a publisher's position (Aeron pub-pos).
	PublisherPosition int32 = 1002
	// Heartbeat: a participant's liveness heartbeat, epoch ms (Aeron
	// client heartbeat, type 11).
	Heartbeat int32 = 1003
	// UnblockedClaims: claims left by dead producers that a consumer
	// turned into padding (Aeron UNBLOCKED_PUBLICATIONS/COMMANDS).
	UnblockedClaims int32 = 1004
	// FlowControlTimeouts: subscribers dropped from flow control because
	// their heartbeat went stale.
	FlowControlTimeouts int32 = 1005
	// BackPressureEvents: offers refused as back-pressured.
	BackPressureEvents int32 = 1006
	// MailboxDepth: messages (or bytes) waiting in a mailbox.
	MailboxDepth int32 = 1007
	// DutyCycles: duty cycles a runner has run.
	DutyCycles int32 = 1008
	// TotalWork: the sum of the work counts an agent returned.
	TotalWork int32 = 1009
	// Errors: errors a runner or agent reported.
	Errors int32 = 1010
	// LongestCycleNs: the longest duty cycle seen, in nanoseconds
	// (ProposeMax).
	LongestCycleNs int32 = 1011
	// TornMessages: messages a reader found overwritten or torn and
	// discarded.
	TornMessages int32 = 1012
	// LappedReceivers: broadcast receivers lapped by the transmitter.
	LappedReceivers int32 = 1013
	// Delivered: messages a mailbox delivered to its handler.
	Delivered int32 = 1014
	// ConsumedBytes: bytes a consumer released from its ring (records
	// with their headers and padding): its head position.
	ConsumedBytes int32 = 1015
	// RefusedClosed: sends refused because the mailbox was closed.
	RefusedClosed int32 = 1016
	// MaxDepth: the largest backlog a consumer has found, in bytes.
	MaxDepth int32 = 1017
	// Discarded: messages consumed without delivery after a close that
	// discards.
	Discarded int32 = 1018
	// CorruptRecords: records dropped because their framing or checksum
	// was invalid.
	CorruptRecords int32 = 1019
	// IdleCycles: duty cycles that did no work.
	IdleCycles int32 = 1020
	// BridgeEvents: a bridge's count of one kind of event (messages
	// published, delivered, dropped, ...; the label names which, the
	// bridge and its direction): package natsbridge's statistics.
	BridgeEvents int32 = 1021
	// Restarts: restarts of a group member's agent by its restart policy
	// (package runner's Group).
	Restarts int32 = 1022

	// DutyMax is the last type id reserved for duty.
	DutyMax int32 = 1099
	// UserMin is the first type id of applications' counter types
	// (counters.UserType).
	UserMin int32 = 1100
)
