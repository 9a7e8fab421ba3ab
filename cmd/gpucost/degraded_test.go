package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/web"
)

// serveFixture is gpucost serve's HTTP side on the generated history in ClickHouse, reached
// through a proxy the test can pause or cut, with a good run of every provider in the run log
// (so /healthz is ok while the store answers).
type serveFixture struct {
	fx    *anFixture
	proxy *proxy
	cfg   config.Config
	url   string
}

func newServeFixture(t *testing.T, vars map[string]string) *serveFixture {
	t.Helper()
	fx := newAnFixture(t)
	now := time.Now().UTC()
	var runs []schema.ScrapeRun
	for _, p := range config.ProviderNames {
		runs = append(runs, schema.ScrapeRun{RunID: "load-run", Provider: p, StartedAt: now.Add(-time.Minute), FinishedAt: now,
			Status: schema.RunOK, OffersParsed: 10, OffersLoaded: 10})
	}
	if err := fx.Store.RecordRun(context.Background(), runs...); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(fx.DSN)
	if err != nil {
		t.Fatal(err)
	}
	px := newProxy(t, u.Host)
	u.Host = px.ln.Addr().String()
	env := map[string]string{"GPUCOST_CLICKHOUSE_DSN": u.String()}
	for k, v := range vars {
		env[k] = v
	}
	cfg, err := config.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	svc, st, err := newService(cfg, varsEnv(env), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ts := httptest.NewServer(svc.Handler())
	t.Cleanup(ts.Close)
	return &serveFixture{fx: fx, proxy: px, cfg: cfg, url: ts.URL}
}

// varsEnv is a command environment with these variables and discarded output.
func varsEnv(vars map[string]string) env {
	return env{stdout: io.Discard, stderr: io.Discard, getenv: isolated(testState, func(k string) string { return vars[k] })}
}

// get requests path and returns the status, the body and how long the answer took.
func (f *serveFixture) get(t *testing.T, path string) (int, string, time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := http.Get(f.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), time.Since(start)
}

// TestServePausedStoreIs503Quickly pauses ClickHouse under a running gpucost serve (the proxy
// stops forwarding, as a SIGSTOPped server stops answering): the API answers 503 "unavailable"
// within seconds, not after the query deadline, and once it knows, at once; /healthz says
// degraded; the dashboard keeps its last page with a notice; when the store answers again so
// does everything.
func TestServePausedStoreIs503Quickly(t *testing.T) {
	f := newServeFixture(t, map[string]string{"GPUCOST_SERVE_DASHBOARD_REFRESH": "1s"})
	for _, p := range []string{"/api/v1/offers", "/", "/healthz"} {
		if code, body, _ := f.get(t, p); code != http.StatusOK {
			t.Fatalf("GET %s before the pause: %d %.300s", p, code, body)
		}
	}
	f.proxy.setPaused(true)
	code, body, took := f.get(t, "/api/v1/offers?gpu=H100-SXM-80GB")
	t.Logf("paused store: first API request %d in %s", code, took.Round(time.Millisecond))
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "the price store is unavailable") {
		t.Errorf("first request on a paused store: %d %s, want 503 unavailable", code, body)
	}
	if took > 4*time.Second {
		t.Errorf("the first request took %s: want the 503 within about two seconds, not the %s query deadline", took, f.cfg.Serve.QueryTimeout.Std())
	}
	code, _, took = f.get(t, "/api/v1/history?gpu=H100-SXM-80GB")
	t.Logf("paused store: next API request %d in %s", code, took.Round(time.Millisecond))
	if code != http.StatusServiceUnavailable || took > 1500*time.Millisecond {
		t.Errorf("the next request: %d in %s, want 503 within the check's second", code, took)
	}
	time.Sleep(1100 * time.Millisecond) // past the dashboard's refresh and the last check
	deadline := time.Now().Add(10 * time.Second)
	for {
		code, body, took = f.get(t, "/")
		if strings.Contains(body, "did not answer the last refresh") || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != http.StatusOK || !strings.Contains(body, "these prices are from") || !strings.Contains(body, "H100-SXM-80GB") {
		t.Errorf("dashboard on a paused store: %d, want the last page with a notice: %.500s", code, body)
	}
	if took > 4*time.Second {
		t.Errorf("the dashboard took %s on a paused store", took)
	}
	code, body, took = f.get(t, "/healthz")
	for i := 0; i < 20 && !strings.Contains(body, "store_error"); i++ { // its run log is at most 2 s old
		time.Sleep(250 * time.Millisecond)
		code, body, took = f.get(t, "/healthz")
	}
	var h web.Health
	if err := json.Unmarshal([]byte(body), &h); err != nil {
		t.Fatalf("healthz: %v: %s", err, body)
	}
	if code != http.StatusServiceUnavailable || h.Status != "degraded" || !strings.Contains(h.StoreError, "unavailable") || took > 4*time.Second {
		t.Errorf("healthz on a paused store: %d in %s, %+v", code, took, h)
	}

	f.proxy.setPaused(false)
	deadline = time.Now().Add(15 * time.Second)
	for {
		code, body, _ = f.get(t, "/api/v1/offers")
		if code == http.StatusOK || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if code != http.StatusOK {
		t.Errorf("after the pause: %d %s", code, body)
	}
}

// TestServeStorePausedBeforeItsFirstConnection: gpucost serve started while ClickHouse is
// paused (its connection hangs in the driver's handshake, for the DSN's dial_timeout) answers
// the API and the dashboard with a 503 within seconds too.
func TestServeStorePausedBeforeItsFirstConnection(t *testing.T) {
	f := newServeFixture(t, nil)
	f.proxy.setPaused(true)
	for _, p := range []string{"/api/v1/offers", "/", "/api/v1/changes"} {
		code, body, took := f.get(t, p)
		t.Logf("store paused from the start: %s %d in %s", p, code, took.Round(time.Millisecond))
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "unavailable") || took > 4*time.Second {
			t.Errorf("%s: %d in %s, want 503 unavailable within seconds: %.300s", p, code, took, body)
		}
	}
	f.proxy.setPaused(false)
}

// TestServeUnreachableStoreIs503 cuts the connection to ClickHouse (refused, as a stopped
// server): the API answers 503 at once, and a gpucost serve started while the store is down
// answers the dashboard with a 503 page.
func TestServeUnreachableStoreIs503(t *testing.T) {
	f := newServeFixture(t, nil)
	f.proxy.setDown(true)
	for _, p := range []string{"/api/v1/offers", "/api/v1/changes", "/"} {
		code, body, took := f.get(t, p)
		t.Logf("unreachable store: %s %d in %s", p, code, took.Round(time.Millisecond))
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "unavailable") || took > 3*time.Second {
			t.Errorf("%s: %d in %s, want 503 unavailable at once: %.300s", p, code, took, body)
		}
		if strings.Contains(body, "127.0.0.1") {
			t.Errorf("%s: the answer shows the store's address: %.300s", p, body)
		}
	}
}

