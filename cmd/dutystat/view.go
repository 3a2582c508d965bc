package main

import (
	"sort"
	"strings"
	"time"

	"github.com/dutyrt/duty/internal/countertype"
)

// A view is a frame as an operator reads it: one row per mailbox, per
// runner, per bridge and per histogram, with the counters that matter as
// columns. dutystat -watch prints it and the live page (page.go) shows it.
type view struct {
	Dir        string         `json:"dir"`
	Time       time.Time      `json:"time"`
	Files      []fileRow      `json:"files"`
	Mailboxes  []mailboxRow   `json:"mailboxes"`
	Runners    []runnerRow    `json:"runners"`
	Bridges    []bridgeRow    `json:"bridges"`
	Histograms []histogramRow `json:"histograms"`
	Journals   []journalRow   `json:"journals"`
}

// fileRow is a file's kind, owner and status.
type fileRow struct {
	Name   string `json:"name"`
	Kind   string `json:"kind"`
	PID    int    `json:"pid,omitempty"`
	Owner  string `json:"owner,omitempty"`
	Status string `json:"status"`
}

// mailboxRow is a mailbox's counters (a mailbox's ten counters in a
// counters file, by their label's subject). Rates are per second against
// the previous sample, nil without one.
type mailboxRow struct {
	File          string   `json:"file"`
	Name          string   `json:"name"`
	Delivered     int64    `json:"delivered"`
	DeliveredRate *float64 `json:"delivered_rate"`
	BytesRate     *float64 `json:"bytes_rate"`
	Depth         int64    `json:"depth_bytes"`
	MaxDepth      int64    `json:"max_depth_bytes"`
	BackPressure  int64    `json:"back_pressure"`
	BackPressRate *float64 `json:"back_pressure_rate"`
	// Lost counts the messages lost, counted: unblocked claims, corrupt
	// records, discarded after Close(Discard).
	Lost          int64 `json:"lost"`
	RefusedClosed int64 `json:"refused_closed"`
}

// runnerRow is a runner's statistics. Busy is the share of its duty
// cycles that did work since the previous sample (nil without one or
// without cycles).
type runnerRow struct {
	File      string   `json:"file"`
	Name      string   `json:"name"`
	Cycles    int64    `json:"cycles"`
	CycleRate *float64 `json:"cycle_rate"`
	WorkRate  *float64 `json:"work_rate"`
	Busy      *float64 `json:"busy"`
	LongestNs int64    `json:"longest_cycle_ns"`
	Errors    int64    `json:"errors"`
}

// bridgeRow is a bridge's events (natsbridge counters), by event name.
type bridgeRow struct {
	File      string           `json:"file"`
	Name      string           `json:"name"`
	Direction string           `json:"direction"`
	Events    map[string]int64 `json:"events"`
}

// histogramRow is a histogram with its percentiles and HdrHistogram's
// percentile distribution (quantiles in percent); Unit is its label's
// time unit ("ns", "us", "ms", "s"), empty for none.
type histogramRow struct {
	File         string       `json:"file"`
	Name         string       `json:"name"`
	Unit         string       `json:"unit"`
	Count        int64        `json:"count"`
	Max          int64        `json:"max"`
	Percentiles  []percentile `json:"percentiles"`
	Distribution []percentile `json:"distribution"`
}

// journalRow is a journal's position and lag.
type journalRow struct {
	Name      string `json:"name"`
	Committed int64  `json:"committed"`
	FlushLag  int64  `json:"flush_lag"`
	Readers   int64  `json:"readers"`
	Status    string `json:"status"`
}

