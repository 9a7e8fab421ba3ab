//go:build cluster

package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// TestClusterFinalRows loads days of runs on the local cluster with the clock on the last, then
// a late batch of a finalized day: each finalized day's rows lie on one shard, whole, and the
// history equals the hand computation before and after, as on one server.
func TestClusterFinalRows(t *testing.T) {
	_, dsn := clusterDatabase(t)
	day1 := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	day2, day3, day4 := day1.AddDate(0, 0, 1), day1.AddDate(0, 0, 2), day1.AddDate(0, 0, 3)
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, store.Options{Cluster: "gpucost", Now: func() time.Time { return day3.Add(10 * time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var stored []schema.Offer
	load := func(b schema.Batch) {
		t.Helper()
		if _, err := s.CompleteBatch(ctx, b); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, b.Offers...)
	}
	load(finalBatch("run-1a", day1.Add(6*time.Hour), "2.00", "2.10", "2.45"))
	load(finalBatch("run-2a", day2.Add(6*time.Hour), "2.30", "2.20"))
	load(finalBatch("run-3a", day3.Add(6*time.Hour), "2.50"))
	checkHistory(t, s, stored, stored, day1, day4)
	load(finalBatch("run-1-spooled", day1.Add(22*time.Hour), "1.95", "2.60"))
	checkHistory(t, s, stored, stored, day1, day4)
	if diff := storetest.RollupDiff(t, dsn); diff != "" {
		t.Errorf("rollups differ from offers:\n%s", diff)
	}
	// Per shard (the first replica of each), the days of its final rows and their row groups.
	got := map[string]uint64{}
	for _, n := range []string{clusterNodeAddrs[0], clusterNodeAddrs[2]} {
		rows, err := nodeConn(t, n).Query(ctx, "SELECT toString(day), uniqExact(provider, gpu_model, price_type) FROM "+s.Database()+".offers_daily_final_local GROUP BY day")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var day string
			var groups uint64
			if err := rows.Scan(&day, &groups); err != nil {
				t.Fatal(err)
			}
			if _, twice := got[day]; twice {
				t.Errorf("the final rows of %s lie on both shards", day)
			}
			got[day] = groups
		}
		rows.Close()
	}
	// Days 1 and 2, each with its three row groups (H100 on demand and spot, A100).
	if diff := cmp.Diff(map[string]uint64{"2026-11-02": 3, "2026-11-03": 3}, got); diff != "" {
		t.Errorf("final row groups per day (-want +got):\n%s", diff)
	}
}
