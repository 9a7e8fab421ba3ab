//go:build measure

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/store/storetest"
)

// TestMeasureGrowth loads a week of hourly scrapes (the shipped snapshot, one run per hour of a
// simulated clock) into a fresh database and prints rows and bytes per table, per run and
// extrapolated per month: the figures of docs/operations.md. It is a measurement, not a check,
// so it is built only with the tag measure (make measure-growth).
func TestMeasureGrowth(t *testing.T) {
	clock := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	runner, dsn := replayRunner(t, func() time.Time { return clock })
	const runs = 7 * 24
	for i := 0; i < runs; i++ {
		if _, err := runner.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Hour)
	}
	db := dsn[strings.LastIndex(dsn, "/")+1:]
	if i := strings.Index(db, "?"); i >= 0 {
		db = db[:i]
	}
	if err := storetest.Conn(t, dsn).Exec(context.Background(), "OPTIMIZE TABLE offers FINAL"); err != nil {
		t.Fatal(err)
	}
	fmt.Printf("%d hourly runs of the snapshot\n| table | rows/run | compressed bytes/run | uncompressed bytes/run | rows/month | compressed MB/month |\n|---|--:|--:|--:|--:|--:|\n", runs)
	for _, table := range []string{"offers", "raw_payloads", "scrape_runs", "offers_daily", "offers_latest"} {
		var rows, comp, uncomp int
		rows, _ = countRows(dsn, "", fmt.Sprintf("SELECT toUInt64(sum(rows)) FROM system.parts WHERE active AND database = '%s' AND table = '%s'", db, table))
		comp, _ = countRows(dsn, "", fmt.Sprintf("SELECT toUInt64(sum(data_compressed_bytes)) FROM system.parts WHERE active AND database = '%s' AND table = '%s'", db, table))
		uncomp, _ = countRows(dsn, "", fmt.Sprintf("SELECT toUInt64(sum(data_uncompressed_bytes)) FROM system.parts WHERE active AND database = '%s' AND table = '%s'", db, table))
		perRun := func(v int) float64 { return float64(v) / runs }
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %.0f | %.1f |\n", table, perRun(rows), perRun(comp), perRun(uncomp), perRun(rows)*730, perRun(comp)*730/1e6)
	}
}
