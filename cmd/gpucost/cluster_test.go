//go:build cluster

package main

import (
	"context"
	"crypto/rand"
	"encoding/csv"
	"encoding/hex"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
)

// The cluster tests run against the local 2 shards × 2 replicas cluster of
// deploy/clickhouse-cluster/local.sh, built only with the tag cluster: `make test-cluster` starts
// the cluster and runs them. They compare the cluster with a single server on the same data, and
// stop replicas during a scrape.

const clusterScript = "../../deploy/clickhouse-cluster/local.sh"

// clusterNodes are the native addresses of the local cluster's nodes 1..4.
var clusterNodes = []string{"127.0.0.1:19101", "127.0.0.1:19102", "127.0.0.1:19103", "127.0.0.1:19104"}

// clusterDB returns a config section for a new database on the local cluster, through node 1,
// and drops the database (on every node) when the test ends.
func clusterDB(t *testing.T) (db string, clickhouseSection string) {
	t.Helper()
	var b [5]byte
	rand.Read(b[:])
	db = "gpucost_cluster_" + hex.EncodeToString(b[:])
	t.Cleanup(func() {
		for _, n := range clusterNodes {
			execOn(n, "DROP DATABASE IF EXISTS "+db)
		}
	})
	return db, "clickhouse:\n  dsn: clickhouse://default@" + clusterNodes[0] + "/" + db + "?dial_timeout=5s\n  cluster: gpucost\n"
}

// execOn runs a statement on one node.
func execOn(addr, query string) error {
	opts, err := clickhouse.ParseDSN("clickhouse://default@" + addr + "/default")
	if err != nil {
		return err
	}
	conn, err := clickhouse.Open(opts)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Exec(context.Background(), query)
}

// countRowsOn runs a query that returns one number on one node.
func countRowsOn(addr, db, query string) (int, error) {
	return countRows("clickhouse://default@"+addr+"/"+db, "", query)
}

func TestClusterGivesTheSameResultsAsOneServer(t *testing.T) {
	db, section := clusterDB(t)
	single := newE2E(t, nil)
	singleCfg := single.writeConfig("optimize:\n  workloads: ../../plans/workloads.sample.yaml\n")
	clusterCfg := writeConfigFile(t, section+"scrape:\n  spool_dir: "+t.TempDir()+"\noptimize:\n  workloads: ../../plans/workloads.sample.yaml\n")
	if code, out := runCLI("migrate", "--config", clusterCfg); code != exitOK || !strings.Contains(out, "applied 0001_offers.sql") {
		t.Fatalf("migrate --cluster: exit %d\n%s", code, out)
	}
	for _, cfg := range []string{singleCfg, clusterCfg} {
		if code, out := runCLI("scrape", "--replay", snapshotDir, "--config", cfg); code != exitOK {
			t.Fatalf("scrape: exit %d\n%s", code, out)
		}
	}
	// The current market, cheapest first, without the observation time and the run (each load
	// had its own).
	market := func(cfg string) string {
		code, out := runCLI("offers", "--output", "csv", "--limit", "0", "--config", cfg)
		if code != exitOK {
			t.Fatalf("offers: exit %d\n%s", code, out)
		}
		records, err := csv.NewReader(strings.NewReader(stdoutOf(out))).ReadAll()
		if err != nil || len(records) == 0 {
			t.Fatalf("offers: %v\n%s", err, out)
		}
		skip := map[int]bool{slices.Index(records[0], "observed_at"): true, slices.Index(records[0], "run_id"): true}
		var rows []string
		for _, r := range records {
			var cells []string
			for i, c := range r {
				if !skip[i] {
					cells = append(cells, c)
				}
			}
			rows = append(rows, strings.Join(cells, ","))
		}
		return strings.Join(rows, "\n")
	}
	if diff := cmp.Diff(market(singleCfg), market(clusterCfg)); diff != "" {
		t.Errorf("offers differ (-single +cluster):\n%s", diff)
	}
	// Daily history of every GPU model, from the rollups.
	ctx := context.Background()
	cs, err := store.Open(ctx, "clickhouse://default@"+clusterNodes[0]+"/"+db, store.Options{Cluster: "gpucost"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	now := time.Now()
	for _, gpu := range []string{"H100-SXM-80GB", "A100-SXM-80GB", "RTX-4090-24GB", "L40S-48GB", "B200-SXM-180GB"} {
		q := schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{gpu}}, From: now.Add(-48 * time.Hour), To: now.Add(time.Hour), Interval: schema.Day}
		a, err := single.store.History(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		b, err := cs.History(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if len(a) == 0 {
			t.Errorf("no history for %s on the single server", gpu)
		}
		if diff := cmp.Diff(a, b, cmpDecimal); diff != "" {
			t.Errorf("history of %s differs (-single +cluster):\n%s", gpu, diff)
		}
	}
	// The optimizer's plan, minus its time.
	plan := func(cfg string) []optimizer.PlanItem {
		items := optimizeJSON(t, cfg)
		for i := range items {
			items[i].GeneratedAt, items[i].RunID = time.Time{}, ""
		}
		return items
	}
	ignoreTimes := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".ObservedAt" }, cmp.Ignore())
	if diff := cmp.Diff(plan(singleCfg), plan(clusterCfg), cmpDecimal, ignoreTimes); diff != "" {
		t.Errorf("plans differ (-single +cluster):\n%s", diff)
	}
}

