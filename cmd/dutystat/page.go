package main

import (
	"embed"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"sync"
)

// The live page (-serve): / is a page an operator opens in a browser, one
// row per mailbox, runner, bridge and journal and a percentile
// distribution per latency histogram, updated every second from
// /api/view. Everything it needs is embedded and served here: no build
// step, nothing fetched from elsewhere.

//go:embed page
var pageFiles embed.FS

// pageServer serves the page and its data. Each /api/view request samples
// the directory and computes rates against the previous request's sample.
type pageServer struct {
	dir string
	e   env
	log *slog.Logger

	mu   sync.Mutex
	prev *frame // guarded by mu
}

// register adds the page's handlers to mux.
func (p *pageServer) register(mux *http.ServeMux) {
	static, err := fs.Sub(pageFiles, "page")
	if err != nil {
		panic(err) // the embedded directory is there: go:embed checked it
	}
	mux.Handle("/", http.FileServerFS(static))
	mux.HandleFunc("/api/view", p.view)
}

// view answers the current view of the directory as JSON.
func (p *pageServer) view(w http.ResponseWriter, _ *http.Request) {
	p.mu.Lock()
	f, err := sample(p.dir, p.e, p.prev, 0)
	if err == nil {
		p.prev = &f
	}
	p.mu.Unlock()
	if err != nil {
		p.log.Error("dutystat: page", "dir", p.dir, "err", err)
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err := json.NewEncoder(w).Encode(summarize(&f)); err != nil {
		p.log.Debug("dutystat: page: write", "err", err)
	}
}
