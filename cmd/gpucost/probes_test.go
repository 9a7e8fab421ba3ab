package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/web"
)

// TestServeProbesStaleProviderVersusStoreDown is the case of issue 18: CoreWeave changes its
// pricing page, so its scrapes fail and its prices go stale. gpucost serve stays ready (/readyz
// 200, the API answers) while /healthz reports CoreWeave stale with a 503; only ClickHouse
// paused or down makes /readyz a 503, and /livez answers 200 throughout.
func TestServeProbesStaleProviderVersusStoreDown(t *testing.T) {
	f := newServeFixture(t, map[string]string{"GPUCOST_SERVE_STALE_AFTER": "3s"})
	// The fixture stored a good run of every provider just now. Once those are older than
	// serve.stale_after, every provider but CoreWeave has another good run, and CoreWeave a
	// failed one.
	time.Sleep(3500 * time.Millisecond)
	now := time.Now().UTC()
	var runs []schema.ScrapeRun
	for _, p := range f.cfg.Scrape.Providers {
		r := schema.ScrapeRun{RunID: "later-run", Provider: p, StartedAt: now.Add(-time.Second), FinishedAt: now, Status: schema.RunOK, OffersParsed: 10, OffersLoaded: 10}
		if p == "coreweave" {
			r.Status, r.OffersLoaded, r.Error = schema.RunFailed, 0, "parsing the pricing page: no price table found"
		}
		runs = append(runs, r)
	}
	if err := f.fx.Store.RecordRun(context.Background(), runs...); err != nil {
		t.Fatal(err)
	}

	var h web.Health
	code := 0
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		var body string
		code, body, _ = f.get(t, "/healthz") // its run log is at most 2 s old
		if err := json.Unmarshal([]byte(body), &h); err != nil {
			t.Fatalf("/healthz: %v: %s", err, body)
		}
		if len(staleProviders(h)) == 1 {
			break
		}
	}
	if got := staleProviders(h); code != http.StatusServiceUnavailable || h.Status != "degraded" || len(got) != 1 || got[0] != "coreweave" {
		t.Errorf("/healthz with CoreWeave stale: %d %s, stale %v; want 503 degraded, stale [coreweave]", code, h.Status, got)
	}
	wantProbe(t, f, "/readyz", http.StatusOK, "ready", "", 2*time.Second)
	wantProbe(t, f, "/livez", http.StatusOK, "ok", "", time.Second)
	if code, body, _ := f.get(t, "/api/v1/offers?gpu=H100-SXM-80GB"); code != http.StatusOK {
		t.Errorf("the API with CoreWeave stale: %d %.300s, want 200", code, body)
	}

	// ClickHouse paused (SIGSTOP): the check gets no answer within its second.
	f.proxy.setPaused(true)
	wantProbe(t, f, "/readyz", http.StatusServiceUnavailable, "unavailable", "no answer to a check within 1s", 4*time.Second)
	wantProbe(t, f, "/livez", http.StatusOK, "ok", "", time.Second)
	f.proxy.setPaused(false)
	waitReady(t, f)

	// ClickHouse down: connections are refused.
	f.proxy.setDown(true)
	wantProbe(t, f, "/readyz", http.StatusServiceUnavailable, "unavailable", "the price store is unavailable: ", 4*time.Second)
	wantProbe(t, f, "/livez", http.StatusOK, "ok", "", time.Second)
	f.proxy.setDown(false)
	waitReady(t, f)
}

// TestServeProbesStorePausedBeforeItsFirstConnection: gpucost serve started while ClickHouse is
// paused (its first connection hangs in the driver's handshake) is alive and not ready, and
// says so within seconds.
func TestServeProbesStorePausedBeforeItsFirstConnection(t *testing.T) {
	f := newServeFixture(t, nil)
	f.proxy.setPaused(true)
	wantProbe(t, f, "/readyz", http.StatusServiceUnavailable, "unavailable", "no answer to a check", 4*time.Second)
	wantProbe(t, f, "/livez", http.StatusOK, "ok", "", time.Second)
	f.proxy.setPaused(false)
	waitReady(t, f)
}

// staleProviders lists the providers /healthz reports stale.
func staleProviders(h web.Health) []string {
	var out []string
	for _, p := range h.Providers {
		if p.Stale {
			out = append(out, p.Provider)
		}
	}
	return out
}

// wantProbe checks that a probe answers code with a JSON status and a reason that contains
// reason within the given time: it asks again until it does or the time is up (a check's
// answer holds for a second, so a change of the store shows in the next second's).
func wantProbe(t *testing.T, f *serveFixture, path string, code int, status, reason string, within time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		got, body, _ := f.get(t, path)
		var doc web.Readiness
		if err := json.Unmarshal([]byte(body), &doc); err != nil {
			t.Errorf("%s: %v: %s", path, err, body)
			return
		}
		ok := got == code && doc.Status == status && strings.Contains(doc.Reason, reason) && (reason == "") == (doc.Reason == "")
		took := time.Since(start)
		if ok || took > within {
			t.Logf("%s: %d after %s: %s", path, got, took.Round(time.Millisecond), strings.Join(strings.Fields(body), " "))
			if !ok {
				t.Errorf("%s: %d %+v after %s, want %d %q with a reason containing %q within %s", path, got, doc, took, code, status, reason, within)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitReady waits until /readyz answers 200 again.
func waitReady(t *testing.T, f *serveFixture) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, body, _ := f.get(t, "/readyz")
		if code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz did not come back once ClickHouse answered again: %d %s", code, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
