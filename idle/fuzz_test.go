package idle

import "testing"

func FuzzParse(f *testing.F) {
	for _, s := range []string{"noop", "spin", "spin:64", "yield", "sleep-ns:2000", "sleep-ms:3", "backoff",
		"backoff:10:5:1us:1ms", "backoff:0:0:1:1", "controllable", "sleep-ns:1h", ":::"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		s, err := Parse(spec)
		if err != nil {
			if s != nil {
				t.Fatalf("Parse(%q) returned a strategy and an error", spec)
			}
			return
		}
		again, err := Parse(s.String())
		if err != nil {
			t.Fatalf("Parse(%q).String() = %q does not parse: %v", spec, s.String(), err)
		}
		if again.String() != s.String() || again.Alias() != s.Alias() {
			t.Fatalf("round trip of %q: %q then %q", spec, s.String(), again.String())
		}
	})
}
