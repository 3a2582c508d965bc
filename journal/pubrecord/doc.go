// Package pubrecord records an IPC publication's traffic into a journal
// and feeds a journal back into a publication: the publication (package
// ipc/publication) counterpart of package journal/replay's Recorder,
// which does the same for a mailbox; its Replayer is replay.Replayer with
// the publication as the sink.
//
//	sub, err := publication.OpenSubscription(ctx, path)
//	rec, err := pubrecord.NewRecorder("record-quotes", j, 7, sub, 0) // stream 7 for this source
//	// run rec on the journal writer's runner (agent.NewComposite for several sources)
//
//	t, err := j.NewTailer()
//	rep, err := pubrecord.NewReplayer("replay-quotes", t, pub, 0, 7) // stream 7 into pub
//	rep.Paced = true                                                  // at the recorded pace
//
// A Recorder is an agent that polls a Subscription and appends every
// message to the journal on its stream, with the message's type id and
// the time it was recorded: one stream per source, so that a replay can
// pick sources apart. It is the journal's writer: several Recorders of
// one journal run on one thread (one runner, an agent.NewComposite). A
// journal error leaves the message unconsumed in the publication (nothing
// is lost); the Recorder returns the error. At the publication's end of
// stream (its owner closed it, or died, and everything was read) the
// Recorder returns agent.ErrDone.
//
// A Replayer is an agent that reads a journal with a Tailer (one stream
// or all) and offers each record to a publication, as fast as the
// publication takes them or at the pace they were recorded (Paced).
// ErrBackPressured, ErrNotConnected and ErrAdminAction are transient: the
// record is offered again on the next duty cycle, so nothing is skipped
// and nothing is sent twice. With StopAtEnd it returns agent.ErrDone at
// the journal's end.
//
// Neither allocates per message, and nothing here starts a goroutine.
package pubrecord
