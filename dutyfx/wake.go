package dutyfx

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dutyrt/duty/agent"
	"github.com/dutyrt/duty/idle"
	"github.com/dutyrt/duty/mailbox"
)

// parseIdle is idle.Parse, and "wake" ("wake:SPINS:MAXSLEEP", either part
// optional) for mailbox.NewWakeIdle over the mailboxes a drains: those of
// an agent with a Mailbox() or Mailboxes() method (a mailbox.Actor has
// the first), and of each agent of a Composite (Agents()). An agent with
// a NextDeadline() time.Time method (a feed's next tick, a timer) ends
// each sleep by it. A "wake" agent that drains no mailbox and keeps no
// deadline is refused: it would sleep through its work.
func parseIdle(spec string, a agent.Agent) (idle.Strategy, error) {
	if spec != "wake" && !strings.HasPrefix(spec, "wake:") {
		return idle.Parse(spec)
	}
	var cfg mailbox.WakeConfig
	parts := strings.Split(spec, ":")
	if len(parts) > 3 {
		return nil, fmt.Errorf("idle spec %q: want wake[:SPINS[:MAXSLEEP]]", spec)
	}
	if len(parts) > 1 && parts[1] != "" {
		n, err := strconv.Atoi(parts[1])
		if err != nil || n < 1 {
			return nil, fmt.Errorf("idle spec %q: spins %q: want a count of at least 1", spec, parts[1])
		}
		cfg.Spins = n
	}
	if len(parts) > 2 && parts[2] != "" {
		d, err := time.ParseDuration(parts[2])
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("idle spec %q: max sleep %q: want a positive duration", spec, parts[2])
		}
		cfg.MaxSleep = d
	}
	mbs, deadlines := drained(a, nil, nil)
	if len(mbs) == 0 && len(deadlines) == 0 {
		return nil, fmt.Errorf("idle spec %q: agent %s drains no mailbox and keeps no deadline to wake it", spec, a.RoleName())
	}
	if len(deadlines) > 0 {
		cfg.Deadline = func() time.Time {
			var first time.Time
			for _, d := range deadlines {
				if t := d(); !t.IsZero() && (first.IsZero() || t.Before(first)) {
					first = t
				}
			}
			return first
		}
	}
	return mailbox.NewWakeIdle(cfg, mbs...)
}

// drained collects the mailboxes a drains and the deadlines it keeps.
func drained(a agent.Agent, mbs []*mailbox.Mailbox, deadlines []func() time.Time) ([]*mailbox.Mailbox, []func() time.Time) {
	switch v := a.(type) {
	case interface{ Mailboxes() []*mailbox.Mailbox }:
		mbs = append(mbs, v.Mailboxes()...)
	case interface{ Mailbox() *mailbox.Mailbox }:
		mbs = append(mbs, v.Mailbox())
	}
	if d, ok := a.(interface{ NextDeadline() time.Time }); ok {
		deadlines = append(deadlines, d.NextDeadline)
	}
	if c, ok := a.(interface{ Agents() []agent.Agent }); ok {
		for _, m := range c.Agents() {
			mbs, deadlines = drained(m, mbs, deadlines)
		}
	}
	return mbs, deadlines
}