// TestServeUnderLoad is the load test of gpucost serve: 200 concurrent clients for 20 seconds on
// loopback, a sixth each on the dashboard, /healthz, three API endpoints asked the same question
// (which share their reads) and one asked a different question every time (every request is a
// query of its own, queued by the gate), on a healthy store. No answer may be a 5xx. It logs the
// count and the p50/p99 latency per endpoint (docs/operations.md quotes the figures).
func TestServeUnderLoad(t *testing.T) {
	const clients = 200
	duration := 20 * time.Second
	if testing.Short() {
		duration = 3 * time.Second
	}
	f := newServeFixture(t, nil)
	targets := []string{"/", "/healthz", "/api/v1/offers?gpu=H100-SXM-80GB", "/api/v1/history?gpu=H100-SXM-80GB&since=14d",
		"/api/v1/changes?since=7d&limit=50", "/api/v1/history?gpu=A100-SXM-80GB&since=%dm"}
	var distinct atomic.Int64 // makes every request of the last target a different query
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	type sample struct {
		status int
		took   time.Duration
	}
	results := make([][]sample, len(targets))
	var mu sync.Mutex
	var errs []string
	stop := time.Now().Add(duration)
	var wg sync.WaitGroup
	for i := 0; i < clients; i++ {
		wg.Add(1)
		go func(target int) {
			defer wg.Done()
			var mine []sample
			for time.Now().Before(stop) {
				path := targets[target]
				if strings.Contains(path, "%d") {
					path = fmt.Sprintf(path, 60*24*7+distinct.Add(1))
				}
				start := time.Now()
				resp, err := client.Get(f.url + path)
				if err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				mine = append(mine, sample{resp.StatusCode, time.Since(start)})
			}
			mu.Lock()
			results[target] = append(results[target], mine...)
			mu.Unlock()
		}(i % len(targets))
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Errorf("%d requests failed outright, e.g. %s", len(errs), errs[0])
	}
	total := 0
	for i, rs := range results {
		codes := map[int]int{}
		var took []time.Duration
		for _, r := range rs {
			codes[r.status]++
			took = append(took, r.took)
		}
		sort.Slice(took, func(a, b int) bool { return took[a] < took[b] })
		pct := func(p float64) time.Duration {
			if len(took) == 0 {
				return 0
			}
			return took[min(len(took)-1, int(p*float64(len(took))))]
		}
		total += len(rs)
		t.Logf("%-45s %6d requests (%5.0f/s)  p50 %7s  p99 %7s  max %7s  statuses %v", targets[i], len(rs), float64(len(rs))/duration.Seconds(),
			pct(0.50).Round(100*time.Microsecond), pct(0.99).Round(100*time.Microsecond), pct(1).Round(time.Millisecond), codes)
		for code, n := range codes {
			if code >= 500 {
				t.Errorf("%s: %d answers were %d", targets[i], n, code)
			}
		}
		if len(rs) == 0 {
			t.Errorf("%s: no request finished", targets[i])
		}
	}
	t.Logf("%d clients for %s: %d requests, %.0f/s", clients, duration, total, float64(total)/duration.Seconds())
}
