//go:build cluster

package store_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// The local cluster of deploy/clickhouse-cluster/local.sh (make test-cluster): nodes 1 and 2
// are shard 01, nodes 3 and 4 shard 02.
var clusterNodeAddrs = []string{"127.0.0.1:19101", "127.0.0.1:19102", "127.0.0.1:19103", "127.0.0.1:19104"}

// nodeConn connects to one node of the local cluster.
func nodeConn(tb testing.TB, addr string) clickhouse.Conn {
	tb.Helper()
	return storetest.Conn(tb, "clickhouse://default@"+addr+"/default?dial_timeout=5s")
}

// TestClusterValidUntilMigration upgrades a cluster database with offers from before migration
// 0010, cut off after its first ALTER, with two migrators: every node ends with valid_until in
// the local and Distributed tables, and offers read back with it. The two run at once where
// the servers take it; before ClickHouse 20.1 one after the other, since there two identical
// ALTER … ON CLUSTER of a replicated table can stop a node's distributed DDL (docs/operations.md,
// Upgrades), and resuming the cut-off migration is what is left to prove.
func TestClusterValidUntilMigration(t *testing.T) {
	ctx := context.Background()
	db, dsn := clusterDatabase(t)
	open := func() *store.Store {
		s, err := store.Open(ctx, dsn, store.Options{Cluster: "gpucost"})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open()
	defer s.Close()
	if _, err := s.MigrateFS(ctx, migrationsBefore(t, 10)); err != nil {
		t.Fatal(err)
	}
	// An offer from before, then the first statement of 0010 as a migrate cut off after it.
	node1 := nodeConn(t, clusterNodeAddrs[0])
	sync := clickhouse.Context(ctx, clickhouse.WithSettings(clickhouse.Settings{"insert_distributed_sync": 1}))
	if err := node1.Exec(sync, "INSERT INTO "+db+`.offers (observed_at, run_id, provider, offer_id, gpu_model, gpu_count, price_type, price_usd_per_hour, price_usd_per_gpu_hour)
		SELECT toDateTime('2026-11-02 10:00:00', 'UTC'), 'run-old', 'vastai', 'ask-1', 'H100-SXM-80GB', 8, 'on_demand', toDecimal64(20, 6), toDecimal64(2.5, 6)`); err != nil {
		t.Fatal(err)
	}
	if err := node1.Exec(ctx, "ALTER TABLE "+db+".offers_latest_local ON CLUSTER gpucost ADD COLUMN valid_until Nullable(DateTime('UTC')) AFTER observed_at"); err != nil {
		t.Fatal(err)
	}
	if major, _, _ := strings.Cut(s.ServerVersion(), "."); major == "18" || major == "19" {
		for range 2 {
			m := open()
			_, err := m.Migrate(ctx)
			m.Close()
			if err != nil {
				t.Fatalf("migrate --cluster after a half-way 0010: %v", err)
			}
		}
	} else if err := migrateTwiceAtOnce(ctx, dsn, store.Options{Cluster: "gpucost"}); err != nil {
		t.Fatalf("concurrent migrate --cluster after a half-way 0010: %v", err)
	}
	for _, n := range clusterNodeAddrs {
		for _, table := range []string{"offers_local", "offers", "offers_latest_local", "offers_latest", "latest_offers"} {
			var typ string
			err := nodeConn(t, n).QueryRow(ctx, "SELECT type FROM system.columns WHERE database = ? AND table = ? AND name = 'valid_until'", db, table).Scan(&typ)
			if err != nil || typ != "Nullable(DateTime('UTC'))" {
				t.Errorf("node %s: %s.valid_until is %q (%v), want Nullable(DateTime('UTC'))", n, table, typ, err)
			}
		}
	}
	until := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	imported := offer("aws", "import:H100-SXM-80GB/8x/datacenter/us-east-1", "H100-SXM-80GB", schema.OnDemand, time.Date(2026, 11, 2, 11, 0, 0, 0, time.UTC), "6.88", 8)
	imported.ValidUntil = &until
	if err := s.InsertOffers(ctx, imported.RunID, []schema.Offer{imported}); err != nil {
		t.Fatal(err)
	}
	latest, err := s.LatestOffers(ctx, schema.OfferFilter{})
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Provider   string
		ValidUntil *time.Time
	}
	var got []row
	for _, o := range latest {
		got = append(got, row{o.Provider, o.ValidUntil})
	}
	if diff := cmp.Diff([]row{{"vastai", nil}, {"aws", &until}}, got); diff != "" {
		t.Errorf("latest offers on the cluster (-want +got):\n%s", diff)
	}
}
