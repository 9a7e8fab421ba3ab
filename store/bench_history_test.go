package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// The history benchmark's store: 20 million offers over a year, generated on the server by
// INSERT … SELECT from numbers() into a database of its own, kept between runs (it takes a
// minute or two to build) and rebuilt when its row count is not the expected one. Drop it with
// DROP DATABASE gpucost_bench_history_v4.
const (
	benchDB       = "gpucost_bench_history_v4" // bump the suffix when the generator or the schema changes
	benchRows     = 20_000_000
	benchPerHour  = 2280 // offers observed every hour: 12 GPU models × 4 providers × 47.5
	benchGPUModel = "H100-SXM-80GB"
)

// BenchmarkHistoryOneYear20M compares a one-year daily history of one GPU model as store.History
// reads it (the final rows of the completed days, offers for the current one: the last day
// of the data is the store clock's today) with the same figures merged from the states of the
// whole year (what History read before migration 0012), the states without the t-digest median,
// and the raw offers table, on a store of 20 million offers. Run it with `make bench`; it needs
// the local ClickHouse and GPUCOST_INTEGRATION=1. Each reports ms/query and ×raw, how many times
// faster than the raw table it is (against raw's last run: with -count, take the medians). finalize-load and finalize-migrate are what the final rows add
// to a load of the current day's offers and to a migrate, when no day needs finalizing.
func BenchmarkHistoryOneYear20M(b *testing.B) {
	storetest.Enabled(b)
	ctx := context.Background()
	// All data ends at a fixed hour, so the generated store is the same on every run.
	end := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	start := end.Add(-time.Duration(benchRows/benchPerHour) * time.Hour)
	opts := store.Options{Now: func() time.Time { return end.Add(-time.Hour) }}
	s, err := store.Open(ctx, storetest.DatabaseDSN(b, benchDB), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { s.Close() }()
	if _, err := s.Migrate(ctx); err != nil {
		// Built by an older schema: build it again.
		b.Logf("rebuilding %s: %v", benchDB, err)
		s.Close()
		storetest.DropDatabase(b, benchDB)
		if s, err = store.Open(ctx, storetest.DatabaseDSN(b, benchDB), opts); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
	}
	conn := storetest.Conn(b, storetest.DatabaseDSN(b, benchDB))

	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM offers").Scan(&n); err != nil {
		b.Fatal(err)
	}
	if n != benchRows {
		b.Logf("generating %d offers in database %s (once; kept for the next run)", benchRows, benchDB)
		if err := generateBenchHistory(ctx, b, conn, start); err != nil {
			b.Fatal(err)
		}
		// Migrate finalizes the completed days.
		t0 := time.Now()
		if _, err := s.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		b.Logf("finalized the completed days in %s", time.Since(t0).Round(time.Millisecond))
	}

	q := schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{benchGPUModel}}, From: end.AddDate(-1, 0, 0), To: end, Interval: schema.Day}
	// The raw query computes what History reads from the rollups: the same buckets and figures.
	raw := `SELECT toDateTime(toDate(observed_at), 'UTC') AS bucket, provider, gpu_model, price_type,
			min(price_usd_per_gpu_hour), avg(price_usd_per_gpu_hour), max(price_usd_per_gpu_hour),
			quantileTDigest(0.5)(toFloat64(price_usd_per_gpu_hour)), count(), uniq(offer_id), sum(price_usd_per_gpu_hour)
		FROM offers
		WHERE gpu_model = ? AND observed_at >= ? AND observed_at < ?
		GROUP BY bucket, provider, gpu_model, price_type
		ORDER BY bucket, provider, price_type`
	// History's query before migration 0012: every day merged from the states.
	states := `SELECT bucket, provider, gpu_model, price_type, min_usd, max_usd, median_usd, observed, offers,
			ifNull(sum_usd, toDecimal128(0, 6)), ifNull(summed, toUInt64(0)), avg_usd
		FROM (
			SELECT toDateTime(day, 'UTC') AS bucket, provider, gpu_model, price_type,
				minMerge(min_price) AS min_usd, maxMerge(max_price) AS max_usd,
				toFloat64(quantilesTDigestMerge(0.1, 0.25, 0.5, 0.75, 0.9)(price_quantiles)[3]) AS median_usd,
				countMerge(observations) AS observed, uniqMerge(distinct_offers) AS offers, avgMerge(avg_price) AS avg_usd
			FROM offers_daily
			WHERE gpu_model = ? AND day >= toDate(?) AND day < toDate(?)
			GROUP BY bucket, provider, gpu_model, price_type
		) AS rollup ANY LEFT JOIN (
			SELECT toDateTime(day, 'UTC') AS bucket, provider, gpu_model, price_type,
				sumMerge(sum_price) AS sum_usd, countMerge(observations) AS summed
			FROM offers_daily_sums
			WHERE gpu_model = ? AND day >= toDate(?) AND day < toDate(?)
			GROUP BY bucket, provider, gpu_model, price_type
		) AS sums USING (bucket, provider, gpu_model, price_type)
		ORDER BY bucket, provider, price_type`
	// The states without the median show what the t-digest costs.
	noMedian := `SELECT toDateTime(day, 'UTC') AS bucket, provider, gpu_model, price_type,
			minMerge(min_price), avgMerge(avg_price), maxMerge(max_price), countMerge(observations)
		FROM offers_daily
		WHERE gpu_model = ? AND day >= toDate(?) AND day < toDate(?)
		GROUP BY bucket, provider, gpu_model, price_type
		ORDER BY bucket, provider, price_type`
	rows := map[string]int{}
	var rawPerOp time.Duration
	run := func(name string, query func() (int, error)) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				n, err := query()
				if err != nil {
					b.Fatal(err)
				}
				rows[name] = n
			}
			perOp := b.Elapsed() / time.Duration(b.N)
			if name == "raw" {
				rawPerOp = perOp
			}
			b.ReportMetric(float64(perOp.Microseconds())/1000, "ms/query")
			if rawPerOp > 0 {
				b.ReportMetric(float64(rawPerOp)/float64(perOp), "×raw")
			}
		})
	}
	sql := func(query string, args ...any) func() (int, error) {
		return func() (int, error) {
			rs, err := conn.Query(ctx, query, args...)
			if err != nil {
				return 0, err
			}
			defer rs.Close()
			n := 0
			for rs.Next() {
				n++
			}
			return n, rs.Err()
		}
	}
	run("raw", sql(raw, q.Model(), q.From, q.To))
	run("history", func() (int, error) {
		points, err := s.History(ctx, q)
		return len(points), err
	})
	run("states", sql(states, q.Model(), q.From, q.To, q.Model(), q.From, q.To))
	run("states-without-median", sql(noMedian, q.Model(), q.From, q.To))
	if rows["history"] == 0 || rows["history"] != rows["raw"] || rows["history"] != rows["states"] || rows["history"] != rows["states-without-median"] {
		b.Errorf("the queries returned %v rows: they must agree", rows)
	}
	// What the final rows add to every load of offers of the current day, and to every migrate.
	b.Run("finalize-load", func(b *testing.B) {
		for b.Loop() {
			if err := store.FinalizeLoad(ctx, s); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64((b.Elapsed()/time.Duration(b.N)).Microseconds())/1000, "ms/load")
	})
	b.Run("finalize-migrate", func(b *testing.B) {
		for b.Loop() {
			if n, err := store.FinalizeStale(ctx, s); err != nil || n != 0 {
				b.Fatalf("finalized %d days (%v), want none", n, err)
			}
		}
		b.ReportMetric(float64((b.Elapsed()/time.Duration(b.N)).Microseconds())/1000, "ms/migrate")
	})
}

