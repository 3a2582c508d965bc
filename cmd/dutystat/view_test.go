package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Durations and sizes for people: three significant figures in the unit
// that fits.
func TestHumanUnits(t *testing.T) {
	for ns, want := range map[float64]string{
		0: "0ns", 850: "850ns", 1000: "1.00µs", 12_345: "12.3µs", 999_499: "999µs",
		4_560_000: "4.56ms", 48_123_000: "48.1ms", 1.5e9: "1.50s", 125e9: "125s",
	} {
		require.Equal(t, want, duration(ns), "%v ns", ns)
	}
	for n, want := range map[int64]string{0: "0B", 1023: "1023B", 4096: "4.0KiB", 3 << 20: "3.0MiB", 5 << 30: "5.0GiB"} {
		require.Equal(t, want, bytesText(n), n)
	}
}
