package main

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// dashboardPath is the Grafana dashboard of docs/operations.md.
const dashboardPath = "../../docs/grafana/duty.json"

// dashboard is what the tests read of a Grafana dashboard.
type dashboard struct {
	Title      string `json:"title"`
	UID        string `json:"uid"`
	Templating struct {
		List []struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int    `json:"id"`
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
}

// readDashboard reads the dashboard and returns it with every query it
// makes: the panels' expressions and the variables' definitions.
func readDashboard(t *testing.T) (dashboard, []string) {
	t.Helper()
	b, err := os.ReadFile(dashboardPath)
	require.NoError(t, err)
	var d dashboard
	require.NoError(t, json.Unmarshal(b, &d))
	var queries []string
	for _, v := range d.Templating.List {
		if v.Type == "query" {
			queries = append(queries, v.Definition)
		}
	}
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			queries = append(queries, tg.Expr)
		}
	}
	return d, queries
}

// The dashboard is importable as it is: valid JSON, a title and uid,
// unique panel ids, every query panel on the datasource variable with an
// expression for each target.
func TestDashboardIsImportable(t *testing.T) {
	d, queries := readDashboard(t)
	require.NotEmpty(t, d.Title)
	require.NotEmpty(t, d.UID)
	ids := map[int]bool{}
	for _, p := range d.Panels {
		require.False(t, ids[p.ID], "panel id %d twice", p.ID)
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		require.NotNil(t, p.Datasource, p.Title)
		require.Equal(t, "${datasource}", p.Datasource.UID, p.Title)
		require.NotEmpty(t, p.Targets, p.Title)
		for _, tg := range p.Targets {
			require.NotEmpty(t, tg.Expr, p.Title)
		}
	}
	require.NotEmpty(t, queries)
}

// metricRef is a metric name in a query.
var metricRef = regexp.MustCompile(`\bduty_[a-z0-9_]+`)

// checkDashboard: every metric a query of the dashboard names is in the
// scrape fams (a histogram's or summary's _bucket, _count and _sum series
// by its family), and every one of dutystat's metric names the query uses
// exists.
func checkDashboard(t *testing.T, fams map[string]*dto.MetricFamily) {
	t.Helper()
	_, queries := readDashboard(t)
	for _, q := range queries {
		names := metricRef.FindAllString(q, -1)
		require.NotEmpty(t, names, "a query that names no duty metric: %s", q)
		for _, name := range names {
			if _, ok := fams[name]; ok {
				continue
			}
			found := false
			for _, suffix := range []string{"_bucket", "_count", "_sum"} {
				if f, ok := fams[strings.TrimSuffix(name, suffix)]; ok && strings.HasSuffix(name, suffix) &&
					(f.GetType() == dto.MetricType_HISTOGRAM || f.GetType() == dto.MetricType_SUMMARY) {
					found = true
				}
			}
			require.True(t, found, "the dashboard queries %s, which a scrape of the demo does not have: %s", name, q)
		}
	}
}
