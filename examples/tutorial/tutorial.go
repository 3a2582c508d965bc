// Package tutorial is the code of docs/tutorial.md: every code block of
// the tutorial is a region of this file, between "tutorial:" markers, so
// that it compiles and its test runs it (the repository's
// TestTutorialIsTheCode holds the page to this file).
package tutorial

import (
	"context"
	"errors"
	"fmt"
	"os/exec"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/dutyfx"
	"github.com/dutyrt/duty/ipc"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/message"
	"github.com/dutyrt/duty/runner"
)

// tutorial:begin messages
// Add asks for A+B.
type Add struct {
	message.RequestHeader // the call id and where the reply goes: Ask fills it in
	A, B                  int64
}

// Sum is the reply.
type Sum struct {
	message.ReplyHeader // the call id: Reply fills it in
	Value               int64
}

var (
	Adds = message.MustFixed[Add](1) // type ids 1 and 2; layouts checked here
	Sums = message.MustFixed[Sum](2)
)

// tutorial:end

// tutorial:begin adder
// Adder answers every Add with its Sum.
type Adder struct {
	in     *mailbox.Mailbox
	router *message.Router
}

func NewAdder(in *mailbox.Mailbox, reg *message.Registry) (*Adder, error) {
	a := &Adder{in: in, router: message.NewRouter()}
	return a, message.Handle(a.router, Adds, func(m *Add) error {
		// The asker's mailbox full: m stays for the next cycle.
		return Sums.Reply(reg, m.RequestHeader, &Sum{Value: m.A + m.B})
	})
}

func (a *Adder) RoleName() string     { return "adder" }
func (a *Adder) OnStart() error       { return nil }
func (a *Adder) OnClose() error       { return nil }
func (a *Adder) DoWork() (int, error) { return a.in.DrainTo(a.router, 64) }

// tutorial:end

// tutorial:begin asker
// Asker sends n additions and ends (agent.ErrDone) when every call has
// ended: with its sum, or timed out.
type Asker struct {
	in, adder    *mailbox.Mailbox
	router       *message.Router
	calls        *message.Calls[Add, Sum, int]
	n, sent, got int
	Total        int64
	TimedOut     int
}

func NewAsker(in, adder *mailbox.Mailbox, self message.Address, n int) (*Asker, error) {
	a := &Asker{in: in, adder: adder, router: message.NewRouter(), n: n}
	var err error
	a.calls, err = message.NewCalls(a.router, Adds, Sums, self, a.onSum)
	return a, err
}

func (a *Asker) onSum(i int, s *Sum, err error) {
	a.got++
	if err != nil {
		a.TimedOut++ // message.ErrTimeout: no reply within the deadline
		return
	}
	a.Total += s.Value
}

func (a *Asker) RoleName() string { return "asker" }
func (a *Asker) OnStart() error   { return nil }
func (a *Asker) OnClose() error   { return nil }

func (a *Asker) DoWork() (int, error) {
	work := a.calls.Poll() // calls past their deadline end here
	if a.sent < a.n {
		err := a.calls.Ask(a.adder, &Add{A: int64(a.sent), B: 1}, a.sent)
		switch {
		case err == nil:
			a.sent++
			work++
		case !errors.Is(err, mailbox.ErrBackPressured):
			return work, err // full is normal: ask again next cycle
		}
	}
	n, err := a.in.DrainTo(a.router, 64)
	if err == nil && a.got == a.n {
		return work + n, agent.ErrDone
	}
	return work + n, err
}

// tutorial:end

// tutorial:begin inprocess
// InProcess runs both agents in this process until the asker is done.
func InProcess(ctx context.Context, n int) (int64, error) {
	adderBox, _ := mailbox.New(mailbox.Config{Name: "adder"})
	askerBox, _ := mailbox.New(mailbox.Config{Name: "asker"})
	reg := message.NewRegistry(nil)
	reg.Register("adder", adderBox)
	self, _ := reg.Register("asker", askerBox)

	adder, err := NewAdder(adderBox, reg)
	if err != nil {
		return 0, err
	}
	asker, err := NewAsker(askerBox, adderBox, self, n)
	if err != nil {
		return 0, err
	}
	g, err := runner.NewGroup([]runner.Member{{Agent: adder}, {Agent: asker}}, runner.StopWhenDone())
	if err != nil {
		return 0, err
	}
	if err := g.Start(ctx); err != nil {
		return 0, err
	}
	<-g.Done() // the asker completed: the group closed the adder too
	return asker.Total, errors.Join(g.Err(), g.Close(ctx))
}