func TestClusterReplicasStoppedDuringARunLoseAndDoubleNothing(t *testing.T) {
	db, section := clusterDB(t)
	var once sync.Once
	stopped := false
	// Node 2 (shard 01) and node 3 (shard 02) go down while the providers are being fetched.
	// Node 3 is the replica gpucost prefers for shard 02 (the first one), so its writes fail over
	// to node 4; node 1, gpucost's own node, keeps taking shard 01's.
	stop := func(w http.ResponseWriter, r *http.Request) bool {
		once.Do(func() {
			for _, n := range []string{"2", "3"} {
				if out, err := exec.Command(clusterScript, "stop-node", n).CombinedOutput(); err != nil {
					t.Errorf("stopping node %s: %v\n%s", n, err, out)
				}
			}
			stopped = true
		})
		return false
	}
	x := newE2E(t, map[string]func(http.ResponseWriter, *http.Request) bool{"coreweave": stop})
	t.Cleanup(func() {
		for _, n := range []string{"2", "3"} {
			exec.Command(clusterScript, "start-node", n).Run()
		}
	})
	// The e2e config with its fake providers, pointed at the cluster instead.
	cfgText, err := os.ReadFile(x.configPath)
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(cfgText), "scrape:")
	cfg := writeConfigFile(t, section+"scrape:"+rest)
	if code, out := runCLI("migrate", "--config", cfg); code != exitOK {
		t.Fatalf("migrate --cluster: exit %d\n%s", code, out)
	}
	code, out := runCLI("scrape", "--config", cfg)
	if code != exitOK || !stopped {
		t.Fatalf("scrape with two replicas down: exit %d (nodes stopped: %v)\n%s", code, stopped, out)
	}
	loaded := storedTotal(t, out)
	for _, n := range []string{"2", "3"} {
		if out, err := exec.Command(clusterScript, "start-node", n).CombinedOutput(); err != nil {
			t.Fatalf("starting node %s: %v\n%s", n, err, out)
		}
	}
	// The restarted replicas catch up from ZooKeeper's replication log.
	counts := make([]int, 4)
	deadline := time.Now().Add(60 * time.Second)
	for {
		for i, n := range clusterNodes {
			counts[i], _ = countRowsOn(n, db, "SELECT count() FROM offers_local")
		}
		if counts[0] == counts[1] && counts[2] == counts[3] && counts[0]+counts[2] == loaded {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replicas did not converge: offers_local per node %v, %d loaded", counts, loaded)
		}
		time.Sleep(500 * time.Millisecond)
	}
	if counts[0] == 0 || counts[2] == 0 {
		t.Errorf("offers not spread over both shards: %v", counts)
	}
	total, err := countRowsOn(clusterNodes[0], db, "SELECT count() FROM offers")
	if err != nil || total != loaded {
		t.Errorf("offers through the Distributed table: %d (%v), want %d", total, err, loaded)
	}
	runs, _ := countRowsOn(clusterNodes[0], db, "SELECT count() FROM scrape_runs")
	if runs != defaultProviders(t) {
		t.Errorf("%d run-log rows, want %d (one per provider)", runs, defaultProviders(t))
	}
}

func writeConfigFile(t *testing.T, content string) string {
	t.Helper()
	path := t.TempDir() + "/gpucost.yaml"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
