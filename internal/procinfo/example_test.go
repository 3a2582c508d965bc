package procinfo_test

import (
	"fmt"
	"os"

	"github.com/dutyrt/duty/internal/procinfo"
)

// An owner recorded as (pid, start) is the same process only if Info
// gives the same start time for the pid now.
func ExampleInfo() {
	pid := os.Getpid()
	recorded, _, _ := procinfo.Info(pid)

	start, gone, known := procinfo.Info(pid)
	fmt.Println("same process:", !known || !gone && start == recorded)
	// Output: same process: true
}
