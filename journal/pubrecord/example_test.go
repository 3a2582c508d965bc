package pubrecord_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/ipc/publication"
	"github.com/dutyrt/duty/journal"
	"github.com/dutyrt/duty/journal/pubrecord"
)

// Record a publication's quotes into a journal (stream 7 for this
// source), then replay them into another publication. The duty cycles are
// called by hand here; normally a runner calls them.
func ExampleRecorder() {
	shm, _ := os.MkdirTemp("", "duty-example-")
	defer os.RemoveAll(shm)
	j, err := journal.Open(shm+"/journal", journal.Options{SegmentSize: journal.MinSegmentSize, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	defer j.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	quotes, _ := publication.Create(shm, "quotes", 64<<10)
	sub, _ := publication.OpenSubscription(ctx, quotes.File().Path())
	defer sub.Close()
	rec, _ := pubrecord.NewRecorder("record-quotes", j, 7, sub, 0)
	for _, q := range []string{"EURUSD 1.0842", "USDJPY 151.22"} {
		_, _ = quotes.Offer(1, []byte(q))
	}
	quotes.Close() // end of stream: the recorder finishes
	for {
		if _, err := rec.DoWork(); errors.Is(err, agent.ErrDone) {
			break
		}
	}
	fmt.Println("recorded", rec.Recorded())

	replay, _ := publication.Create(shm, "replay", 64<<10)
	defer replay.Close()
	out, _ := publication.OpenSubscription(ctx, replay.File().Path())
	defer out.Close()
	t, _ := j.NewTailer()
	defer t.Close()
	rep, _ := pubrecord.NewReplayer("replay-quotes", t, replay, 0, 7)
	rep.StopAtEnd = true
	for {
		if _, err := rep.DoWork(); errors.Is(err, agent.ErrDone) {
			break
		}
	}
	_, _ = out.Poll(func(typeID int32, payload []byte) {
		fmt.Printf("replayed %s\n", payload)
	}, 10)
	// Output:
	// recorded 2
	// replayed EURUSD 1.0842
	// replayed USDJPY 151.22
}
