//go:build protoactor

package main

// WA's and WAL's baseline, protoactor-go; only with -tags protoactor.

import (
	"encoding/binary"
	"fmt"
	"log/slog"
	"time"

	"github.com/asynkron/protoactor-go/actor"
)

// protoactorVariants are WA's or (latency) WAL's protoactor-go variant,
// which allocates per message.
func protoactorVariants(latency bool) []variant {
	run := protoactorStream
	if latency {
		run = protoactorPingPong
	}
	return []variant{{name: "protoactor", run: run, goroutines: true, allocates: true}}
}

// withActor spawns an actor of receive on a new actor system (its defaults
// but a silent logger), runs fn with them, then stops both.
func withActor(receive actor.ReceiveFunc, fn func(*actor.ActorSystem, *actor.PID) (time.Duration, error)) (time.Duration, error) {
	quiet := slog.New(slog.DiscardHandler)
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return quiet }))
	defer system.Shutdown()
	pid := system.Root.Spawn(actor.PropsFromFunc(receive))
	defer func() { _ = system.Root.StopFuture(pid).Wait() }()
	return fn(system, pid)
}

// protoactorStream is WA's protoactor variant: the producer sends each
// benchMsg (a value: the actor reads it on another goroutine) with Send to
// an actor whose Receive function checks it.
func protoactorStream(cfg *runConfig) (time.Duration, error) {
	last := newLastMessage(cfg.n)
	return withActor(func(ctx actor.Context) {
		if m, ok := ctx.Message().(benchMsg); ok {
			last.take(&m)
		}
	}, func(system *actor.ActorSystem, pid *actor.PID) (time.Duration, error) {
		return actorStreamRun(cfg, func(*team) error {
			for i := range cfg.n {
				system.Root.Send(pid, benchMsg{Seq: seqFor(i, cfg.corruptAt)})
			}
			return nil
		}, last, nil)
	})
}

// protoactorPingPong: RequestFuture and Result, the ponger Responds.
func protoactorPingPong(cfg *runConfig) (time.Duration, error) {
	pc, last := newChecker(1), newLastMessage(cfg.n)
	return withActor(func(ctx actor.Context) {
		if m, ok := ctx.Message().(benchMsg); ok {
			ctx.Respond(m)
			last.take(&m)
		}
	}, func(system *actor.ActorSystem, pid *actor.PID) (time.Duration, error) {
		abort := newAbortSignal()
		t := newTeam(cfg.place, abort)
		return roundTrips(cfg, t, pc, last.c, func(p []byte) error {
			res, err := system.Root.RequestFuture(pid, benchMsg{Seq: binary.LittleEndian.Uint64(p)}, cfg.timeout).Result()
			if err != nil {
				return fmt.Errorf("dutybench: protoactor: %w", err)
			}
			m, ok := res.(benchMsg)
			if !ok {
				return fmt.Errorf("%w: protoactor: a reply of type %T", errPayload, res)
			}
			pc.checkMsg(&m)
			return nil
		}, func() error {
			_, err := last.await(abort, nil)
			return err
		})
	})
}
