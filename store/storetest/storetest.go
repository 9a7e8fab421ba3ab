// Package storetest gives integration tests a real ClickHouse database of their own.
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
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"

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