// tutorial:end

// tutorial:begin fx
// WithFx is InProcess wired by fx.
func WithFx(ctx context.Context, n int) (int64, error) {
	var asker *Asker
	app := fx.New(fx.NopLogger,
		dutyfx.Runners,
		fx.Supply(dutyfx.Config{ShutdownOnStop: true}), // the app ends when the asker is done
		dutyfx.Mailbox("adder", mailbox.Config{}),
		dutyfx.Mailbox("asker", mailbox.Config{}),
		fx.Provide(fx.Annotate(func(adder, asker *mailbox.Mailbox) *message.Registry {
			reg := message.NewRegistry(nil)
			reg.Register("adder", adder)
			reg.Register("asker", asker)
			return reg
		}, fx.ParamTags(dutyfx.Named("adder"), dutyfx.Named("asker")))),
		fx.Provide(dutyfx.AsAgent(NewAdder, fx.ParamTags(dutyfx.Named("adder")))),
		fx.Provide(fx.Annotate(func(in, adder *mailbox.Mailbox) (*Asker, error) {
			self, _ := message.AddressOf("asker")
			return NewAsker(in, adder, self, n)
		}, fx.ParamTags(dutyfx.Named("asker"), dutyfx.Named("adder")))),
		dutyfx.Include[*Asker](),
		fx.Populate(&asker),
	)
	if err := app.Start(ctx); err != nil {
		return 0, err
	}
	<-app.Wait()
	return asker.Total, app.Stop(ctx)
}

// tutorial:end

// tutorial:begin processes
// Serve is the adder's process: it creates its mailbox as a file in dir
// and replies through the files there. It runs until ctx ends.
func Serve(ctx context.Context, dir string) error {
	in, file, err := ipc.CreateMailbox(dir, "adder", mailbox.Config{})
	if err != nil {
		return err
	}
	defer file.Close()
	reg := message.NewRegistry(ipc.Dir(dir))
	defer reg.Close()
	adder, err := NewAdder(in, reg)
	if err != nil {
		return err
	}
	r, err := runner.New(adder)
	if err != nil {
		return err
	}
	if err := r.Start(); err != nil {
		return err
	}
	<-ctx.Done()
	return r.Close()
}

// Ask is the asker's process: the same Asker, whose adder mailbox is the
// other process's file. adderProcess starts that process.
func Ask(ctx context.Context, dir string, n int, adderProcess *exec.Cmd) (int64, error) {
	in, file, err := ipc.CreateMailbox(dir, "asker", mailbox.Config{})
	if err != nil {
		return 0, err
	}
	defer file.Close()
	if err := adderProcess.Start(); err != nil {
		return 0, err
	}
	defer func() { adderProcess.Process.Kill(); adderProcess.Wait() }()
	reg := message.NewRegistry(ipc.Dir(dir, ipc.WithWaitForFile()))
	defer reg.Close()
	adderBox, err := reg.Lookup(ctx, mustAddress("adder")) // waits for its file
	if err != nil {
		return 0, err
	}
	asker, err := NewAsker(in, adderBox, mustAddress("asker"), n)
	if err != nil {
		return 0, err
	}
	r, err := runner.New(asker)
	if err != nil {
		return 0, err
	}
	if err := r.Start(); err != nil {
		return 0, err
	}
	select {
	case <-r.Done():
	case <-ctx.Done():
		return 0, errors.Join(ctx.Err(), r.Close())
	}
	return asker.Total, r.Err()
}

func mustAddress(name string) message.Address {
	a, err := message.AddressOf(name)
	if err != nil {
		panic(fmt.Sprintf("address %q: %v", name, err))
	}
	return a
}

// tutorial:end
