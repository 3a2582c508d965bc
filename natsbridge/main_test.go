package natsbridge

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

// TestMain runs the child roles of crash_test.go when the test binary is
// re-executed as a child; otherwise the tests, with goleak.
func TestMain(m *testing.M) {
	if role := os.Getenv(childEnv); role != "" {
		os.Exit(runChild(role))
	}
	goleak.VerifyTestMain(m)
}
