package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSelectWorkloads(t *testing.T) {
	ws, err := selectWorkloads("")
	require.NoError(t, err)
	require.Equal(t, registry, ws)

	ws, err = selectWorkloads("w3, W1,w3")
	require.NoError(t, err)
	require.Equal(t, []*workload{findWorkload("w3"), findWorkload("w1")}, ws)

	_, err = selectWorkloads("w1,w9")
	require.ErrorIs(t, err, errUnknownWorkload)
	require.ErrorContains(t, err, `"w9"`)
	_, err = selectWorkloads(",")
	require.ErrorIs(t, err, errUnknownWorkload)
}

func TestParseFlags(t *testing.T) {
	o, err := parseFlags([]string{"-w", "w1,w3", "-n", "1000", "-reps", "2", "-warmup", "0", "-json", "-variants", "chan,onetoone"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 1000, o.n)
	require.Equal(t, 2, o.reps)
	require.Equal(t, 0, o.warmup)
	require.True(t, o.json)
	require.Equal(t, map[string]bool{"chan": true, "onetoone": true}, o.variants)

	o, err = parseFlags(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 0, o.reps, "workload defaults")
	require.Equal(t, 3, o.warmup)
	require.True(t, o.lock)
	require.True(t, o.pin)

	_, err = parseFlags([]string{"-w", "w4x"}, io.Discard)
	require.ErrorIs(t, err, errUnknownWorkload)
	_, err = parseFlags([]string{"-w", "w2", "-variants", "onetoone"}, io.Discard)
	require.ErrorIs(t, err, errUnknownVariant)
	_, err = parseFlags([]string{"-reps", "-1"}, io.Discard)
	require.Error(t, err)
	_, err = parseFlags([]string{"extra"}, io.Discard)
	require.Error(t, err)
}
