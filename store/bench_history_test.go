package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// The history benchmark's store: 20 million offers over a year, generated on the server by
// INSERT … SELECT from numbers() into a database of its own, kept between runs (it takes a
// minute or two to build) and rebuilt when its row count is not the expected one. Drop it with
// DROP DATABASE gpucost_bench_history_v2.
const (
	benchDB       = "gpucost_bench_history_v2" // bump the suffix when the generator changes
	benchRows     = 20_000_000
	benchPerHour  = 2280 // offers observed every hour: 12 GPU models × 4 providers × 47.5
	benchGPUModel = "H100-SXM-80GB"
)

// BenchmarkHistoryOneYear20M compares a one-year daily history of one GPU model read from the
// offers_daily rollup (what store.History does) with the same figures computed from the raw
// offers table, on a store of 20 million offers. Run it with `make bench`; it needs the local
// ClickHouse and GPUCOST_INTEGRATION=1. It reports ms/query of each, and for the raw table and
// the rollup without its t-digest median, their time as a multiple of store.History's.
func BenchmarkHistoryOneYear20M(b *testing.B) {
	storetest.Enabled(b)
	ctx := context.Background()
	s, err := store.Open(ctx, storetest.DatabaseDSN(b, benchDB), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { s.Close() }()
	if _, err := s.Migrate(ctx); err != nil {
		// Built by an older schema: build it again.
		b.Logf("rebuilding %s: %v", benchDB, err)
		s.Close()
		storetest.DropDatabase(b, benchDB)
		if s, err = store.Open(ctx, storetest.DatabaseDSN(b, benchDB), store.Options{}); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
	}
	opts, err := clickhouse.ParseDSN(storetest.DatabaseDSN(b, benchDB))
	if err != nil {
		b.Fatal(err)
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()

	// All data ends at a fixed hour, so the generated store is the same on every run.
	end := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := end.Add(-time.Duration(benchRows/benchPerHour) * time.Hour)
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM offers").Scan(&n); err != nil {
		b.Fatal(err)
	}
	if n != benchRows {
		b.Logf("generating %d offers in database %s (once; kept for the next run)", benchRows, benchDB)
		if err := generateBenchHistory(ctx, b, conn, start); err != nil {
			b.Fatal(err)
		}
	}

	q := schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{benchGPUModel}}, From: end.AddDate(-1, 0, 0), To: end, Interval: schema.Day}
	// The raw query computes what History reads from the rollup: the same buckets and figures.
	raw := `SELECT toDateTime(toDate(observed_at), 'UTC') AS bucket, provider, gpu_model, price_type,
			min(price_usd_per_gpu_hour), avg(price_usd_per_gpu_hour), max(price_usd_per_gpu_hour),
			quantileTDigest(0.5)(toFloat64(price_usd_per_gpu_hour)), count(), uniq(offer_id)
		FROM offers
		WHERE gpu_model = ? AND observed_at >= ? AND observed_at < ?
		GROUP BY bucket, provider, gpu_model, price_type
		ORDER BY bucket, provider, price_type`
	// The rollup without the median shows what the t-digest states cost.
	noMedian := `SELECT toDateTime(day, 'UTC') AS bucket, provider, gpu_model, price_type,
			minMerge(min_price), avgMerge(avg_price), maxMerge(max_price), countMerge(observations)
		FROM offers_daily
		WHERE gpu_model = ? AND day >= toDate(?) AND day < toDate(?)
		GROUP BY bucket, provider, gpu_model, price_type
		ORDER BY bucket, provider, price_type`
	rows := map[string]int{}
	perOp := map[string]time.Duration{}
	query := func(name, sql string) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				n := 0
				if sql == "" {
					points, err := s.History(ctx, q)
					if err != nil {
						b.Fatal(err)
					}
					n = len(points)
				} else {
					rs, err := conn.Query(ctx, sql, q.Model(), q.From, q.To)
					if err != nil {
						b.Fatal(err)
					}
					for rs.Next() {
						n++
					}
					if err := rs.Err(); err != nil {
						b.Fatal(err)
					}
					rs.Close()
				}
				rows[name] = n
			}
			perOp[name] = b.Elapsed() / time.Duration(b.N)
			b.ReportMetric(float64(perOp[name].Microseconds())/1000, "ms/query")
			if name != "rollup" && perOp["rollup"] > 0 {
				b.ReportMetric(float64(perOp[name])/float64(perOp["rollup"]), "×rollup")
			}
		}
	}
	b.Run("rollup", query("rollup", ""))
	b.Run("rollup-without-median", query("rollup-without-median", noMedian))
	b.Run("raw", query("raw", raw))
	if rows["rollup"] == 0 || rows["rollup"] != rows["raw"] || rows["rollup"] != rows["rollup-without-median"] {
		b.Errorf("the queries returned %v rows: they must agree", rows)
	}
}

