package mailbox_test

import (
	"context"
	"testing"

	"github.com/dutyrt/duty/internal/buildtags"
	"github.com/dutyrt/duty/mailbox"
	"github.com/stretchr/testify/require"
)

// Send, claim and drain allocate nothing per message, in every form.
func TestNoAllocations(t *testing.T) {
	mb, err := mailbox.New(mailbox.Config{})
	require.NoError(t, err)
	s := mb.NewSender()
	small := make([]byte, 32)
	big := make([]byte, 20000)
	parts := [][]byte{small, small, big}
	lengths := []int{8, 16}
	var sink int
	h := func(m *mailbox.Message) mailbox.Action {
		for _, p := range m.Parts() {
			sink += len(p)
		}
		return mailbox.Continue
	}
	drain := func() {
		if _, err := mb.Drain(h, 100); err != nil {
			t.Fatal(err)
		}
	}
	ok := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	cases := []struct {
		name string
		f    func()
	}{
		{"Send", func() { ok(mb.Send(1, small)) }},
		{"Send/fragmented", func() { ok(mb.Send(1, big)) }},
		{"Sender.Send/fragmented", func() { ok(s.Send(1, big)) }},
		{"SendParts/inline", func() { ok(mb.SendParts(1, small, small)) }},
		{"SendParts/slice", func() { ok(s.SendParts(1, parts...)) }},
		{"SendContext", func() { ok(mb.SendContext(ctx, 1, small)) }},
		{"Sender.SendContext", func() { ok(s.SendContext(ctx, 1, big)) }},
		{"Claim", func() {
			c, err := mb.Claim(1, 32)
			ok(err)
			c.Payload()[0] = 1
			ok(c.Commit())
		}},
		{"ClaimParts", func() {
			c, err := s.ClaimParts(1, lengths...)
			ok(err)
			c.Part(1)[0] = 1
			ok(c.Commit())
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.f()
			drain() // grow the reassembly buffers once
			allocs := testing.AllocsPerRun(200, func() {
				c.f()
				drain()
			})
			require.Zero(t, allocs)
		})
	}

	t.Run("refusals", func(t *testing.T) {
		for mb.Send(1, big) == nil {
		}
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		allocs := testing.AllocsPerRun(200, func() {
			if mb.Send(1, big) != mailbox.ErrBackPressured || s.SendContext(cancelled, 1, big) != context.Canceled {
				t.Fatal("expected back-pressure")
			}
		})
		require.Zero(t, allocs)
		if !buildtags.Race { // sync.Pool drops items at random under -race
			allocs = testing.AllocsPerRun(200, func() {
				if mb.SendContext(cancelled, 1, big) != context.Canceled {
					t.Fatal("expected back-pressure")
				}
			})
			require.Zero(t, allocs)
		}
		drain()
		drain()
	})

	t.Run("Actor.DoWork", func(t *testing.T) {
		a, err := mailbox.NewActor("a", mb, h)
		require.NoError(t, err)
		allocs := testing.AllocsPerRun(1000, func() {
			ok(mb.Send(1, small))
			if _, err := a.DoWork(); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs)
	})
	t.Log(sink)
}
