package store

import (
	"strings"
	"testing"

	"github.com/gpucost/gpucost/schema"
)

func TestClusterStatementsForEveryMigration(t *testing.T) {
	migrations, err := schema.LoadMigrations(schema.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	s := &Store{database: "gpucost"}
	all := []string{s.migrationsTableDDL()}
	for _, m := range migrations {
		all = append(all, m.Statements...)
	}
	var out []string
	for _, stmt := range all {
		got, err := clusterStatements(stmt, "gpucost", "prod")
		if err != nil {
			t.Fatalf("%v", err)
		}
		for _, g := range got {
			if !strings.Contains(g, " ON CLUSTER `prod`") {
				t.Errorf("not ON CLUSTER: %.80s", g)
			}
		}
		out = append(out, got...)
	}
	joined := strings.Join(out, "\n;\n")
	for _, want := range []string{
		"CREATE TABLE IF NOT EXISTS `gpucost`.`offers_local` ON CLUSTER `prod` (",
		"ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/gpucost/offers_local', '{replica}')",
		"CREATE TABLE IF NOT EXISTS `gpucost`.`offers` ON CLUSTER `prod` AS `gpucost`.`offers_local` ENGINE = Distributed(`prod`, `gpucost`, `offers_local`, cityHash64(provider, offer_id, price_type))",
		"CREATE TABLE IF NOT EXISTS `gpucost`.`offers_latest_local` ON CLUSTER `prod` AS `gpucost`.`offers_local`\nENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/gpucost/offers_latest_local', '{replica}', observed_at)",
		"CREATE TABLE IF NOT EXISTS `gpucost`.`offers_latest` ON CLUSTER `prod` AS `gpucost`.`offers_latest_local` ENGINE = Distributed(`prod`, `gpucost`, `offers_latest_local`, rand())",
		"ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/gpucost/offers_daily_local', '{replica}')",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS `gpucost`.`offers_daily_mv` ON CLUSTER `prod` TO `gpucost`.`offers_daily_local` AS",
		"FROM `gpucost`.`offers_local`",
		"CREATE VIEW IF NOT EXISTS `gpucost`.`latest_offers` ON CLUSTER `prod` AS",
		"FROM `gpucost`.`offers_latest` FINAL",
		"ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/gpucost/schema_migrations_local', '{replica}')",
	} {
		if !strings.Contains(joined, want) {
			t.Errorf("cluster DDL lacks %s", want)
		}
	}
	if _, err := clusterStatements("ALTER TABLE offers ADD COLUMN x UInt8", "gpucost", "prod"); err == nil || !strings.Contains(err.Error(), "cannot express") {
		t.Errorf("an unsupported statement gave %v, want a clear error", err)
	}
}
