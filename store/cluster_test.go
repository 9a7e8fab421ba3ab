package store

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

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
	tables := clusterTables(all)
	const addValidUntil = " ON CLUSTER `prod` ADD COLUMN IF NOT EXISTS valid_until Nullable(DateTime('UTC')) AFTER observed_at\n;\n"
	created := []string{
		"CREATE TABLE IF NOT EXISTS `gpucost`.`offers_local` ON CLUSTER `prod` (",
		"ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/gpucost/offers_local', '{replica}')",
		"CREATE TABLE IF NOT EXISTS `gpucost`.`offers` ON CLUSTER `prod` AS `gpucost`.`offers_local` ENGINE = Distributed(`prod`, `gpucost`, `offers_local`, cityHash64(provider, offer_id, price_type))",
		"CREATE TABLE IF NOT EXISTS `gpucost`.`offers_latest_local` ON CLUSTER `prod` AS `gpucost`.`offers_local`\nENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/gpucost/offers_latest_local', '{replica}', observed_at)",
		"CREATE TABLE IF NOT EXISTS `gpucost`.`offers_latest` ON CLUSTER `prod` AS `gpucost`.`offers_latest_local` ENGINE = Distributed(`prod`, `gpucost`, `offers_latest_local`, cityHash64(provider, offer_id, price_type))",
		"ENGINE = ReplicatedAggregatingMergeTree('/clickhouse/tables/{shard}/gpucost/offers_daily_local', '{replica}')",
		"CREATE MATERIALIZED VIEW IF NOT EXISTS `gpucost`.`offers_daily_mv` ON CLUSTER `prod` TO `gpucost`.`offers_daily_local` AS",
		"FROM `gpucost`.`offers_local`",
		"CREATE VIEW IF NOT EXISTS `gpucost`.`latest_offers` ON CLUSTER `prod` AS",
		"FROM `gpucost`.`offers_latest` FINAL",
		"ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/gpucost/schema_migrations_local', '{replica}')",
		// 0011: the views created again with the runs fingerprint, from the shard's own offers.
		"DROP TABLE IF EXISTS `gpucost`.`offers_daily_mv` ON CLUSTER `prod`\n;\nCREATE MATERIALIZED VIEW IF NOT EXISTS `gpucost`.`offers_daily_mv` ON CLUSTER `prod` TO `gpucost`.`offers_daily_local` AS",
		"    sumMapState([cityHash64(run_id)], [cityHash64(offer_id, price_type)]) AS runs\nFROM `gpucost`.`offers_local`\nGROUP BY",
		"ALTER TABLE `gpucost`.`offers_daily_sums_local` ON CLUSTER `prod` ADD COLUMN IF NOT EXISTS runs AggregateFunction(sumMap, Array(UInt64), Array(UInt64))",
	}
	// 0010: the rows' tables before the Distributed ones, offers_latest before offers, and
	// latest_offers created again after both.
	recreatedView := "DROP TABLE IF EXISTS `gpucost`.`latest_offers` ON CLUSTER `prod`\n;\n" +
		"CREATE VIEW IF NOT EXISTS `gpucost`.`latest_offers` ON CLUSTER `prod` AS\nSELECT * FROM `gpucost`.`offers_latest` FINAL"
	tests := []struct {
		name                string
		recreateDistributed bool
		want                []string
	}{
		{"servers that ALTER a Distributed table ON CLUSTER", false, append(created,
			"ALTER TABLE `gpucost`.`offers_latest_local`"+addValidUntil+
				"ALTER TABLE `gpucost`.`offers_latest`"+addValidUntil+
				"ALTER TABLE `gpucost`.`offers_local`"+addValidUntil+
				"ALTER TABLE `gpucost`.`offers`"+addValidUntil+recreatedView)},
		{"18.16: Distributed tables created again", true, append(created,
			"ALTER TABLE `gpucost`.`offers_latest_local`"+addValidUntil+
				"DROP TABLE IF EXISTS `gpucost`.`offers_latest` ON CLUSTER `prod`\n;\n"+
				"CREATE TABLE IF NOT EXISTS `gpucost`.`offers_latest` ON CLUSTER `prod` AS `gpucost`.`offers_latest_local` ENGINE = Distributed(`prod`, `gpucost`, `offers_latest_local`, cityHash64(provider, offer_id, price_type))\n;\n"+
				"ALTER TABLE `gpucost`.`offers_local`"+addValidUntil+
				"DROP TABLE IF EXISTS `gpucost`.`offers` ON CLUSTER `prod`\n;\n"+
				"CREATE TABLE IF NOT EXISTS `gpucost`.`offers` ON CLUSTER `prod` AS `gpucost`.`offers_local` ENGINE = Distributed(`prod`, `gpucost`, `offers_local`, cityHash64(provider, offer_id, price_type))\n;\n"+
				recreatedView)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out []string
			for _, stmt := range all {
				got, err := clusterStatements(stmt, clusterSchema{db: "gpucost", cluster: "prod", tables: tables, recreateDistributed: tt.recreateDistributed})
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
			for _, want := range tt.want {
				if !strings.Contains(joined, want) {
					t.Errorf("cluster DDL lacks %s", want)
				}
			}
		})
	}
}

