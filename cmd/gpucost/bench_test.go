package main

import (
	"context"
	"log/slog"
	"testing"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/store/storetest"
)

// BenchmarkScrapeFromReplay is one full scrape run from the shipped snapshot: the four sources
// parse their recorded responses, the pipeline normalizes and validates, and every batch (raw
// payloads, offers, run-log row) is loaded into the local ClickHouse. It reports offers/s
// through the whole run. Run with `make bench`.
func BenchmarkScrapeFromReplay(b *testing.B) {
	dsn := storetest.DSN(b)
	if code, out := runCLI("migrate", "--dsn", dsn); code != 0 {
		b.Fatalf("migrate: %s", out)
	}
	cfg, err := loadConfig("", func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	cfg.ClickHouse.DSN = dsn
	cfg.Scrape.SpoolDir = b.TempDir()
	cfg.Scrape.MinOfferRatio = 0 // every iteration re-observes the same market
	logger := slog.New(slog.DiscardHandler)
	sources, err := buildSources(cfg, env{getenv: func(string) string { return "" }}, logger, nil, sourceOptions{replayDir: snapshotDir})
	if err != nil {
		b.Fatal(err)
	}
	st := newLazyStore(cfg.ClickHouse, logger)
	defer st.Close()
	runner, err := pipeline.New(pipelineConfig(cfg), sources, st, st, pipeline.Options{Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
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
