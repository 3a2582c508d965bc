package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
)

// printView prints a frame for people (-watch): the files, then one row
// per mailbox, runner, bridge and histogram with the counters that matter
// as columns, durations in ns, µs, ms or s, then the error logs and the
// journals. -watch -counters prints printText's per-counter list instead.
func printView(w io.Writer, f *frame) error {
	var b strings.Builder
	if err := printFiles(&b, f); err != nil {
		return err
	}
	v := summarize(f)
	table := func(header string, rows [][]string) error {
		if len(rows) == 0 {
			return nil
		}
		b.WriteByte('\n')
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, header+"\t")
		for _, r := range rows {
			fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
		}
		return tw.Flush()
	}
	var rows [][]string
	for _, m := range v.Mailboxes {
		rows = append(rows, []string{printable(m.Name), printable(m.File), rate(m.DeliveredRate), byteRate(m.BytesRate),
			bytesText(m.Depth), bytesText(m.MaxDepth), rate(m.BackPressRate), strconv.FormatInt(m.BackPressure, 10),
			strconv.FormatInt(m.Lost, 10), strconv.FormatInt(m.RefusedClosed, 10)})
	}
	if err := table("MAILBOX\tFILE\tMSG/S\tBYTES/S\tDEPTH\tMAX-DEPTH\tBACKPR/S\tBACKPR\tLOST\tREFUSED-CLOSED", rows); err != nil {
		return err
	}
	rows = nil
	for _, r := range v.Runners {
		busy := "-"
		if r.Busy != nil {
			busy = strconv.FormatFloat(*r.Busy*100, 'f', 1, 64) + "%"
		}
		rows = append(rows, []string{printable(r.Name), printable(r.File), busy, rate(r.CycleRate), rate(r.WorkRate),
			duration(float64(r.LongestNs)), strconv.FormatInt(r.Errors, 10)})
	}
	if err := table("RUNNER\tFILE\tBUSY\tCYCLES/S\tWORK/S\tLONGEST-CYCLE\tERRORS", rows); err != nil {
		return err
	}
	rows = nil
	for _, br := range v.Bridges {
		ev := func(k string) string { return strconv.FormatInt(br.Events[k], 10) }
		rows = append(rows, []string{printable(br.Name), printable(br.Direction), printable(br.File), ev("published"), ev("batched"),
			ev("delivered"), ev("dropped"), ev("lost-messages"), ev("rejected"), ev("reconnects")})
	}
	if err := table("BRIDGE\tDIR\tFILE\tPUBLISHED\tBATCHED\tDELIVERED\tDROPPED\tLOST\tREJECTED\tRECONNECTS", rows); err != nil {
		return err
	}
	rows = nil
	for _, h := range v.Histograms {
		_, scale := unitSeconds(h.Name + " " + h.Unit)
		value := func(x int64) string {
			if scale == 0 {
				return strconv.FormatInt(x, 10)
			}
			return duration(float64(x) * scale * 1e9)
		}
		r := []string{printable(h.Name), printable(h.File), strconv.FormatInt(h.Count, 10)}
		for _, p := range h.Percentiles {
			r = append(r, value(p.Value))
		}
		rows = append(rows, append(r, value(h.Max)))
	}
	if err := table("HISTOGRAM\tFILE\tCOUNT\tP50\tP90\tP99\tP99.9\tMAX", rows); err != nil {
		return err
	}
	if err := printErrorLogs(&b, f); err != nil {
		return err
	}
	if err := printJournals(&b, f.Journals); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// rate formats a rate per second, "-" without one.
func rate(r *float64) string {
	if r == nil {
		return "-"
	}
	return strconv.FormatFloat(*r, 'f', 0, 64)
}

// byteRate formats bytes per second.
func byteRate(r *float64) string {
	if r == nil {
		return "-"
	}
	return bytesText(int64(*r))
}

// bytesText formats a byte count in B, KiB, MiB or GiB.
func bytesText(n int64) string {
	const k = 1024
	switch a := max(n, -n); {
	case a < k:
		return strconv.FormatInt(n, 10) + "B"
	case a < k*k:
		return strconv.FormatFloat(float64(n)/k, 'f', 1, 64) + "KiB"
	case a < k*k*k:
		return strconv.FormatFloat(float64(n)/(k*k), 'f', 1, 64) + "MiB"
	}
	return strconv.FormatFloat(float64(n)/(k*k*k), 'f', 1, 64) + "GiB"
}

// duration formats ns nanoseconds in ns, µs, ms or s, with three
// significant figures.
func duration(ns float64) string {
	a := max(ns, -ns)
	switch {
	case a < 1e3:
		return strconv.FormatFloat(ns, 'f', 0, 64) + "ns"
	case a < 1e6:
		return sig3(ns/1e3) + "µs"
	case a < 1e9:
		return sig3(ns/1e6) + "ms"
	}
	return sig3(ns/1e9) + "s"
}

// sig3 formats x (1 <= |x| < 1000) with three significant figures.
func sig3(x float64) string {
	a := max(x, -x)
	switch {
	case a < 10:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case a < 100:
		return strconv.FormatFloat(x, 'f', 1, 64)
	}
	return strconv.FormatFloat(x, 'f', 0, 64)
}
