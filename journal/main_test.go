package journal

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/dutyrt/duty/internal/childtest"
)

func TestMain(m *testing.M) {
	childtest.Run(childEnv, childRoles)
	goleak.VerifyTestMain(m)
}
