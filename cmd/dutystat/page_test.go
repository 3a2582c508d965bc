package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
)

// chromium returns the path of a Chromium (or Chrome) to drive, or skips
// the test: the browser tests run wherever one is installed (.ci/run
// installs Debian's chromium).
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no Chromium installed (apt-get install chromium): the live page is not tested in a browser")
	return ""
}

// browser starts a headless Chromium with a fresh profile; it stops with
// the test. Errors the page logs (console errors, uncaught exceptions,
// failed loads) are collected: errs returns them.
func browser(t *testing.T) (ctx context.Context, errs func() []string) {
	t.Helper()
	path := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox, // root in CI
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	require.NoError(t, chromedp.Do(ctx)) // starts the browser, for as long as ctx
	var (
		mu   sync.Mutex
		seen []string
	)
	cctx, stop := context.WithCancel(ctx)
	messages := chromedp.Console(cctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				seen = append(seen, m.String()+" ("+m.URL+")")
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		stop()
		<-done
		cancel()
		cancelAlloc()
	})
	return ctx, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

// pageState is what the test reads from the live page.
type pageState struct {
	Updates   int               `json:"updates"`
	Mailboxes map[string]string `json:"mailboxes"` // file/mailbox -> delivered
	Runners   map[string]string `json:"runners"`   // file/runner -> cycles
	Charts    []struct {
		Name   string `json:"name"`
		Drawn  int    `json:"drawn"`  // points of the polyline
		Points int    `json:"points"` // distribution points the page received
	} `json:"charts"`
	State string `json:"state"`
}

const readPage = `(() => {
  const rows = (sel, attr) => Object.fromEntries([...document.querySelectorAll(sel + ' tbody tr')].map(r => [r.dataset.file + '/' + (r.dataset.mailbox || r.dataset.runner), r.dataset[attr]]));
  const view = window.dutystatView || {histograms: []};
  return {
    updates: window.dutystatUpdates || 0,
    mailboxes: rows('#mailboxes', 'delivered'),
    runners: rows('#runners', 'cycles'),
    charts: [...document.querySelectorAll('.chart')].map((c, i) => ({
      name: c.dataset.file + '/' + c.dataset.histogram,
      drawn: c.querySelector('polyline').getAttribute('points').trim().split(/\s+/).filter(Boolean).length,
      points: (view.histograms[i] || {distribution: []}).distribution.length,
    })),
    state: document.getElementById('state').textContent,
  };
})()`

// labelSet returns file/<label> of every series of family name.
func labelSet(fams map[string]*dto.MetricFamily, name, label string) []string {
	var out []string
	for _, m := range fams[name].GetMetric() {
		file, v := "", ""
		for _, l := range m.GetLabel() {
			switch l.GetName() {
			case "file":
				file = l.GetValue()
			case label:
				v = l.GetValue()
			}
		}
		out = append(out, file+"/"+v)
	}
	sort.Strings(out)
	return out
}

// checkPage opens the live page of the server at addr in a real browser
// while the directory's processes run: it loads without errors, shows
// every mailbox and runner the scrape fams has, its values change between
// two reads, and each latency histogram's plot has the histogram's
// points. A screenshot goes to the test's temporary directory (and to
// $DUTYSTAT_SCREENSHOT if set).
func checkPage(t *testing.T, addr string, fams map[string]*dto.MetricFamily) {
	bctx, errs := browser(t)
	ctx, cancel := context.WithTimeout(bctx, 60*time.Second)
	defer cancel()
	poll := func(n int) {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](fmt.Sprintf("(window.dutystatUpdates || 0) >= %d", n), chromedp.WithPollingTimeout(30*time.Second)))
		require.NoError(t, err, "the page updates")
	}
	require.NoError(t, chromedp.Do(ctx, chromedp.EmulateViewport(1400, 1000), chromedp.Navigate("http://"+addr+"/")))
	poll(2)
	first, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](readPage))
	require.NoError(t, err)
	poll(first.Updates + 2)
	second, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](readPage))
	require.NoError(t, err)
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err)
	shot := filepath.Join(t.TempDir(), "dutystat-page.png")
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	if p := os.Getenv("DUTYSTAT_SCREENSHOT"); p != "" {
		require.NoError(t, os.WriteFile(p, png, 0o644))
	}
	t.Logf("screenshot: %s; page: %+v", shot, second)

	require.Empty(t, errs(), "the page logged errors")
	require.Equal(t, "live", second.State)
	var mailboxes, runners []string
	for k := range second.Mailboxes {
		mailboxes = append(mailboxes, k)
	}
	for k := range second.Runners {
		runners = append(runners, k)
	}
	sort.Strings(mailboxes)
	sort.Strings(runners)
	require.Equal(t, labelSet(fams, "duty_mailbox_delivered_messages_total", "mailbox"), mailboxes, "every mailbox of the scrape, one row each")
	require.Equal(t, labelSet(fams, "duty_runner_cycles_total", "runner"), runners, "every runner of the scrape, one row each")
	changed := 0
	for k, v := range second.Mailboxes {
		if first.Mailboxes[k] != v {
			changed++
		}
	}
	for k, v := range second.Runners {
		if first.Runners[k] != v {
			changed++
		}
	}
	require.Positive(t, changed, "the page's values change while the pipeline runs: %+v then %+v", first, second)
	plotted := 0
	for _, c := range second.Charts {
		require.Equal(t, c.Points, c.Drawn, "%s: the plot has every point of the histogram's distribution", c.Name)
		if c.Drawn > 2 {
			plotted++
		}
	}
	var recorded int
	for _, m := range fams["duty_latency_seconds"].GetMetric() {
		if m.GetHistogram().GetSampleCount() > 0 {
			recorded++
		}
	}
	require.Len(t, second.Charts, len(fams["duty_latency_seconds"].GetMetric()), "a plot per latency histogram")
	require.GreaterOrEqual(t, plotted, recorded, "each histogram with values has its percentile distribution plotted")
}
