// Command mdfeed publishes the trading demo's market data on a ZMTP PUB
// endpoint, for the demo's -md mode: the same quotes as the demo's own
// feed (same generator, -seed and -instruments), at -rate for -duration,
// then an end message with its counts (package
// examples/trading/internal/mdfeed).
//
//	go run ./examples/trading/mdfeed -bind tcp://127.0.0.1:5556 -duration 10s &
//	go run ./examples/trading -md tcp://127.0.0.1:5556
package main

import (
	"os"

	"github.com/dutyrt/duty/examples/trading/internal/mdfeed"
)

func main() { os.Exit(mdfeed.Main(os.Args[1:], os.Stdout, os.Stderr)) }
