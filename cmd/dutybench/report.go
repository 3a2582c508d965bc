package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// Report is the JSON document of a run (docs/workloads.md, "JSON shape").
type Report struct {
	Host      Host             `json:"host,omitzero"`
	Workloads []WorkloadReport `json:"workloads"`
}

// WorkloadReport holds one workload's per-phase figures and ratios.
type WorkloadReport struct {
	Name     string          `json:"name"`
	Unit     string          `json:"unit"`
	Variants []VariantReport `json:"variants"`
	Ratios   []Ratio         `json:"ratios"`
	// Limits are each variant's figures over its C reference's in the
	// same phase (-tags cring).
	Limits []Ratio `json:"limits,omitempty"`
}

// VariantReport holds one variant's figures by phase (aggregate).
type VariantReport struct {
	Name   string                        `json:"name"`
	Phases map[string]map[string]float64 `json:"phases"`
}

// buildReport aggregates a workload's repetitions (in any order) into its
// report, with variants in the workload's order (the baseline first).
func buildReport(w *workload, variantNames []string, reps []repetition) WorkloadReport {
	wr := WorkloadReport{Name: w.name, Unit: w.unit(), Ratios: []Ratio{}}
	for _, name := range variantNames {
		var mine []repetition
		for _, r := range reps {
			if r.Variant == name {
				mine = append(mine, r)
			}
		}
		wr.Variants = append(wr.Variants, VariantReport{Name: name, Phases: aggregate(mine, w.kind == kindLatency)})
	}
	metrics := []string{metricMedian}
	if w.kind == kindLatency {
		metrics = latencyRatioMetrics
	}
	if rs := ratios(wr.Variants, metrics); rs != nil {
		wr.Ratios = rs
	}
	if w.reference == nil {
		return wr
	}
	isRef := map[string]bool{}
	for _, v := range wr.Variants {
		isRef[w.reference(v.Name)] = true
	}
	for _, v := range wr.Variants {
		for _, ref := range wr.Variants {
			if ref.Name == w.reference(v.Name) && !isRef[v.Name] {
				wr.Limits = append(wr.Limits, ratios([]VariantReport{ref, v}, metrics)...)
			}
		}
	}
	return wr
}

func writeJSON(out io.Writer, r Report) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// presentPhases returns the phases any variant of wr has, in report order.
func presentPhases(wr WorkloadReport) []string {
	var out []string
	for _, p := range phaseOrder {
		for _, v := range wr.Variants {
			if _, ok := v.Phases[p]; ok {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// writeTable prints a workload's report as text: for throughput, a row per
// variant with "median [min..max] n=k" and ratios per phase; for latency, a
// block per phase.
func writeTable(out io.Writer, wr WorkloadReport, header string) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\n", header)
	phases := presentPhases(wr)
	if len(wr.Variants) == 0 {
		return tw.Flush()
	}
	base := wr.Variants[0].Name
	withLimit := len(wr.Limits) > 0
	limit := ""
	if wr.Unit == unitNs {
		sets := [][]Ratio{wr.Ratios}
		if withLimit {
			limit, sets = "\tp50/C\tp99.9/C", append(sets, wr.Limits)
		}
		for _, phase := range phases {
			fmt.Fprintf(tw, "phase %s\tn\tp50\tp90\tp99\tp99.9\tmax\tmean\tp50/%s\tp99.9/%s%s\n", phase, base, base, limit)
			for _, v := range wr.Variants {
				m, ok := v.Phases[phase]
				if !ok {
					fmt.Fprintf(tw, "  %s\t0\t-\t-\t-\t-\t-\t-\t\t\n", v.Name)
					continue
				}
				fmt.Fprintf(tw, "  %s\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f\t%.0f", v.Name, m[metricN],
					m[metricP50], m[metricP90], m[metricP99], m[metricP999], m[metricMax], m[metricMean])
				for _, rs := range sets {
					fmt.Fprintf(tw, "\t%s\t%s", ratioCell(rs, v.Name, phase, metricP50), ratioCell(rs, v.Name, phase, metricP999))
				}
				fmt.Fprintln(tw)
			}
		}
		return tw.Flush()
	}
	if withLimit {
		limit = "\tx C"
	}
	fmt.Fprintf(tw, "variant")
	for _, phase := range phases {
		fmt.Fprintf(tw, "\t%s (%s)\tx %s%s", phase, wr.Unit, base, limit)
	}
	fmt.Fprintln(tw)
	for _, v := range wr.Variants {
		fmt.Fprintf(tw, "%s", v.Name)
		for _, phase := range phases {
			m, ok := v.Phases[phase]
			if !ok {
				fmt.Fprintf(tw, "\t-\t%s", limit[:min(len(limit), 1)])
				continue
			}
			fmt.Fprintf(tw, "\t%.1f [%.1f..%.1f] n=%.0f\t%s", m[metricMedian], m[metricMin], m[metricMax], m[metricN],
				ratioCell(wr.Ratios, v.Name, phase, metricMedian))
			if withLimit {
				fmt.Fprintf(tw, "\t%s", ratioCell(wr.Limits, v.Name, phase, metricMedian))
			}
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// ratioCell formats the ratio of variant in phase for metric, "" if none.
func ratioCell(rs []Ratio, variant, phase, metric string) string {
	for _, r := range rs {
		if r.Variant == variant && r.Phase == phase && r.Metric == metric {
			return strings.TrimRight(strings.TrimRight(fmt.Sprintf("%.2f", r.Ratio), "0"), ".") + "x"
		}
	}
	return ""
}
