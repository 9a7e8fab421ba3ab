package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
)

// runStore is a Store with a run log and no prices or plans.
type runStore struct {
	Reader
	last, good []schema.ScrapeRun
}

var _ Store = runStore{}

func (s runStore) LastRuns(context.Context) ([]schema.ScrapeRun, error)     { return s.last, nil }
func (s runStore) LastGoodRuns(context.Context) ([]schema.ScrapeRun, error) { return s.good, nil }
func (s runStore) SchemaVersion(context.Context) (int, error)               { return 1, nil }

// TestHealthz: /healthz is ok while every provider's last good run is fresh; a stale provider,
// one that never ran well, or a run log that cannot be read make it a 503 "degraded"; the jobs'
// state is reported as the scheduler gives it.
func TestHealthz(t *testing.T) {
	now := time.Date(2026, 2, 2, 12, 0, 0, 0, time.UTC)
	ago := func(d time.Duration) time.Time { return now.Add(-d) }
	run := func(provider string, status schema.RunStatus, finished time.Time) schema.ScrapeRun {
		return schema.ScrapeRun{RunID: "run-" + provider, Provider: provider, Status: status, FinishedAt: finished}
	}
	next := now.Add(time.Hour)
	jobs := map[string]schema.JobState{"scrape": {Schedule: "@hourly", LastStatus: "ok", NextRun: &next}}
	tests := []struct {
		name       string
		open       func(context.Context) (Store, error)
		wantCode   int
		wantStatus string
		wantStale  map[string]bool
		wantErr    bool
	}{
		{"all fresh", func(context.Context) (Store, error) {
			return runStore{last: []schema.ScrapeRun{run("vastai", schema.RunOK, ago(time.Hour)), run("lambda", schema.RunOK, ago(2*time.Hour))},
				good: []schema.ScrapeRun{run("vastai", schema.RunOK, ago(time.Hour)), run("lambda", schema.RunOK, ago(2*time.Hour))}}, nil
		}, http.StatusOK, "ok", map[string]bool{"lambda": false, "vastai": false}, false},
		{"one stale", func(context.Context) (Store, error) {
			return runStore{last: []schema.ScrapeRun{run("vastai", schema.RunFailed, ago(time.Hour)), run("lambda", schema.RunOK, ago(time.Hour))},
				good: []schema.ScrapeRun{run("vastai", schema.RunOK, ago(4*time.Hour)), run("lambda", schema.RunOK, ago(time.Hour))}}, nil
		}, http.StatusServiceUnavailable, "degraded", map[string]bool{"lambda": false, "vastai": true}, false},
		{"one never ran well", func(context.Context) (Store, error) {
			return runStore{last: []schema.ScrapeRun{run("vastai", schema.RunFailed, ago(time.Hour)), run("lambda", schema.RunOK, ago(time.Hour))},
				good: []schema.ScrapeRun{run("lambda", schema.RunOK, ago(time.Hour))}}, nil
		}, http.StatusServiceUnavailable, "degraded", map[string]bool{"lambda": false, "vastai": true}, false},
		{"the store down", func(context.Context) (Store, error) {
			return nil, errors.New("dialing 127.0.0.1:9: connection refused")
		}, http.StatusServiceUnavailable, "degraded", map[string]bool{"lambda": true, "vastai": true}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(Config{Open: tt.open, Jobs: func() map[string]schema.JobState { return jobs },
				Providers: []string{"vastai", "lambda"}, StaleAfter: 3 * time.Hour, QueryTimeout: 5 * time.Second, MaxQueries: 1})
			h.now = func() time.Time { return now }
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/healthz", nil))
			var doc Health
			if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
				t.Fatalf("the body is not the health document: %v: %s", err, rec.Body)
			}
			if rec.Code != tt.wantCode || doc.Status != tt.wantStatus || (doc.StoreError != "") != tt.wantErr {
				t.Errorf("%d %q store_error %q, want %d %q (a store error: %v)", rec.Code, doc.Status, doc.StoreError, tt.wantCode, tt.wantStatus, tt.wantErr)
			}
			stale := map[string]bool{}
			var order []string
			for _, p := range doc.Providers {
				stale[p.Provider] = p.Stale
				order = append(order, p.Provider)
			}
			if diff := cmp.Diff(tt.wantStale, stale); diff != "" {
				t.Errorf("stale providers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"lambda", "vastai"}, order); diff != "" {
				t.Errorf("providers not in name order (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(jobs, doc.Jobs); diff != "" {
				t.Errorf("jobs (-scheduler +healthz):\n%s", diff)
			}
			if doc.StaleAfter != "3h0m0s" || !doc.Time.Equal(now) {
				t.Errorf("stale_after %q, time %s", doc.StaleAfter, doc.Time)
			}
		})
	}
}

