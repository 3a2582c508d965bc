package ringbuf

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine (a stress test's
// producer or consumer) outlives them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
