package web

import (
	"context"
	"net/http"
	"sort"
	"time"

	"github.com/gpucost/gpucost/schema"
)

// healthzRefresh is how often /healthz reads the run log at most.
const healthzRefresh = 2 * time.Second

// Liveness is the /livez document.
type Liveness struct {
	Status string `json:"status"` // always ok
}

// Readiness is the /readyz document.
type Readiness struct {
	Status string `json:"status"`           // ready or unavailable
	Reason string `json:"reason,omitempty"` // why it is unavailable
}

// livez serves /livez: the process answers.
func (h *Handler) livez(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, Liveness{Status: "ok"})
}

// readyz serves /readyz: the store answers the gate's liveness check, which every request in
// flight shares and whose answer holds for storeProbeFresh, so probes add at most one trivial
// query a second however often they come.
func (h *Handler) readyz(w http.ResponseWriter, r *http.Request) {
	var err error
	select {
	case err = <-h.gate.check(r.Context()):
	case <-r.Context().Done():
		return // the prober has gone: nobody reads an answer
	}
	if err != nil {
		writeJSON(w, http.StatusServiceUnavailable, Readiness{Status: "unavailable", Reason: errStoreUnavailable.Error() + ": " + err.Error()})
		return
	}
	writeJSON(w, http.StatusOK, Readiness{Status: "ready"})
}

// Health is the /healthz document. Its status is "degraded", and the answer a 503, when a
// provider's last good run is older than Config.StaleAfter (or it has none yet) or the run log
// cannot be read. It is for people and alerting, not a probe: see /readyz.
type Health struct {
	Status     string                     `json:"status"` // ok or degraded
	Time       time.Time                  `json:"time"`
	StaleAfter string                     `json:"stale_after"`
	Providers  []ProviderHealth           `json:"providers"`
	Jobs       map[string]schema.JobState `json:"jobs"`
	StoreError string                     `json:"store_error,omitempty"`
}

// ProviderHealth is one provider in the /healthz document: its last run and its last good run.
type ProviderHealth struct {
	Provider        string     `json:"provider"`
	LastRun         string     `json:"last_run,omitempty"`
	LastStatus      string     `json:"last_status,omitempty"`
	LastFinished    *time.Time `json:"last_finished,omitempty"`
	LastError       string     `json:"last_error,omitempty"`
	LastGoodRun     string     `json:"last_good_run,omitempty"`
	LastGoodAt      *time.Time `json:"last_good_at,omitempty"`
	StalenessSecond float64    `json:"staleness_seconds"`
	Stale           bool       `json:"stale"`
}

// healthz serves /healthz. The run log is read through the gate at most every healthzRefresh,
// however often /healthz is asked.
func (h *Handler) healthz(w http.ResponseWriter, r *http.Request) {
	now := h.now().UTC()
	doc := Health{Status: "ok", Time: now, StaleAfter: h.cfg.StaleAfter.String(), Jobs: map[string]schema.JobState{}}
	if h.cfg.Jobs != nil {
		if jobs := h.cfg.Jobs(); jobs != nil {
			doc.Jobs = jobs
		}
	}
	runs, _, _, err := h.runLog.get(r.Context())
	if err != nil {
		doc.Status, doc.StoreError = "degraded", err.Error()
	}
	last, good := runs.last, runs.good
	for _, p := range h.cfg.Providers {
		ph := ProviderHealth{Provider: p, Stale: true}
		if r, ok := last[p]; ok {
			fin := r.FinishedAt
			ph.LastRun, ph.LastStatus, ph.LastFinished, ph.LastError = r.RunID, string(r.Status), &fin, r.Error
		}
		if r, ok := good[p]; ok {
			fin := r.FinishedAt
			ph.LastGoodRun, ph.LastGoodAt = r.RunID, &fin
			ph.StalenessSecond = now.Sub(fin).Seconds()
			ph.Stale = now.Sub(fin) > h.cfg.StaleAfter
		}
		if ph.Stale {
			doc.Status = "degraded"
		}
		doc.Providers = append(doc.Providers, ph)
	}
	sort.Slice(doc.Providers, func(i, j int) bool { return doc.Providers[i].Provider < doc.Providers[j].Provider })
	code := http.StatusOK
	if doc.Status != "ok" {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, doc)
}

// runLog is the last run and the last good run of each provider.
type runLog struct {
	last, good map[string]schema.ScrapeRun
}

// lastRuns reads the run log through the gate (runLog's load).
func (h *Handler) lastRuns(ctx context.Context) (runLog, error) {
	var runs, goods []schema.ScrapeRun
	err := h.gate.do(ctx, func(ctx context.Context) error {
		st, err := h.cfg.Open(ctx)
		if err != nil {
			return err
		}
		if runs, err = st.LastRuns(ctx); err != nil {
			return err
		}
		goods, err = st.LastGoodRuns(ctx)
		return err
	})
	if err != nil {
		return runLog{}, err
	}
	l := runLog{last: map[string]schema.ScrapeRun{}, good: map[string]schema.ScrapeRun{}}
	for _, r := range runs {
		l.last[r.Provider] = r
	}
	for _, r := range goods {
		l.good[r.Provider] = r
	}
	return l, nil
}
