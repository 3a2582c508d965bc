package idle

import (
	"testing"

	"go.uber.org/goleak"
)

// The benchmarks start goroutines on locked threads; none may outlive them.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