// summarize turns a frame into a view.
func summarize(f *frame) view {
	v := view{Dir: f.Dir, Time: f.Time, Files: []fileRow{}, Mailboxes: []mailboxRow{}, Runners: []runnerRow{},
		Bridges: []bridgeRow{}, Histograms: []histogramRow{}, Journals: []journalRow{}}
	type key struct{ file, name string }
	mailboxes := map[key]*mailboxRow{}
	runners := map[key]*runnerRow{}
	bridges := map[key]*bridgeRow{}
	var cycleRates, idleRates = map[key]*float64{}, map[key]*float64{}
	for _, s := range f.Files {
		v.Files = append(v.Files, fileRow{Name: s.Name, Kind: s.Kind, PID: s.OwnerPID, Owner: s.Owner, Status: s.status()})
		for _, c := range s.Counters {
			k := key{s.Name, subject(c.Label)}
			mb := func() *mailboxRow {
				if mailboxes[k] == nil {
					mailboxes[k] = &mailboxRow{File: k.file, Name: k.name}
				}
				return mailboxes[k]
			}
			rn := func() *runnerRow {
				if runners[k] == nil {
					runners[k] = &runnerRow{File: k.file, Name: k.name}
				}
				return runners[k]
			}
			switch c.TypeID {
			case countertype.Delivered:
				m := mb()
				m.Delivered, m.DeliveredRate = c.Value, c.RatePerSec
			case countertype.ConsumedBytes:
				mb().BytesRate = c.RatePerSec
			case countertype.MailboxDepth:
				mb().Depth = c.Value
			case countertype.MaxDepth:
				mb().MaxDepth = c.Value
			case countertype.BackPressureEvents:
				m := mb()
				m.BackPressure, m.BackPressRate = c.Value, c.RatePerSec
			case countertype.UnblockedClaims, countertype.CorruptRecords, countertype.Discarded:
				mb().Lost += c.Value
			case countertype.RefusedClosed:
				mb().RefusedClosed = c.Value
			case countertype.DutyCycles:
				r := rn()
				r.Cycles, r.CycleRate = c.Value, c.RatePerSec
				cycleRates[k] = c.RatePerSec
			case countertype.IdleCycles:
				rn()
				idleRates[k] = c.RatePerSec
			case countertype.TotalWork:
				rn().WorkRate = c.RatePerSec
			case countertype.LongestCycleNs:
				rn().LongestNs = c.Value
			case countertype.Errors:
				rn().Errors = c.Value
			case countertype.BridgeEvents:
				prefix, rest, _ := strings.Cut(c.Label, ": ")
				name, dir := rest, ""
				if i := strings.LastIndexByte(rest, ' '); i >= 0 {
					name, dir = rest[:i], rest[i+1:]
				}
				bk := key{s.Name, rest}
				if bridges[bk] == nil {
					bridges[bk] = &bridgeRow{File: s.Name, Name: name, Direction: dir, Events: map[string]int64{}}
				}
				bridges[bk].Events[strings.TrimPrefix(prefix, "natsbridge-")] = c.Value
			}
		}
		for _, h := range s.Histograms {
			name, scale := unitSeconds(h.Label)
			unit := ""
			if scale != 0 {
				unit = h.Label[len(name)+1:]
			}
			v.Histograms = append(v.Histograms, histogramRow{File: s.Name, Name: name, Unit: unit, Count: h.Count, Max: h.Max,
				Percentiles: h.Percentiles, Distribution: append([]percentile{}, h.distribution...)})
		}
	}
	for k, r := range runners {
		if c, i := cycleRates[k], idleRates[k]; c != nil && i != nil && *c > 0 {
			busy := min(max(1 - *i / *c, 0), 1)
			r.Busy = &busy
		}
	}
	for _, m := range mailboxes {
		v.Mailboxes = append(v.Mailboxes, *m)
	}
	for _, r := range runners {
		v.Runners = append(v.Runners, *r)
	}
	for _, b := range bridges {
		v.Bridges = append(v.Bridges, *b)
	}
	sort.Slice(v.Mailboxes, func(i, j int) bool {
		return v.Mailboxes[i].File+"\x00"+v.Mailboxes[i].Name < v.Mailboxes[j].File+"\x00"+v.Mailboxes[j].Name
	})
	sort.Slice(v.Runners, func(i, j int) bool {
		return v.Runners[i].File+"\x00"+v.Runners[i].Name < v.Runners[j].File+"\x00"+v.Runners[j].Name
	})
	sort.Slice(v.Bridges, func(i, j int) bool {
		a, b := v.Bridges[i], v.Bridges[j]
		return a.File+"\x00"+a.Name+"\x00"+a.Direction < b.File+"\x00"+b.Name+"\x00"+b.Direction
	})
	for _, j := range f.Journals {
		r := journalRow{Name: j.Name, Status: "ok"}
		if j.Error != "" {
			r.Status = j.Error
		}
		if j.Committed != nil {
			r.Committed = *j.Committed
		}
		if j.FlushLag != nil {
			r.FlushLag = *j.FlushLag
		}
		if j.Readers != nil {
			r.Readers = *j.Readers
		}
		v.Journals = append(v.Journals, r)
	}
	return v
}
