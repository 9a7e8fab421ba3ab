//go:build cluster

package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// clusterDatabase names a new database on the local cluster, dropped on every node when the
// test ends, and returns it with the DSN of it on the first node.
func clusterDatabase(t *testing.T) (db, dsn string) {
	t.Helper()
	storetest.Enabled(t)
	var b [5]byte
	rand.Read(b[:])
	db = "gpucost_cluster_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		for _, n := range clusterNodeAddrs {
			nodeConn(t, n).Exec(context.Background(), "DROP DATABASE IF EXISTS "+db)
		}
	})
	return db, "clickhouse://default@" + clusterNodeAddrs[0] + "/" + db + "?dial_timeout=5s"
}

// clusterStore migrates a new database on the local cluster and opens it in cluster mode.
func clusterStore(t *testing.T) (*store.Store, string) {
	t.Helper()
	_, dsn := clusterDatabase(t)
	s, err := store.Open(context.Background(), dsn, store.Options{Cluster: "gpucost"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if _, err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s, dsn
}

// TestClusterRollupsRepairedOnTheShardACrashHit loses the views' parts of one shard, as a crash
// of that shard's node between its offers part and its views' parts does (the views detached on
// shard 02's nodes while the batch is inserted), and loads the batch again: the rollups end
// equal to a recomputation from offers, shard 01's part counted once.
func TestClusterRollupsRepairedOnTheShardACrashHit(t *testing.T) {
	s, dsn := clusterStore(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	b := schema.Batch{Run: schema.ScrapeRun{RunID: "run-shard", Provider: "vastai", StartedAt: at, FinishedAt: at, Status: schema.RunOK}}
	for i := range 40 { // enough offers for both shards in each row group
		model := []string{"H100-SXM-80GB", "A100-SXM-80GB"}[i%2]
		o := offer("vastai", fmt.Sprintf("ask-%d", i), model, schema.OnDemand, at, fmt.Sprintf("1.%02d", i), 1)
		o.RunID = "run-shard"
		b.Offers = append(b.Offers, o)
	}
	shard2 := clusterNodeAddrs[2:]
	for _, n := range shard2 {
		for _, v := range []string{"offers_daily_mv", "offers_daily_sums_mv", "offers_latest_mv"} {
			if err := nodeConn(t, n).Exec(ctx, "DETACH TABLE "+s.Database()+"."+v); err != nil {
				t.Fatal(err)
			}
		}
	}
	err := s.InsertOffers(ctx, "run-shard", b.Offers)
	for _, n := range shard2 {
		for _, v := range []string{"offers_daily_mv", "offers_daily_sums_mv", "offers_latest_mv"} {
			if err := nodeConn(t, n).Exec(ctx, "ATTACH TABLE "+s.Database()+"."+v); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if storetest.RollupDiff(t, dsn) == "" {
		t.Fatal("the simulated crash of shard 02 left the rollups whole")
	}
	res, err := s.CompleteBatch(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.OffersWritten != 0 || res.Repaired == 0 || !res.RunWritten {
		t.Errorf("load after the crash: %+v, want no offers written, rollups repaired", res)
	}
	if diff := storetest.RollupDiff(t, dsn); diff != "" {
		t.Errorf("rollups differ from offers after the repair:\n%s", diff)
	}
}

// TestClusterMigrateGivesOffersLatestItsShardingKey: a cluster database whose offers_latest was
// created with random sharding (before the store wrote through it) gets the offers' key at the
// next migrate, on every node.
func TestClusterMigrateGivesOffersLatestItsShardingKey(t *testing.T) {
	s, _ := clusterStore(t)
	ctx := context.Background()
	db := s.Database()
	node1 := nodeConn(t, clusterNodeAddrs[0])
	for _, stmt := range []string{
		"DROP TABLE " + db + ".offers_latest ON CLUSTER gpucost",
		"CREATE TABLE " + db + ".offers_latest ON CLUSTER gpucost AS " + db + ".offers_latest_local ENGINE = Distributed(gpucost, " + db + ", offers_latest_local, rand())",
	} {
		if err := node1.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, n := range clusterNodeAddrs {
		var engine string
		if err := nodeConn(t, n).QueryRow(ctx, "SELECT engine_full FROM system.tables WHERE database = ? AND name = 'offers_latest'", db).Scan(&engine); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(engine, "cityHash64(provider, offer_id, price_type)") {
			t.Errorf("node %s: offers_latest is %s, want the offers' sharding key", n, engine)
		}
	}
}
