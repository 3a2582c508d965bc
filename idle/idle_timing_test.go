package idle

import "testing"

// BenchmarkIdleStep is the cost of one idle call of the cheap strategies.
func BenchmarkIdleStep(b *testing.B) {
	for _, s := range []Strategy{NoOp(), BusySpin(), Yielding()} {
		b.Run(s.Alias(), func(b *testing.B) {
			for range b.N {
				s.Idle(0)
			}
		})
	}
	b.Run("backoff-work", func(b *testing.B) {
		s := Backoff()
		for range b.N {
			s.Idle(1)
		}
	})
}
