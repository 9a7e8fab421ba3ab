package service

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
	"github.com/gpucost/gpucost/web"
)

func TestServeRunsJobsSurvivesPanicsAndStopsOnSIGTERM(t *testing.T) {
	st := storetest.Open(t)
	cfg := defaultConfig(t)
	cfg.Serve.ScrapeSchedule = "@every 1s"
	cfg.Serve.ShutdownGrace = config.Duration(20 * time.Second)
	logs := &syncBuffer{}
	srv, err := New(cfg, Deps{
		Open:        func(context.Context) (web.Store, error) { return st, nil },
		StoreErrors: web.StoreErrors{Busy: store.Busy, Refused: store.Refused, Unreachable: store.Unreachable},
		Scrape:      Scrape{Config: pipeline.Config{SpoolDir: t.TempDir()}, Sources: providers(cfg.Scrape.Providers), Sink: st, History: st},
		Logger:      slog.New(slog.NewJSONHandler(logs, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	var panics atomic.Int32
	if err := srv.Schedule("boom", "@every 1s", func(context.Context) (Result, error) {
		panics.Add(1)
		panic("boom")
	}); err != nil {
		t.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()

	// Wait until every provider has a good run and the panicking job has run twice.
	var h web.Health
	deadline := time.Now().Add(30 * time.Second)
	for {
		code := getJSON(t, base+"/healthz", &h)
		if code == http.StatusOK && h.Status == "ok" && panics.Load() >= 2 && h.Jobs["boom"].LastStatus == "panicked" &&
			h.Jobs["scrape"].LastStatus == "ok" && allRunsOK(h) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("healthz never became ok with two panics seen (last %d): %+v\nlogs:\n%s", code, h, logs)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(h.Providers) != len(cfg.Scrape.Providers) {
		t.Fatalf("healthz lists %d providers, want the %d configured: %+v", len(h.Providers), len(cfg.Scrape.Providers), h.Providers)
	}
	for _, p := range h.Providers {
		if p.Stale || p.LastStatus != "ok" || p.LastGoodAt == nil || p.StalenessSecond > 30 {
			t.Errorf("provider health %+v, want a fresh ok run", p)
		}
	}
	if j := h.Jobs["scrape"]; j.LastStatus != "ok" || j.NextRun == nil {
		t.Errorf("scrape job state %+v", j)
	}
	if !strings.Contains(logs.String(), "panic") {
		t.Errorf("the panicking job was not logged:\n%s", logs)
	}

	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`gpucost_scrape_runs_total{provider="vastai",status="ok"}`,
		`gpucost_scrape_offers_loaded_total{provider="coreweave"}`,
		`gpucost_scrape_last_success_timestamp_seconds{provider="lambda"}`,
		`gpucost_scrape_http_attempts_total{provider="runpod"}`,
		`gpucost_scrape_duration_seconds_bucket{provider="vastai"`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if metricValue(string(body), `gpucost_scrape_runs_total{provider="vastai",status="ok"}`) < 1 {
		t.Errorf("no ok vastai run counted")
	}

	// A real SIGTERM: the service stops its jobs and returns cleanly.
	if err := syscall.Kill(os.Getpid(), syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve returned %v after SIGTERM", err)
		}
	case <-time.After(25 * time.Second):
		t.Fatal("serve did not stop after SIGTERM")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the HTTP server still answers after shutdown")
	}
}

// providers are the named providers as sources, each offering one H100 at a steady price after
// one HTTP attempt.
func providers(names []string) []pipeline.Source {
	var out []pipeline.Source
	for _, name := range names {
		out = append(out, source(name))
	}
	return out
}

// source is a provider with one offer.
type source string

func (s source) Name() string { return string(s) }

func (s source) Fetch(context.Context, schema.Run) (schema.Extract, error) {
	price := decimal.RequireFromString("2.25")
	return schema.Extract{Attempts: 1, Offers: []schema.Offer{{OfferID: string(s) + "-h100", Tier: schema.TierSecure, Region: "US-TX-3",
		GPUModel: "H100-SXM-80GB", GPUNameRaw: "H100 SXM", GPUCount: 1, VRAMGB: 80, PriceType: schema.OnDemand,
		PriceUSDPerHour: price, PriceUSDPerGPUHour: price}}}, nil
}

// discard is a sink that keeps nothing and a history that has nothing.
type discard struct{}

func (discard) LoadBatch(context.Context, schema.Batch) (bool, error)    { return false, nil }
func (discard) LastGoodRuns(context.Context) ([]schema.ScrapeRun, error) { return nil, nil }
func (discard) LatestPrices(context.Context, string) (map[schema.Key]decimal.Decimal, error) {
	return nil, nil
}

// allRunsOK reports whether every provider's last run, as /healthz saw it, was ok.
func allRunsOK(h web.Health) bool {
	for _, p := range h.Providers {
		if p.LastStatus != "ok" {
			return false
		}
	}
	return len(h.Providers) > 0
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("decoding %s: %v", url, err)
	}
	return resp.StatusCode
}

// metricValue returns the value of the sample line that starts with series, or -1.
func metricValue(text, series string) float64 {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, series+" ") {
			var v float64
			if _, err := fmt.Sscan(strings.TrimPrefix(line, series+" "), &v); err == nil {
				return v
			}
		}
	}
	return -1
}

// syncBuffer is a bytes.Buffer safe for the concurrent writes of a logger.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeKeepsJobStatesAndStopsWithItsContext, without ClickHouse: a job's status and error
// are kept with its next run, a bad schedule is the configuration's error, and the service
// returns nil when its context ends.
func TestServeKeepsJobStatesAndStopsWithItsContext(t *testing.T) {
	cfg := defaultConfig(t)
	cfg.Serve.ScrapeSchedule = "@every 1h"
	deps := Deps{Scrape: Scrape{Config: pipeline.Config{SpoolDir: t.TempDir()}, Sources: providers(cfg.Scrape.Providers), Sink: discard{}, History: discard{}},
		Report: func(context.Context) (Result, error) { return Result{Outcome: OK}, nil }}
	bad := cfg
	bad.Report.Schedule = "every tuesday"
	if _, err := New(bad, deps); err == nil || !strings.Contains(err.Error(), "job report") {
		t.Errorf("a bad report schedule: %v, want an error naming the job", err)
	}
	srv, err := New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan struct{}, 10)
	if err := srv.Schedule("fails", "@every 1s", func(context.Context) (Result, error) {
		defer func() { ran <- struct{}{} }()
		return Result{Outcome: Failed}, fmt.Errorf("no plan today")
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	select {
	case <-ran:
	case <-time.After(10 * time.Second):
		t.Fatal("the job never ran")
	}
	var j schema.JobState
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if j = srv.Jobs()["fails"]; j.LastFinish != nil {
			break
		}
	}
	if j.Schedule != "@every 1s" || j.Running || j.LastStatus != "failed" || j.LastError != "no plan today" || j.LastStart == nil || j.LastFinish == nil || j.NextRun == nil {
		t.Errorf("job state %+v", j)
	}
	if _, ok := srv.Jobs()["scrape"]; !ok {
		t.Errorf("the scrape is not scheduled: %v", srv.Jobs())
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve returned %v when its context ended", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return when its context ended")
	}
}

// defaultConfig is the configuration of the built-in defaults, its state folder the test's own
// (STATE_DIRECTORY), so that loading it needs neither root nor $HOME.
func defaultConfig(t *testing.T) config.Config {
	t.Helper()
	state := t.TempDir()
	cfg, err := config.Load("", func(k string) string {
		if k == "STATE_DIRECTORY" {
			return state
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}
