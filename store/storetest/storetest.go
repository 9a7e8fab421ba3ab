// Package storetest gives integration tests a real ClickHouse database of their own, and a
// generated price history (GenHistory, NewHistory) with the hand computations to check reads of
// it against.
//
// Tests that need ClickHouse call Open (or DSN). The switch GPUCOST_INTEGRATION decides what
// happens when they run: unset skips them with a message, "0" skips them, "1" makes them run and
// fail when no server answers (`make test` sets it after starting the local server). The server
// is GPUCOST_TEST_CLICKHOUSE_DSN, default the local server of `make clickhouse`; every call gets
// a fresh database, dropped when the test ends, so tests and packages can run in parallel.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/gpucost/gpucost/store"
)

// Enabled skips tb unless integration tests are switched on (GPUCOST_INTEGRATION=1).
func Enabled(tb testing.TB) {
	tb.Helper()
	switch os.Getenv("GPUCOST_INTEGRATION") {
	case "1":
	case "0":
		tb.Skip("ClickHouse integration tests are off (GPUCOST_INTEGRATION=0)")
	default:
		tb.Skip("ClickHouse integration test: set GPUCOST_INTEGRATION=1 with a server running (make test does both)")
	}
}

// ServerDSN is the DSN of the test server without a database.
func ServerDSN() string {
	if dsn := os.Getenv("GPUCOST_TEST_CLICKHOUSE_DSN"); dsn != "" {
		return dsn
	}
	return store.DefaultDSN
}

// DatabaseDSN is the DSN of the named database on the test server.
func DatabaseDSN(tb testing.TB, database string) string {
	tb.Helper()
	u, err := url.Parse(ServerDSN())
	if err != nil {
		tb.Fatalf("parsing GPUCOST_TEST_CLICKHOUSE_DSN: %v", err)
	}
	u.Path = "/" + database
	return u.String()
}

// DSN returns a DSN for a new, empty database on the test server, dropped when tb ends.
func DSN(tb testing.TB) string {
	tb.Helper()
	Enabled(tb)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	db := "gpucost_test_" + hex.EncodeToString(b[:])
	dsn := DatabaseDSN(tb, db)
	tb.Cleanup(func() { DropDatabase(tb, db) })
	return dsn
}

// Open returns a migrated store on a new database of the test server.
func Open(tb testing.TB) *store.Store {
	tb.Helper()
	s := OpenEmpty(tb)
	if _, err := s.Migrate(context.Background()); err != nil {
		tb.Fatalf("migrating the test database: %v", err)
	}
	return s
}

// OpenEmpty returns a store on a new database that does not exist yet (nothing migrated).
func OpenEmpty(tb testing.TB) *store.Store {
	tb.Helper()
	s, err := store.Open(context.Background(), DSN(tb), store.Options{})
	if err != nil {
		tb.Fatalf("opening the test ClickHouse (is it running? make clickhouse): %v", err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// Conn opens a driver connection to dsn (any server, any database), closed when tb ends: for
// what a test asks ClickHouse directly.
func Conn(tb testing.TB, dsn string) driver.Conn {
	tb.Helper()
	opts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		tb.Fatal(err)
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close() })
	return conn
}

// DropDatabase drops a database of the test server, reporting a failure on tb.
func DropDatabase(tb testing.TB, db string) {
	opts, err := clickhouse.ParseDSN(DatabaseDSN(tb, db))
	if err != nil {
		tb.Errorf("dropping test database %s: %v", db, err)
		return
	}
	opts.Auth.Database = "default"
	conn, err := clickhouse.Open(opts)
	if err != nil {
		tb.Errorf("dropping test database %s: %v", db, err)
		return
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS `"+db+"`"); err != nil {
		tb.Errorf("dropping test database %s: %v", db, err)
	}
}

// RollupDiff compares the rollups of the database dsn names with a recomputation from its offers
// table, and returns the differences, one line each ("" when they agree): per day × provider ×
// GPU model × price type, the observations, minimum, maximum and distinct offers of
// offers_daily and the exact sum and observations of offers_daily_sums; per offer key, the newest
// observation time and price of offers_latest (read FINAL, so a key with two rows there is a
// difference too).
func RollupDiff(tb testing.TB, dsn string) string {
	tb.Helper()
	conn := Conn(tb, dsn)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	lines := func(query string) []string {
		rows, err := conn.Query(ctx, query)
		if err != nil {
			tb.Fatalf("comparing rollups: %v\n%s", err, query)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				tb.Fatalf("comparing rollups: %v", err)
			}
			out = append(out, s)
		}
		if err := rows.Err(); err != nil {
			tb.Fatalf("comparing rollups: %v\n%s", err, query)
		}
		sort.Strings(out)
		return out
	}
	var diffs []string
	compare := func(what, rollup, recomputed string) {
		a, b := lines(rollup), lines(recomputed)
		in := func(xs []string) map[string]int {
			m := map[string]int{}
			for _, x := range xs {
				m[x]++
			}
			return m
		}
		ma, mb := in(a), in(b)
		for _, x := range a {
			if mb[x] == 0 {
				diffs = append(diffs, what+": only in the rollup: "+x)
			} else {
				mb[x]--
			}
		}
		for _, x := range b {
			if ma[x] == 0 {
				diffs = append(diffs, what+": only in the recomputation from offers: "+x)
			} else {
				ma[x]--
			}
		}
	}
	group := "concat(toString(day), ' ', provider, ' ', gpu_model, ' ', price_type"
	compare("offers_daily",
		`SELECT `+group+`, ' n=', toString(countMerge(observations)), ' min=', toString(minMerge(min_price)),
			' max=', toString(maxMerge(max_price)), ' offers=', toString(uniqMerge(distinct_offers)))
		FROM offers_daily GROUP BY day, provider, gpu_model, price_type`,
		`SELECT `+group+`, ' n=', toString(count()), ' min=', toString(min(price_usd_per_gpu_hour)),
			' max=', toString(max(price_usd_per_gpu_hour)), ' offers=', toString(uniqExact(offer_id)))
		FROM offers GROUP BY toDate(observed_at) AS day, provider, gpu_model, price_type`)
	compare("offers_daily_sums",
		`SELECT `+group+`, ' n=', toString(countMerge(observations)), ' sum=', toString(sumMerge(sum_price)))
		FROM offers_daily_sums GROUP BY day, provider, gpu_model, price_type`,
		`SELECT `+group+`, ' n=', toString(count()), ' sum=', toString(sum(price_usd_per_gpu_hour)))
		FROM offers GROUP BY toDate(observed_at) AS day, provider, gpu_model, price_type`)
	compare("offers_latest",
		`SELECT concat(provider, ' ', price_type, ' ', offer_id, ' ', toString(observed_at), ' ', toString(price_usd_per_gpu_hour))
		FROM offers_latest FINAL`,
		`SELECT concat(provider, ' ', price_type, ' ', offer_id, ' ', toString(max(observed_at)), ' ', toString(argMax(price_usd_per_gpu_hour, observed_at)))
		FROM offers GROUP BY provider, price_type, offer_id`)
	return strings.Join(diffs, "\n")
}
