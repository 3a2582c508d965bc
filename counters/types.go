package counters

import (
	"strconv"

	"github.com/dutyrt/duty/internal/countertype"
)

// typeNames are the short names of duty's own counter types
// (internal/countertype), as dutystat shows them.
var typeNames = map[int32]string{
	countertype.SubscriberPosition:  "sub-pos",
	countertype.PublisherLimit:      "pub-lmt",
	countertype.PublisherPosition:   "pub-pos",
	countertype.Heartbeat:           "heartbeat",
	countertype.UnblockedClaims:     "unblocked-claims",
	countertype.FlowControlTimeouts: "flow-control-timeouts",
	countertype.BackPressureEvents:  "back-pressure",
	countertype.MailboxDepth:        "mailbox-depth",
	countertype.DutyCycles:          "duty-cycles",
	countertype.TotalWork:           "total-work",
	countertype.Errors:              "errors",
	countertype.LongestCycleNs:      "longest-cycle-ns",
	countertype.TornMessages:        "torn-messages",
	countertype.LappedReceivers:     "lapped-receivers",
	countertype.Delivered:           "delivered",
	countertype.ConsumedBytes:       "consumed-bytes",
	countertype.RefusedClosed:       "refused-closed",
	countertype.MaxDepth:            "max-depth",
	countertype.Discarded:           "discarded",
	countertype.CorruptRecords:      "corrupt-records",
	countertype.IdleCycles:          "idle-cycles",
	countertype.BridgeEvents:        "bridge-events",
	countertype.Restarts:            "restarts",
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
	countertype.Heartbeat:      KindTimestamp,
	countertype.MailboxDepth:   KindGauge,
	countertype.LongestCycleNs: KindGauge,
	countertype.MaxDepth:       KindGauge,
}

// kindsPerUserType is how many kinds a user type id's low part encodes
// (UserType).
const kindsPerUserType = 4

// UserType returns the type id of an application's counter type n (0,
// 1, ...) of kind k: 1100 + 4n + k, so that KindOf, and every
// reader, knows the kind from the type id alone. Applications that choose
// their type ids otherwise get KindOf's reading of them.
func UserType(n int32, k Kind) int32 {
	return countertype.UserMin + kindsPerUserType*n + int32(k)
}

// KindOf returns the kind of a counter of typeID: from duty's table for
// its own types, from the encoding of UserType for type ids from
// 1100 (UserType's) on, and KindCounter for any other (Agrona's and Aeron's
// type ids, whose counters are mostly positions and totals).
func KindOf(typeID int32) Kind {
	if typeID >= countertype.UserMin {
		if k := Kind((typeID - countertype.UserMin) % kindsPerUserType); k >= KindCounter && k <= KindTimestamp {
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
// such as "user:3"), and false below countertype.UserMin.
func userTypeNumber(typeID int32) (int32, bool) {
	if typeID < countertype.UserMin {
		return 0, false
	}
	return (typeID - countertype.UserMin) / kindsPerUserType, true
}

// TypeName returns the short name of one of duty's own counter types ("sub-pos",
// "duty-cycles", ...), for tools such as dutystat; an application's type
// id from 1100 on gives "user:n" (UserType's n), any other its
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
