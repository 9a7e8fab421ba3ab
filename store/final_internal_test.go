package store

import (
	"strings"
	"testing"

	"github.com/gpucost/gpucost/schema"
)

// TestClusterStatementsOfTheFinalRows: in cluster mode offers_daily_final is a replicated
// ReplacingMergeTree under a Distributed table that puts a day's rows on one shard.
func TestClusterStatementsOfTheFinalRows(t *testing.T) {
	migrations, err := schema.LoadMigrations(schema.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	for _, m := range migrations {
		all = append(all, m.Statements...)
	}
	var out []string
	for _, stmt := range all {
		if !strings.Contains(stmt, "offers_daily_final") {
			continue
		}
		got, err := clusterStatements(stmt, clusterSchema{db: "gpucost", cluster: "prod", tables: clusterTables(all)})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, got...)
	}
	joined := strings.Join(out, "\n;\n")
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS `gpucost`.`offers_daily_final_local` ON CLUSTER `prod` (",
		"ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/gpucost/offers_daily_final_local', '{replica}', version)\nORDER BY (gpu_model, provider, price_type, day)",
		"CREATE TABLE IF NOT EXISTS `gpucost`.`offers_daily_final` ON CLUSTER `prod` AS `gpucost`.`offers_daily_final_local` ENGINE = Distributed(`prod`, `gpucost`, `offers_daily_final_local`, toYYYYMMDD(day))",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("cluster statements lack %q:\n%s", want, joined)
		}
	}
}
