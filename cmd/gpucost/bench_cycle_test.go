package main

import (
	"net/http"
	"testing"
	"time"

	"github.com/gpucost/gpucost/store/storetest"
)

// BenchmarkScrapeCycle is one whole scrape of the five providers, each answering every request
// of the shipped snapshot 500 ms late, against the slowest of them (Vast: one request per
// slice) scraped alone: the sources are fetched side by side, so the cycle should take about as
// long as its slowest source (ratio ≈ 1), not the sum of the five. It reports the seconds of
// each and their ratio. Run it with `make bench`; it needs the local ClickHouse.
func BenchmarkScrapeCycle(b *testing.B) {
	storetest.Enabled(b)
	const latency = 500 * time.Millisecond
	late := func(http.ResponseWriter, *http.Request) bool { time.Sleep(latency); return false }
	urls := map[string]string{}
	for _, p := range []struct{ name, path string }{
		{"vastai", "/api/v0/bundles/"}, {"runpod", "/graphql"}, {"lambda", "/pricing"}, {"coreweave", "/pricing"}, {"verda", "/pricing"},
	} {
		urls[p.name] = providerServer(b, p.name, late).URL + p.path
	}
	scrape := func(providers string) time.Duration {
		dsn := storetest.DSN(b)
		if code, out := runCLI("migrate", "--dsn", dsn); code != 0 {
			b.Fatalf("migrate: %s", out)
		}
		vars := map[string]string{
			"GPUCOST_CLICKHOUSE_DSN": dsn, "GPUCOST_SCRAPE_SPOOL_DIR": b.TempDir(),
			"GPUCOST_PROVIDERS_VASTAI_URL": urls["vastai"], "GPUCOST_PROVIDERS_VASTAI_DELAY": "1ms",
			"GPUCOST_PROVIDERS_RUNPOD_URL":      urls["runpod"],
			"GPUCOST_PROVIDERS_LAMBDA_PAGE_URL": urls["lambda"], "GPUCOST_PROVIDERS_LAMBDA_API_KEY_ENV": "GPUCOST_BENCH_NO_SUCH_KEY",
			"GPUCOST_PROVIDERS_LAMBDA_DELAY":  "1ms",
			"GPUCOST_PROVIDERS_COREWEAVE_URL": urls["coreweave"], "GPUCOST_PROVIDERS_COREWEAVE_DELAY": "1ms",
			"GPUCOST_PROVIDERS_VERDA_PAGE_URL": urls["verda"], "GPUCOST_PROVIDERS_VERDA_DELAY": "1ms",
		}
		t0 := time.Now()
		if code, out := runCLIEnv(vars, "scrape", "--providers", providers); code != exitOK {
			b.Fatalf("scrape --providers %s: exit %d\n%s", providers, code, out)
		}
		return time.Since(t0)
	}
	var cycle, slowest time.Duration
	for b.Loop() {
		cycle += scrape("vastai,runpod,lambda,coreweave,verda")
		slowest += scrape("vastai")
	}
	n := time.Duration(b.N)
	b.ReportMetric((cycle / n).Seconds(), "s/cycle")
	b.ReportMetric((slowest / n).Seconds(), "s/slowest-alone")
	b.ReportMetric(float64(cycle)/float64(slowest), "×slowest")
}
