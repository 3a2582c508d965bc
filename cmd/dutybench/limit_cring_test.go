//go:build cring

package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// Built with the C reference, a W1 and W3 run brings the references along
// and reports every figure as a ratio to its reference too.
func TestRunReportsTheLimit(t *testing.T) {
	var out, errOut bytes.Buffer
	err := run([]string{"-w", "w1,w3", "-n", "20000", "-reps", "1", "-warmup", "0", "-json", "-variants", "chan,onetoone-write,manytoone-write,batch16,onetoone"}, &out, &errOut)
	require.NoError(t, err, errOut.String())
	var r Report
	require.NoError(t, json.Unmarshal(out.Bytes(), &r))
	require.NotEmpty(t, r.Host.Hypervisor)
	refs := map[string]map[string]string{}
	for _, wr := range r.Workloads {
		refs[wr.Name] = map[string]string{}
		for _, l := range wr.Limits {
			refs[wr.Name][l.Variant] = l.Baseline
		}
	}
	// A phase lands in the limits only when variant and reference share
	// it: a mixed repetition has none, so only check what is there.
	for v, ref := range refs["w1"] {
		want := map[string]string{"batch16": "cring-batch16", "manytoone-write": "cring-cas"}[v]
		if want == "" {
			want = "cring-write"
		}
		require.Equal(t, want, ref, v)
	}
	for _, ref := range refs["w3"] {
		require.Equal(t, "cring-pingpong", ref)
	}
	names := func(i int) (out []string) {
		for _, v := range r.Workloads[i].Variants {
			out = append(out, v.Name)
		}
		return out
	}
	require.Equal(t, []string{"chan", "onetoone-write", "manytoone-write", "batch16", "cring-write", "cring-batch16", "cring-cas"}, names(0))
	require.Equal(t, []string{"chan", "onetoone", "cring-pingpong"}, names(1))
}
