package natsbridge

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/dutyrt/duty/internal/childtest"
)

// TestMain runs the child roles of crash_test.go when the test binary is
// re-executed as a child; otherwise the tests, with goleak.
func TestMain(m *testing.M) {
	childtest.Run(childEnv, childRoles)
	goleak.VerifyTestMain(m,
		// The NATS client (v1.55.0): an async publish starts this
		// goroutine, which reads the publisher's connection-status
		// channel; when the connection closes before that channel was
		// made, it reads a nil channel and blocks for ever (its jetstream
		// package's publish code). Not ours to stop; every other goroutine
		// must be gone.
		goleak.IgnoreTopFunction("github.com/nats-io/nats.go/jetstream.(*jetStream).resetPendingAcksOnReconnect"))
}