// generateBenchHistory fills the bench database with benchRows offers from start on, then builds
// the daily rollup from them. The materialized views are dropped in this database first: the
// rollup is filled by one INSERT … SELECT with the view's own query (read from its migration,
// so it cannot drift), which on a 2-core machine is several times faster than letting the view
// aggregate 20 million rows block by block; after OPTIMIZE … FINAL it holds what the view would
// have. offers_latest is not needed here and stays empty.
func generateBenchHistory(ctx context.Context, tb testing.TB, conn driver.Conn, start time.Time) error {
	t0 := time.Now()
	for _, stmt := range []string{"DROP TABLE IF EXISTS offers_daily_mv", "DROP TABLE IF EXISTS offers_latest_mv",
		"TRUNCATE TABLE offers", "TRUNCATE TABLE offers_daily", "TRUNCATE TABLE offers_latest"} {
		if err := conn.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("%s: %w", stmt, err)
		}
	}
	// Prices: a base per GPU model, moved by up to ±20% per offer; each offer holds its price
	// for one to three days, as marketplace asks and list prices do, so a day's rollup state
	// sees a few dozen distinct prices per provider, not one per observation.
	gen := `INSERT INTO offers (observed_at, run_id, source_url, provider, offer_id, tier, region, country,
			gpu_model, gpu_name_raw, gpu_count, vram_gb, price_type, price_usd_per_hour, price_usd_per_gpu_hour,
			intra_node, inter_node, stock, dq_flags)
		SELECT
			toDateTime(?, 'UTC') + intDiv(number, ?) * 3600 AS observed_at,
			concat('bench-', toString(intDiv(number, ?))) AS run_id,
			'https://example.test' AS source_url,
			['vastai', 'runpod', 'lambda', 'coreweave'][intDiv(number % ?, 12) % 4 + 1] AS provider,
			concat('o', toString(number % ?)) AS offer_id,
			'secure', 'us-east', 'US',
			['H100-SXM-80GB', 'A100-SXM-80GB', 'H200-SXM-141GB', 'L40S-48GB', 'RTX-4090-24GB', 'A100-PCIE-40GB',
			 'H100-PCIE-80GB', 'L4-24GB', 'A10-24GB', 'RTX-A6000-48GB', 'B200-SXM-180GB', 'MI300X-192GB'][number % ? % 12 + 1] AS gpu_model,
			gpu_model AS gpu_name_raw,
			toUInt16(1) AS gpu_count,
			80 AS vram_gb,
			if(number % ? % 5 = 0, 'spot', 'on_demand') AS price_type,
			toDecimal64([2.5, 1.4, 3.5, 0.9, 0.4, 1.1, 2.2, 0.5, 0.6, 0.7, 5.0, 2.9][number % ? % 12 + 1]
				* (0.8 + ((number % ? * 7919 + intDiv(intDiv(number, ?), 24 + number % ? % 48)) % 400) / 1000), 6) AS price_usd_per_gpu_hour,
			price_usd_per_gpu_hour AS price_usd_per_hour,
			'nvswitch', 'infiniband', 'high', []
		FROM system.numbers
		WHERE number >= ?
		LIMIT ?`
	const chunk = 4_000_000
	for from := 0; from < benchRows; from += chunk {
		if err := conn.Exec(ctx, gen, start, benchPerHour, benchPerHour, benchPerHour, benchPerHour, benchPerHour, benchPerHour,
			benchPerHour, benchPerHour, benchPerHour, benchPerHour, from, min(chunk, benchRows-from)); err != nil {
			return fmt.Errorf("generating offers %d to %d: %w", from, from+chunk, err)
		}
		tb.Logf("generated %d of %d offers (%s)", min(from+chunk, benchRows), benchRows, time.Since(t0).Round(time.Second))
	}
	genTime := time.Since(t0)
	mv, err := rollupSelect()
	if err != nil {
		return err
	}
	if err := conn.Exec(ctx, "INSERT INTO offers_daily "+mv); err != nil {
		return fmt.Errorf("filling offers_daily: %w", err)
	}
	if err := conn.Exec(ctx, "OPTIMIZE TABLE offers_daily FINAL"); err != nil {
		return fmt.Errorf("merging offers_daily: %w", err)
	}
	tb.Logf("generated %d offers in %s and their daily rollup in %s", benchRows, genTime.Round(time.Second), (time.Since(t0) - genTime).Round(time.Second))
	return nil
}

// rollupSelect is the SELECT of the offers_daily_mv materialized view, from the last migration
// that creates it.
func rollupSelect() (string, error) {
	ms, err := schema.LoadMigrations(schema.Migrations)
	if err != nil {
		return "", err
	}
	last := ""
	for _, m := range ms {
		for _, stmt := range m.Statements {
			if strings.Contains(stmt, "MATERIALIZED VIEW IF NOT EXISTS offers_daily_mv") {
				if _, sel, ok := strings.Cut(stmt, " AS\n"); ok {
					last = sel
				}
			}
		}
	}
	if last == "" {
		return "", fmt.Errorf("no offers_daily_mv in the migrations")
	}
	return last, nil
}