// generateBenchHistory fills the bench database with benchRows offers from start on, then builds
// the daily rollup from them. The materialized views are dropped in this database first: the
// rollup is filled by one INSERT … SELECT with the view's own query (read from its migration,
// so it cannot drift), which on a 2-core machine is several times faster than letting the view
// aggregate 20 million rows block by block; after OPTIMIZE … FINAL it holds what the view would
// have. offers_daily_sums is kept by its view, then merged the same way; offers_latest is not
// needed here and stays empty. The final rows are the caller's (Migrate).
func generateBenchHistory(ctx context.Context, tb testing.TB, conn driver.Conn, start time.Time) error {
	t0 := time.Now()
	for _, stmt := range []string{"DROP TABLE IF EXISTS offers_daily_mv", "DROP TABLE IF EXISTS offers_latest_mv",
		"TRUNCATE TABLE offers", "TRUNCATE TABLE offers_daily", "TRUNCATE TABLE offers_daily_sums", "TRUNCATE TABLE offers_daily_final",
		"TRUNCATE TABLE offers_latest"} {
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
	for _, table := range []string{"offers_daily", "offers_daily_sums"} {
		if err := conn.Exec(ctx, "OPTIMIZE TABLE "+table+" FINAL"); err != nil {
			return fmt.Errorf("merging %s: %w", table, err)
		}
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
