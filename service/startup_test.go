package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
	"github.com/gpucost/gpucost/web"
)

// startupConfig is the default configuration with the scheduled scrape out of the way (once a
// year), so that only the start-up scrape can run.
func startupConfig(t *testing.T) config.Config {
	t.Helper()
	cfg := defaultConfig(t)
	if !cfg.Serve.ScrapeOnStart {
		t.Fatal("serve.scrape_on_start is off by default; the documented default is on")
	}
	cfg.Serve.ScrapeSchedule = "0 0 1 1 *"
	return cfg
}

// serveInBackground runs srv until the test ends and returns its base URL.
func serveInBackground(t *testing.T, srv *Service) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ln, done := listen(t), make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// waitMetric waits until the series reaches at least want on url's /metrics.
func waitMetric(t *testing.T, url, series string, want float64, within time.Duration) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		m := scrapeMetrics(t, url)
		if m[series] >= want {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is %v after %s, want at least %v", series, m[series], within, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestServeScrapesOnStart: with serve.scrape_on_start (the default) every provider is scraped
// into the store as serve starts, not at the first scheduled time, so /healthz is ok and the
// prices are there within seconds.
func TestServeScrapesOnStart(t *testing.T) {
	st := storetest.Open(t)
	cfg := startupConfig(t)
	srv, err := New(cfg, Deps{
		Open:        func(context.Context) (web.Store, error) { return st, nil },
		StoreErrors: web.StoreErrors{Busy: store.Busy, Refused: store.Refused, Unreachable: store.Unreachable},
		Scrape:      Scrape{Config: pipeline.Config{SpoolDir: t.TempDir()}, Sources: providers(cfg.Scrape.Providers), Sink: st, History: st},
	})
	if err != nil {
		t.Fatal(err)
	}
	url := serveInBackground(t, srv)
	waitMetric(t, url, `gpucost_job_runs_total{job_name="scrape",outcome="ok"}`, 1, 30*time.Second)
	var h web.Health
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(250 * time.Millisecond) { // the run log is at most 2 s old
		if code := getJSON(t, url+"/healthz", &h); (code == http.StatusOK && allRunsOK(h)) || time.Now().After(deadline) {
			break
		}
	}
	if h.Status != "ok" || !allRunsOK(h) || len(h.Providers) != len(cfg.Scrape.Providers) {
		t.Errorf("/healthz after the start-up scrape: %s %+v, want every provider fresh", h.Status, h.Providers)
	}
	if j := h.Jobs["scrape"]; j.LastStatus != "ok" || j.Schedule != "0 0 1 1 *" {
		t.Errorf("the scrape job %+v: want an ok run at start-up, though it is scheduled once a year", j)
	}
	offers, err := st.LatestOffers(context.Background(), schema.OfferFilter{})
	if err != nil || len(offers) != len(cfg.Scrape.Providers) {
		t.Errorf("after the start-up scrape the store has %d offers (%v), want one per provider", len(offers), err)
	}
}

// failing is a provider whose every fetch fails.
type failing string

func (f failing) Name() string { return string(f) }

func (f failing) Fetch(context.Context, schema.Run) (schema.Extract, error) {
	return schema.Extract{Attempts: 1}, errors.New("the pricing page has no price table")
}

// TestServeStartupScrapeFailureIsCountedNotFatal: a start-up scrape that fails is logged and
// counted like any failed run, and serve goes on serving; with scrape_on_start off nothing is
// scraped at start-up.
func TestServeStartupScrapeFailureIsCountedNotFatal(t *testing.T) {
	for _, on := range []bool{true, false} {
		t.Run(fmt.Sprintf("scrape_on_start=%v", on), func(t *testing.T) {
			cfg := startupConfig(t)
			cfg.Serve.ScrapeOnStart = on
			logs := &syncBuffer{}
			srv, err := New(cfg, Deps{
				Open:   func(context.Context) (web.Store, error) { return nil, errors.New("no store in this test") },
				Scrape: Scrape{Config: pipeline.Config{SpoolDir: t.TempDir()}, Sources: []pipeline.Source{failing("coreweave")}, Sink: discard{}, History: discard{}},
				Logger: slog.New(slog.NewJSONHandler(logs, nil)),
			})
			if err != nil {
				t.Fatal(err)
			}
			url := serveInBackground(t, srv)
			if !on {
				time.Sleep(2 * time.Second)
				m := scrapeMetrics(t, url)
				for _, o := range outcomes {
					if v := m[fmt.Sprintf(`gpucost_job_runs_total{job_name="scrape",outcome=%q}`, o)]; v != 0 {
						t.Errorf("scrape_on_start off: %v %s scrapes counted, want none", v, o)
					}
				}
				return
			}
			m := waitMetric(t, url, `gpucost_job_runs_total{job_name="scrape",outcome="failed"}`, 1, 10*time.Second)
			if v := m[`gpucost_job_last_failure_timestamp_seconds{job_name="scrape"}`]; v == 0 {
				t.Error("the failed start-up scrape set no last failure time")
			}
			resp, err := http.Get(url + "/livez")
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("serve after a failed start-up scrape: %v %v", resp, err)
			}
			resp.Body.Close()
			if !strings.Contains(logs.String(), `"msg":"Job failed","job":"scrape","outcome":"failed"`) {
				t.Errorf("the failed start-up scrape was not logged as a failed job:\n%s", logs)
			}
		})
	}
}

// slow is a provider whose fetch takes a while.
type slow struct {
	source
	took time.Duration
}

func (s slow) Fetch(ctx context.Context, r schema.Run) (schema.Extract, error) {
	select {
	case <-time.After(s.took):
	case <-ctx.Done():
		return schema.Extract{}, ctx.Err()
	}
	return s.source.Fetch(ctx, r)
}

// TestServeStartupScrapeAndScheduledOneDoNotOverlap: a scheduled scrape that comes while the
// start-up scrape still runs is skipped, as one that comes while a scheduled scrape runs: no run
// fails on the run lock.
func TestServeStartupScrapeAndScheduledOneDoNotOverlap(t *testing.T) {
	cfg := startupConfig(t)
	cfg.Serve.ScrapeSchedule = "@every 1s"
	srv, err := New(cfg, Deps{
		Open:   func(context.Context) (web.Store, error) { return nil, errors.New("no store in this test") },
		Scrape: Scrape{Config: pipeline.Config{SpoolDir: t.TempDir()}, Sources: []pipeline.Source{slow{source("vastai"), 2500 * time.Millisecond}}, Sink: discard{}, History: discard{}},
	})
	if err != nil {
		t.Fatal(err)
	}
	url := serveInBackground(t, srv)
	m := waitMetric(t, url, `gpucost_job_runs_total{job_name="scrape",outcome="ok"}`, 2, 15*time.Second)
	if v := m[`gpucost_job_runs_total{job_name="scrape",outcome="failed"}`]; v != 0 {
		t.Errorf("%v scrapes failed: a scheduled run overlapped the start-up one and found the run lock taken", v)
	}
}
