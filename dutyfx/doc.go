// Package dutyfx wires duty into a go.uber.org/fx application: only a
// program that imports it links fx.
//
//	app := fx.New(
//		dutyfx.Runners,                                       // runs the agents below as a runner.Group
//		fx.Supply(dutyfx.Config{DefaultIdle: "backoff", Order: []string{"gateway"}}),
//		fx.Provide(dutyfx.AsAgent(NewGateway)),               // an agent.Agent
//		fx.Provide(dutyfx.AsMember(NewRiskMember)),           // a runner.Member: restarted by its policy
//	)
//
// Runners starts the group in order on fx start, within fx's start
// context, and closes it in reverse order on fx stop; when the group ends
// by itself (a member failed with no restart left, or completed under
// Config.ShutdownOnStop) it shuts the application down with exit code 1
// or 0.
//
// The other modules provide the parts agents are wired from, each under a
// name tag (Named), so that several of one Go type live in one graph:
// Mailbox (on the heap), and with SharedFiles, SharedMailbox, Counters and
// ErrorLog (files created when the graph is built, heartbeaten by an
// ipc.Keeper the group runs, removed and closed on stop after the group
// has stopped). Config.OnStopped runs between the two: the place to read
// the agents' final state and the files' final statistics.
package dutyfx
