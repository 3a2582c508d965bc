// Command trading is duty's main demo: a trading-style pipeline of agents
// that talk only through mailboxes. See README.md.
//
//	go run ./examples/trading                 # 10 s, in-process, 2 threads
//	go run ./examples/trading -ipc            # the exchange in a second process
//	go run ./examples/trading -nats           # the same, connected only through NATS
//	go run ./examples/trading -idle spin -cpus 0,1
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/dutyrt/duty/runner"
)

func main() {
	runner.SetMaxProcs()
	os.Exit(realMain(os.Args[1:]))
}

// realMain runs the demo with args and returns the exit status: 0 when
// everything reconciled, 1 when not, 2 for bad flags or a failure to run.
func realMain(args []string) int {
	cfg, err := parseFlags(args, os.Stderr)
	if err != nil {
		if !errors.Is(err, errFlagParse) {
			fmt.Fprintln(os.Stderr, err)
		}
		return 2
	}
	// SIGINT or SIGTERM ends the run early: the feed stops, the pipeline
	// drains (bounded by -drain), the final table is printed.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ok, err := run(ctx, cfg, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "trading:", err)
		return 2
	}
	if !ok {
		return 1
	}
	return 0
}
