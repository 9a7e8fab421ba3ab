package main

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/store/storetest"
)

// BenchmarkScrapeFromReplay is one full scrape run from the shipped snapshot: the four sources
// parse their recorded responses, the pipeline normalizes and validates, and every batch (raw
// payloads, offers, run-log row) is loaded into the local ClickHouse. It reports offers/s
// through the whole run. Run with `make bench`.
func BenchmarkScrapeFromReplay(b *testing.B) {
	runner, _ := replayRunner(b, nil)
	offers := 0
	b.ReportAllocs()
	for b.Loop() {
		rep, err := runner.Run(context.Background())
		if err != nil || rep.Status != "ok" {
			b.Fatalf("run: %v %+v", err, rep.Providers)
		}
		for _, p := range rep.Providers {
			offers += p.Loaded
		}
	}
	b.ReportMetric(float64(offers)/b.Elapsed().Seconds(), "offers/s")
	b.ReportMetric(float64(offers)/float64(b.N), "offers/run")
}

// replayRunner returns a pipeline that scrapes the shipped snapshot into a fresh, migrated
// database of the test server, with a fresh run id (and the clock now, when set) every run,
// and the DSN of that database.
func replayRunner(tb testing.TB, now func() time.Time) (*pipeline.Runner, string) {
	tb.Helper()
	dsn := storetest.DSN(tb)
	if code, out := runCLI("migrate", "--dsn", dsn); code != 0 {
		tb.Fatalf("migrate: %s", out)
	}
	cfg, err := config.Load("", isolated(tb.TempDir(), nil))
	if err != nil {
		tb.Fatal(err)
	}
	cfg.ClickHouse.DSN = dsn
	cfg.Scrape.SpoolDir = tb.TempDir()
	cfg.Scrape.MinOfferRatio = 0 // every run re-observes the same market
	logger := slog.New(slog.DiscardHandler)
	sources, err := buildSources(cfg, env{getenv: func(string) string { return "" }}, logger, nil, sourceOptions{replayDir: snapshotDir})
	if err != nil {
		tb.Fatal(err)
	}
	st := newLazyStore(cfg.ClickHouse, logger, nil)
	tb.Cleanup(func() { st.Close() })
	runner, err := pipeline.New(cfg.Scrape.Pipeline(), sources, st, st, pipeline.Options{Logger: logger, Now: now})
	if err != nil {
		tb.Fatal(err)
	}
	return runner, dsn
}
