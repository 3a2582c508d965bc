package counters

import "strconv"

// Type ids of duty's own counters. Type ids are application-defined in
// Agrona; Aeron uses 0 (system counters) and small positive numbers (1
// publisher limit, 4 subscriber position, 11 client heartbeat, 100s for
// archive and cluster). duty reserves typeIDDutyMin..TypeIDDutyMax and never
// allocates outside it; applications that put their own counters in the
// same regions use TypeIDUserMin and above. docs/counters.md lists what the
// key and label of each type hold.
const (
	// typeIDDutyMin is the first type id reserved for duty.
	typeIDDutyMin int32 = 1000

	// TypeSubscriberPosition: a subscriber's position in a publication or
	// mailbox log (Aeron sub-pos). Single writer: the subscriber.
	TypeSubscriberPosition int32 = 1000
	// typePublisherLimit: the position a publisher may write up to (Aeron
	// pub-lmt). Single writer: whoever computes the limit.
	typePublisherLimit int32 = 1001
	// typePublisherPosition: a publisher's position (Aeron pub-pos).
	typePublisherPosition int32 = 1002
	// TypeHeartbeat: a participant's liveness heartbeat, epoch ms (Aeron
	// client heartbeat, type 11).
	TypeHeartbeat int32 = 1003
	// TypeUnblockedClaims: claims left by dead producers that a consumer
	// turned into padding (Aeron UNBLOCKED_PUBLICATIONS/COMMANDS).
	TypeUnblockedClaims int32 = 1004
	// typeFlowControlTimeouts: subscribers dropped from flow control
	// because their heartbeat went stale.
	typeFlowControlTimeouts int32 = 1005
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
	// typeTornMessages: messages a reader found overwritten or torn and
	// discarded.
	typeTornMessages int32 = 1012
	// typeLappedReceivers: broadcast receivers lapped by the transmitter.
	typeLappedReceivers int32 = 1013
	// TypeDelivered: messages a mailbox delivered to its handler.
	TypeDelivered int32 = 1014
	// TypeConsumedBytes: bytes a consumer released from its ring (records
	// with their headers and padding): its head position.
	TypeConsumedBytes int32 = 1015
	// TypeRefusedClosed: sends refused because the mailbox was closed.
	TypeRefusedClosed int32 = 1016
	// TypeMaxDepth: the largest backlog a consumer has found, in bytes.
	TypeMaxDepth int32 = 1017
	// TypeDiscarded: messages consumed without delivery after a close
	// that discards.
	TypeDiscarded int32 = 1018
	// TypeCorruptRecords: records dropped because their framing or
	// checksum was invalid.
	TypeCorruptRecords int32 = 1019
	// TypeIdleCycles: duty cycles that did no work.
	TypeIdleCycles int32 = 1020
	// TypeBridgeEvents: a bridge's count of one kind of event (messages
	// published, delivered, dropped, ...; the label names which, the
	// bridge and its direction): package natsbridge's statistics.
	TypeBridgeEvents int32 = 1021
	// TypeRestarts: restarts of a group member's agent by its restart
	// policy (package runner's Group).
	TypeRestarts int32 = 1022

	// typeIDDutyMax is the last type id reserved for duty.
	typeIDDutyMax int32 = 1099
	// TypeIDUserMin is the first type id suggested for applications.
	TypeIDUserMin int32 = 1100
)

var typeNames = map[int32]string{
	TypeSubscriberPosition:  "sub-pos",
	typePublisherLimit:      "pub-lmt",
	typePublisherPosition:   "pub-pos",
	TypeHeartbeat:           "heartbeat",
	TypeUnblockedClaims:     "unblocked-claims",
	typeFlowControlTimeouts: "flow-control-timeouts",
	TypeBackPressureEvents:  "back-pressure",
	TypeMailboxDepth:        "mailbox-depth",
	TypeDutyCycles:          "duty-cycles",
	TypeTotalWork:           "total-work",
	TypeErrors:              "errors",
	TypeLongestCycleNs:      "longest-cycle-ns",
	typeTornMessages:        "torn-messages",
	typeLappedReceivers:     "lapped-receivers",
	TypeDelivered:           "delivered",
	TypeConsumedBytes:       "consumed-bytes",
	TypeRefusedClosed:       "refused-closed",
	TypeMaxDepth:            "max-depth",
	TypeDiscarded:           "discarded",
	TypeCorruptRecords:      "corrupt-records",
	TypeIdleCycles:          "idle-cycles",
	TypeBridgeEvents:        "bridge-events",
	TypeRestarts:            "restarts",
}

// Kind says what a counter's value is, so that a reader knows what to show
// for it: a rate for a Counter, the value of a Gauge, the age of a
// Timestamp.
type Kind uint8

const (
	// KindCounter only grows: a reader shows its rate.
	KindCounter Kind = 1
	// KindGauge goes up and down (a depth, a longest cycle): a reader
	// shows the value.
	KindGauge Kind = 2
	// KindTimestamp is a time in epoch milliseconds (a heartbeat): a
	// reader shows its age.
	KindTimestamp Kind = 3
)

func (k Kind) String() string {
	switch k {
	case KindCounter:
		return "counter"
	case KindGauge:
		return "gauge"
	case KindTimestamp:
		return "timestamp"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

var gauges = map[int32]Kind{
	TypeHeartbeat:      KindTimestamp,
	TypeMailboxDepth:   KindGauge,
	TypeLongestCycleNs: KindGauge,
	TypeMaxDepth:       KindGauge,
}

// kindsPerUserType is how many kinds a user type id's low part encodes
// (UserType).
const kindsPerUserType = 4

// UserType returns the type id of an application's counter type n (0,
// 1, ...) of kind k: TypeIDUserMin + 4n + k, so that KindOf, and every
// reader, knows the kind from the type id alone. Applications that choose
// their type ids otherwise get KindOf's reading of them.
func UserType(n int32, k Kind) int32 {
	return TypeIDUserMin + kindsPerUserType*n + int32(k)
}

// KindOf returns the kind of a counter of typeID: from duty's table for
// its own types, from the encoding of UserType for type ids from
// TypeIDUserMin on, and KindCounter for any other (Agrona's and Aeron's
// type ids, whose counters are mostly positions and totals).
func KindOf(typeID int32) Kind {
	if typeID >= TypeIDUserMin {
		if k := Kind((typeID - TypeIDUserMin) % kindsPerUserType); k >= KindCounter && k <= KindTimestamp {
			return k
		}
		return KindCounter
	}
	if k, ok := gauges[typeID]; ok {
		return k
	}
	return KindCounter
}

// userTypeNumber returns n of a type id made by UserType (for a label
// such as "user:3"), and false below TypeIDUserMin.
func userTypeNumber(typeID int32) (int32, bool) {
	if typeID < TypeIDUserMin {
		return 0, false
	}
	return (typeID - TypeIDUserMin) / kindsPerUserType, true
}

// TypeName returns a short name for a duty type id ("sub-pos",
// "duty-cycles", ...), for tools such as dutystat; an application's type
// id from TypeIDUserMin on gives "user:n" (UserType's n), any other its
// decimal value.
func TypeName(typeID int32) string {
	if n, ok := typeNames[typeID]; ok {
		return n
	}
	if n, ok := userTypeNumber(typeID); ok {
		return "user:" + strconv.Itoa(int(n))
	}
	return strconv.Itoa(int(typeID))
}