func TestClusterStatementsOfAlterAndDrop(t *testing.T) {
	tables := clusterTables([]string{
		"CREATE TABLE IF NOT EXISTS offers (x UInt8) ENGINE = MergeTree ORDER BY x",
		"CREATE TABLE IF NOT EXISTS offers_latest AS offers\nENGINE = ReplacingMergeTree(x)\nORDER BY x",
		"CREATE TABLE IF NOT EXISTS scratch (x UInt8) ENGINE = Memory",
	})
	tests := []struct {
		name     string
		stmt     string
		recreate bool // the Distributed table is created again (18.16)
		want     []string
		wantErr  string
	}{
		{"ALTER of a MergeTree table: its local table, then the Distributed one",
			"ALTER TABLE offers ADD COLUMN IF NOT EXISTS y UInt8", false,
			[]string{"ALTER TABLE `gpucost`.`offers_local` ON CLUSTER `prod` ADD COLUMN IF NOT EXISTS y UInt8",
				"ALTER TABLE `gpucost`.`offers` ON CLUSTER `prod` ADD COLUMN IF NOT EXISTS y UInt8"}, ""},
		{"ALTER of a MergeTree table on 18.16: its local table, then the Distributed one again",
			"ALTER TABLE offers ADD COLUMN IF NOT EXISTS y UInt8", true,
			[]string{"ALTER TABLE `gpucost`.`offers_local` ON CLUSTER `prod` ADD COLUMN IF NOT EXISTS y UInt8",
				"DROP TABLE IF EXISTS `gpucost`.`offers` ON CLUSTER `prod`",
				"CREATE TABLE IF NOT EXISTS `gpucost`.`offers` ON CLUSTER `prod` AS `gpucost`.`offers_local` ENGINE = Distributed(`prod`, `gpucost`, `offers_local`, cityHash64(provider, offer_id, price_type))"}, ""},
		{"ALTER of a table created AS another",
			"ALTER TABLE offers_latest ADD COLUMN IF NOT EXISTS y UInt8 AFTER x", false,
			[]string{"ALTER TABLE `gpucost`.`offers_latest_local` ON CLUSTER `prod` ADD COLUMN IF NOT EXISTS y UInt8 AFTER x",
				"ALTER TABLE `gpucost`.`offers_latest` ON CLUSTER `prod` ADD COLUMN IF NOT EXISTS y UInt8 AFTER x"}, ""},
		{"ALTER of a table of another engine: the same table on every node",
			"ALTER TABLE scratch ADD COLUMN IF NOT EXISTS y UInt8", true,
			[]string{"ALTER TABLE `gpucost`.`scratch` ON CLUSTER `prod` ADD COLUMN IF NOT EXISTS y UInt8"}, ""},
		{"ALTER of a table no migration creates", "ALTER TABLE nowhere ADD COLUMN IF NOT EXISTS y UInt8", false, nil, "no migration creates the table nowhere"},
		{"DROP of a view", "DROP TABLE IF EXISTS latest_offers", false, []string{"DROP TABLE IF EXISTS `gpucost`.`latest_offers` ON CLUSTER `prod`"}, ""},
		{"DROP of a table", "DROP TABLE IF EXISTS offers", false, nil, "migrations drop views, not the table offers"},
		{"another statement", "RENAME TABLE offers TO old_offers", false, nil, `cannot express the statement "RENAME TABLE offers TO old_offers"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := clusterStatements(tt.stmt, clusterSchema{db: "gpucost", cluster: "prod", tables: tables, recreateDistributed: tt.recreate})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("cluster statements (-want +got):\n%s", diff)
			}
		})
	}
}
