// Package natsfx wires natsbridge into a go.uber.org/fx application, in
// a package of its own so that natsbridge does not link fx.
package natsfx

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/fx"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/dutyfx"
	"github.com/dutyrt/duty/mailbox"
	"github.com/dutyrt/duty/natsbridge"
)

// bridgeGroup is the fx value group Module reads Bridge values from.
const bridgeGroup = "duty.natsbridges"

// Direction says which way a Bridge carries messages.
type Direction int

const (
	// Out drains the mailbox and publishes (a natsbridge.Outbound).
	Out Direction = iota
	// In delivers into the mailbox (a natsbridge.Inbound).
	In
)

// Bridge asks Module for one bridge.
type Bridge struct {
	Config    natsbridge.Config
	Mailbox   *mailbox.Mailbox
	Direction Direction
}

// AsBridge annotates a constructor returning a Bridge so that Module builds
// it:
//
//	fx.Provide(natsfx.AsBridge(func(mb *mailbox.Mailbox) natsfx.Bridge { ... }))
func AsBridge(constructor any) any {
	return fx.Annotate(constructor, fx.ResultTags(`group:"`+bridgeGroup+`"`))
}

// connectTimeout bounds Module's construction of each bridge (connecting,
// creating the stream and consumer).
const connectTimeout = 10 * time.Second

// Module builds every Bridge provided with AsBridge and adds the bridges
// to the agents dutyfx.Runners runs (each on its own thread; OnClose on fx
// stop). It provides a *Set to read them. Use it beside dutyfx.Runners.
var Module = fx.Module("duty.natsbridge",
	fx.Provide(newSet),
	fx.Provide(fx.Annotate(func(s *Set) []agent.Agent { return s.agents() },
		fx.ResultTags(`group:"`+dutyfx.AgentGroup+`,flatten"`))),
)

// Set holds the bridges Module built, in the group's order; each has its
// Stats.
type Set struct {
	Outbound []*natsbridge.Outbound
	Inbound  []*natsbridge.Inbound
}

func (s *Set) agents() []agent.Agent {
	var a []agent.Agent
	for _, o := range s.Outbound {
		a = append(a, o)
	}
	for _, in := range s.Inbound {
		a = append(a, in)
	}
	return a
}

type setParams struct {
	fx.In
	Bridges []Bridge `group:"duty.natsbridges"`
}

// newSet builds the bridges; if one fails, those built are closed.
func newSet(p setParams) (*Set, error) {
	s := &Set{}
	for _, b := range p.Bridges {
		ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
		var err error
		switch b.Direction {
		case Out:
			var o *natsbridge.Outbound
			if o, err = natsbridge.NewOutbound(ctx, b.Config, b.Mailbox); err == nil {
				s.Outbound = append(s.Outbound, o)
			}
		case In:
			var in *natsbridge.Inbound
			if in, err = natsbridge.NewInbound(ctx, b.Config, b.Mailbox); err == nil {
				s.Inbound = append(s.Inbound, in)
			}
		default:
			err = fmt.Errorf("%w: %s: direction %d", natsbridge.ErrConfig, b.Config.Name, b.Direction)
		}
		cancel()
		if err != nil {
			for _, a := range s.agents() {
				err = errors.Join(err, a.OnClose())
			}
			return nil, err
		}
	}
	return s, nil
}