// TestProbes: /livez answers 200 whatever the store does; /readyz answers 200 while the store
// answers, stale providers or not, and 503 with the reason within about a second when it
// refuses or hangs; /healthz is the one that a stale provider turns 503.
func TestProbes(t *testing.T) {
	now := time.Now().UTC()
	good := func(provider string, finished time.Time) schema.ScrapeRun {
		return schema.ScrapeRun{RunID: "run-" + provider, Provider: provider, Status: schema.RunOK, FinishedAt: finished}
	}
	fresh := runStore{last: []schema.ScrapeRun{good("vastai", now), good("coreweave", now)}, good: []schema.ScrapeRun{good("vastai", now), good("coreweave", now)}}
	stale := runStore{last: []schema.ScrapeRun{good("vastai", now), good("coreweave", now.Add(-5*time.Hour))},
		good: []schema.ScrapeRun{good("vastai", now), good("coreweave", now.Add(-5*time.Hour))}}
	tests := []struct {
		name                  string
		open                  func(context.Context) (Store, error)
		wantReady, wantHealth int
		wantReason            string
	}{
		{"fresh", func(context.Context) (Store, error) { return fresh, nil }, http.StatusOK, http.StatusOK, ""},
		{"coreweave stale", func(context.Context) (Store, error) { return stale, nil }, http.StatusOK, http.StatusServiceUnavailable, ""},
		{"store refuses", func(context.Context) (Store, error) {
			return nil, errors.New("dialing 127.0.0.1:9: connection refused")
		}, http.StatusServiceUnavailable, http.StatusServiceUnavailable, "the price store is unavailable: dialing 127.0.0.1:9: connection refused"},
		{"store hangs", func(ctx context.Context) (Store, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		}, http.StatusServiceUnavailable, http.StatusServiceUnavailable, "the price store is unavailable: no answer to a check within 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := New(Config{Open: tt.open, Providers: []string{"vastai", "coreweave"}, StaleAfter: 3 * time.Hour, QueryTimeout: 5 * time.Second, MaxQueries: 1})
			get := func(path string) (int, []byte, time.Duration) {
				start := time.Now()
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
				if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("%s: Content-Type %q", path, ct)
				}
				return rec.Code, rec.Body.Bytes(), time.Since(start)
			}
			code, body, _ := get("/livez")
			var live Liveness
			if err := json.Unmarshal(body, &live); err != nil || code != http.StatusOK || live.Status != "ok" {
				t.Errorf("/livez: %d %s (%v), want 200 ok", code, body, err)
			}
			code, body, took := get("/readyz")
			var ready Readiness
			if err := json.Unmarshal(body, &ready); err != nil {
				t.Fatalf("/readyz: %v: %s", err, body)
			}
			wantStatus := map[int]string{http.StatusOK: "ready", http.StatusServiceUnavailable: "unavailable"}[tt.wantReady]
			if code != tt.wantReady || ready.Status != wantStatus || ready.Reason != tt.wantReason {
				t.Errorf("/readyz: %d %+v, want %d %q reason %q", code, ready, tt.wantReady, wantStatus, tt.wantReason)
			}
			if took > 2*time.Second {
				t.Errorf("/readyz took %s: want the answer within the check's second", took)
			}
			if code, body, _ := get("/healthz"); code != tt.wantHealth {
				t.Errorf("/healthz: %d, want %d: %s", code, tt.wantHealth, body)
			}
		})
	}
}
