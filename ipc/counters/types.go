package counters

import "strconv"

// Type ids of duty's own counters. Type ids are application-defined in
// Agrona; Aeron uses 0 (system counters) and small positive numbers (1
// publisher limit, 4 subscriber position, 11 client heartbeat, 100s for
// archive and cluster). duty reserves TypeIDDutyMin..TypeIDDutyMax and never
// allocates outside it; applications that put their own counters in the
// same regions use TypeIDUserMin and above. docs/counters.md lists what the
// key and label of each type hold.
const (
	// TypeIDDutyMin is the first type id reserved for duty.
	TypeIDDutyMin int32 = 1000

	// TypeSubscriberPosition: a subscriber's position in a publication or
	// mailbox log (Aeron sub-pos). Single writer: the subscriber.
	TypeSubscriberPosition int32 = 1000
	// TypePublisherLimit: the position a publisher may write up to (Aeron
	// pub-lmt). Single writer: whoever computes the limit.
	TypePublisherLimit int32 = 1001
	// TypePublisherPosition: a publisher's position (Aeron pub-pos).
	TypePublisherPosition int32 = 1002
	// TypeHeartbeat: a participant's liveness heartbeat, epoch ms (Aeron
	// client heartbeat, type 11).
	TypeHeartbeat int32 = 1003
	// TypeUnblockedClaims: claims left by dead producers that a consumer
	// turned into padding (Aeron UNBLOCKED_PUBLICATIONS/COMMANDS).
	TypeUnblockedClaims int32 = 1004
	// TypeFlowControlTimeouts: subscribers dropped from flow control
	// because their heartbeat went stale.
	TypeFlowControlTimeouts int32 = 1005
	// TypeBackPressureEvents: offers refused as back-pressured.
	TypeBackPressureEvents int32 = 1006
	// TypeMailboxDepth: messages (or bytes) waiting in a mailbox.
	TypeMailboxDepth int32 = 1007
	// TypeDutyCycles: duty cycles a runner has run.
	TypeDutyCycles int32 = 1008
	// TypeTotalWork: the sum of the work counts an agent returned.
	TypeTotalWork int32 = 1009
	// TypeErrors: errors a runner or agent reported.
	TypeErrors int32 = 1010
	// TypeLongestCycleNs: the longest duty cycle seen, in nanoseconds
	// (ProposeMax).
	TypeLongestCycleNs int32 = 1011
	// TypeTornMessages: messages a reader found overwritten or torn and
	// discarded.
	TypeTornMessages int32 = 1012
	// TypeLappedReceivers: broadcast receivers lapped by the transmitter.
	TypeLappedReceivers int32 = 1013

	// TypeIDDutyMax is the last type id reserved for duty.
	TypeIDDutyMax int32 = 1099
	// TypeIDUserMin is the first type id suggested for applications.
	TypeIDUserMin int32 = 1100
)

var typeNames = map[int32]string{
	TypeSubscriberPosition:  "sub-pos",
	TypePublisherLimit:      "pub-lmt",
	TypePublisherPosition:   "pub-pos",
	TypeHeartbeat:           "heartbeat",
	TypeUnblockedClaims:     "unblocked-claims",
	TypeFlowControlTimeouts: "flow-control-timeouts",
	TypeBackPressureEvents:  "back-pressure",
	TypeMailboxDepth:        "mailbox-depth",
	TypeDutyCycles:          "duty-cycles",
	TypeTotalWork:           "total-work",
	TypeErrors:              "errors",
	TypeLongestCycleNs:      "longest-cycle-ns",
	TypeTornMessages:        "torn-messages",
	TypeLappedReceivers:     "lapped-receivers",
}

// TypeName returns a short name for a duty type id ("sub-pos",
// "duty-cycles", ...), for tools such as dutystat; other ids give their
// decimal value.
func TypeName(typeID int32) string {
	if n, ok := typeNames[typeID]; ok {
		return n
	}
	return strconv.Itoa(int(typeID))
}
