package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Cluster mode: the same migrations, created on every node of a ClickHouse cluster.
//
// Each MergeTree-family table T of the migrations becomes
//   - T_local ON CLUSTER, with the Replicated variant of its engine (one replica set per shard,
//     coordinated through ZooKeeper or ClickHouse Keeper: the {shard} and {replica} macros of
//     each node's config), holding the rows; and
//   - T ON CLUSTER, a Distributed table over T_local on every shard, through which gpucost and
//     analysts read and write, so every query of the single-server schema works unchanged.
//
// A migration's ALTER TABLE T of such a table alters T_local ON CLUSTER and then the Distributed
// T (the rows' table first, so the table gpucost writes through never names a column the shards
// lack): with the same ALTER ON CLUSTER, or, on servers that refuse to ALTER a table that is not
// replicated ON CLUSTER of shards that are (18.16: code 371, see
// serverVersion.altersDistributedOnCluster), by creating T again over the altered T_local. A
// Distributed table holds no rows of its own (gpucost inserts synchronously), but while it is
// created again, queries and inserts through it fail. Other statements keep their shape and gain
// ON CLUSTER.
//
// Materialized views run on each shard, from the local source table into the local target
// (offers_local → offers_daily_local, offers_latest_local). Plain views read the Distributed
// tables. Offers are sharded by their key (provider, offer_id, price_type), so every
// observation of one offer lands on one shard: offers_latest's replacing merge and the
// price_changes view see all of an offer's history in one place.
//
// A Distributed table created before its table got a sharding key here keeps the old one:
// Migrate creates it again (ensureShardingKeys).
//
// No doubles across replicas: inserts go through the Distributed table synchronously
// (insert_distributed_sync=1), so an insert returns only once a replica of every shard holds
// it, and the store reads and writes the same replica of each shard (load_balancing=in_order:
// the first healthy one), so the run-id check of CompleteBatch sees what was just written instead
// of a replica still fetching it. Replicated tables also drop an identical block inserted again
// (insert deduplication), which covers a retried insert.

// shardingKeys are the Distributed sharding expressions of tables whose rows must stay together;
// the others spread rows at random. offers_latest's rows are written by its view on the shard of
// their offers, and by the store's repair (rollups.go) through the Distributed table: both must
// reach the same shard, or FINAL (per shard) would keep two rows of one key. A day's final rows
// (final.go) go to one shard, so that their insert is all or nothing there too.
var shardingKeys = map[string]string{
	"offers":             "cityHash64(provider, offer_id, price_type)",
	"offers_latest":      "cityHash64(provider, offer_id, price_type)",
	"offers_daily_final": "toYYYYMMDD(day)",
}

var (
	reCreateTable = regexp.MustCompile(`^CREATE TABLE IF NOT EXISTS (\w+)\s*(\(|AS (\w+)\s)`)
	reEngine      = regexp.MustCompile(`ENGINE = (\w*)MergeTree(?:\(([^)]*)\))?`)
	reCreateMV    = regexp.MustCompile(`^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS`)
	reCreateView  = regexp.MustCompile(`^CREATE VIEW IF NOT EXISTS (\w+) AS`)
	reFrom        = regexp.MustCompile(`\b(FROM|JOIN)\s+(\w+)\b(\s*\()?`)
	reAlterTable  = regexp.MustCompile(`^ALTER TABLE (\w+)\s`)
	reDropTable   = regexp.MustCompile(`^DROP TABLE IF EXISTS (\w+)$`)
)

// clusterTables returns the tables the statements create, each with whether its engine is of the
// MergeTree family (in cluster mode a replicated T_local under a Distributed T) or not (the same
// table on every node). clusterStatements needs it for statements that only name a table.
func clusterTables(stmts []string) map[string]bool {
	out := map[string]bool{}
	for _, stmt := range stmts {
		if sub := reCreateTable.FindStringSubmatch(stmt); sub != nil {
			out[sub[1]] = reEngine.MatchString(stmt)
		}
	}
	return out
}

// clusterSchema is what clusterStatements needs to know beyond a statement.
type clusterSchema struct {
	db, cluster string
	// tables is clusterTables of every migration.
	tables map[string]bool
	// recreateDistributed: ALTER a Distributed table by creating it again
	// (!serverVersion.altersDistributedOnCluster).
	recreateDistributed bool
}

// distributed creates T over T_local on every shard.
func (c clusterSchema) distributed(name string) string {
	q := func(name string) string { return quoteIdent(c.db) + "." + quoteIdent(name) }
	key := shardingKeys[name]
	if key == "" {
		key = "rand()"
	}
	return fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s ON CLUSTER %s AS %s ENGINE = Distributed(%s, %s, %s, %s)",
		q(name), quoteIdent(c.cluster), q(name+"_local"), quoteIdent(c.cluster), quoteIdent(c.db), quoteIdent(name+"_local"), key)
}

// clusterStatements rewrites one statement of a migration for the cluster. The migrations
// follow a few shapes (CREATE TABLE with columns or AS another table, with a MergeTree engine or
// another engine, CREATE MATERIALIZED VIEW … TO, CREATE VIEW, ALTER TABLE of a table the
// migrations create, DROP TABLE IF EXISTS of a view to create it again); anything else is an
// error naming the statement, so a migration that cluster mode cannot express fails loudly
// instead of changing one node.
func clusterStatements(stmt string, c clusterSchema) ([]string, error) {
	db, cluster := c.db, c.cluster
	q := func(name string) string { return quoteIdent(db) + "." + quoteIdent(name) }
	on := " ON CLUSTER " + quoteIdent(cluster)
	distributed := c.distributed
	switch {
	case reCreateTable.MatchString(stmt):
		sub := reCreateTable.FindStringSubmatch(stmt)
		name := sub[1]
		// The head of the statement up to its columns, or to the table it copies them from.
		head := func(table string) string {
			if sub[3] != "" { // CREATE TABLE t AS other ENGINE = …: copy the other's local table
				return "CREATE TABLE IF NOT EXISTS " + q(table) + on + " AS " + q(sub[3]+"_local") + "\n"
			}
			return "CREATE TABLE IF NOT EXISTS " + q(table) + on + " ("
		}
		m := reEngine.FindStringSubmatchIndex(stmt)
		if m == nil { // Memory, Log…: the same table on every node
			return []string{reCreateTable.ReplaceAllLiteralString(stmt, head(name))}, nil
		}
		variant := stmt[m[2]:m[3]]
		args := ""
		if m[4] >= 0 {
			args = strings.TrimSpace(stmt[m[4]:m[5]])
		}
		local := name + "_local"
		engine := fmt.Sprintf("ENGINE = Replicated%sMergeTree('/clickhouse/tables/{shard}/%s/%s', '{replica}'", variant, db, local)
		if args != "" {
			engine += ", " + args
		}
		engine += ")"
		localDDL := reCreateTable.ReplaceAllLiteralString(stmt[:m[0]]+engine+stmt[m[1]:], head(local))
		return []string{localDDL, distributed(name)}, nil
	case reCreateMV.MatchString(stmt):
		sub := reCreateMV.FindStringSubmatch(stmt)
		body := stmt[len(sub[0]):]
		// The view runs where the rows are inserted: on each shard, local table to local table.
		body = qualifyFrom(body, func(t string) string { return q(t + "_local") })
		return []string{fmt.Sprintf("CREATE MATERIALIZED VIEW IF NOT EXISTS %s%s TO %s AS%s", q(sub[1]), on, q(sub[2]+"_local"), body)}, nil
	case reCreateView.MatchString(stmt):
		sub := reCreateView.FindStringSubmatch(stmt)
		body := qualifyFrom(stmt[len(sub[0]):], q)
		return []string{fmt.Sprintf("CREATE VIEW IF NOT EXISTS %s%s AS%s", q(sub[1]), on, body)}, nil
	case reAlterTable.MatchString(stmt):
		sub := reAlterTable.FindStringSubmatch(stmt)
		name, rest := sub[1], stmt[len(sub[0]):]
		mergeTree, known := c.tables[name]
		if !known {
			return nil, fmt.Errorf("cluster mode cannot express the statement %q: no migration creates the table %s", firstLine(stmt), name)
		}
		if !mergeTree {
			return []string{"ALTER TABLE " + q(name) + on + " " + rest}, nil
		}
		local := "ALTER TABLE " + q(name+"_local") + on + " " + rest
		if c.recreateDistributed {
			return []string{local, "DROP TABLE IF EXISTS " + q(name) + on, distributed(name)}, nil
		}
		return []string{local, "ALTER TABLE " + q(name) + on + " " + rest}, nil
	case reDropTable.MatchString(stmt):
		name := reDropTable.FindStringSubmatch(stmt)[1]
		if _, table := c.tables[name]; table {
			return nil, fmt.Errorf("cluster mode cannot express the statement %q: migrations drop views, not the table %s", stmt, name)
		}
		return []string{"DROP TABLE IF EXISTS " + q(name) + on}, nil
	}
	return nil, fmt.Errorf("cluster mode cannot express the statement %q (supported: CREATE TABLE IF NOT EXISTS, CREATE MATERIALIZED VIEW IF NOT EXISTS … TO, CREATE VIEW IF NOT EXISTS, ALTER TABLE, DROP TABLE IF EXISTS of a view)", firstLine(stmt))
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// qualifyFrom rewrites the table names after FROM and JOIN with name; subqueries and table
// functions (a name followed by a parenthesis) are left alone.
func qualifyFrom(sql string, name func(string) string) string {
	return reFrom.ReplaceAllStringFunc(sql, func(m string) string {
		sub := reFrom.FindStringSubmatch(m)
		if sub[3] != "" { // table function, e.g. numbers(10)
			return m
		}
		return sub[1] + " " + name(sub[2])
	})
}

// ensureShardingKeys creates again, on the cluster, each Distributed table of shardingKeys whose
// sharding expression is another one (a table created before its key was added here). A
// Distributed table holds no rows; queries and inserts through it fail while it is created.
func (s *Store) ensureShardingKeys(ctx context.Context, tables map[string]bool) error {
	names := make([]string, 0, len(shardingKeys))
	for name := range shardingKeys {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if !tables[name] {
			continue
		}
		var engine string
		err := s.conn.QueryRow(s.ctx(ctx), "SELECT engine_full FROM system.tables WHERE database = ? AND name = ?", s.database, name).Scan(&engine)
		if errors.Is(err, sql.ErrNoRows) {
			// Listed when this migrate began, gone now: another migrate running at the same
			// time is creating it again (on a server that cannot alter a Distributed table on
			// the cluster, a migration drops it and creates it anew), with its sharding key.
			continue
		}
		if err != nil {
			return fmt.Errorf("reading the engine of %s in %s at %s: %w", name, s.database, s.addr, err)
		}
		squeeze := strings.NewReplacer(" ", "", "`", "")
		if !strings.HasPrefix(engine, "Distributed(") || strings.HasSuffix(squeeze.Replace(engine), ","+squeeze.Replace(shardingKeys[name])+")") {
			continue
		}
		c := clusterSchema{db: s.database, cluster: s.cluster}
		stmts := []string{"DROP TABLE IF EXISTS " + quoteIdent(s.database) + "." + quoteIdent(name) + " ON CLUSTER " + quoteIdent(s.cluster), c.distributed(name)}
		for _, stmt := range stmts {
			if err := s.conn.Exec(s.ctx(ctx), stmt); err != nil {
				return fmt.Errorf("creating %s again with the sharding key %s in %s at %s: %w", name, shardingKeys[name], s.database, s.addr, err)
			}
		}
		s.logger.Info("Created a Distributed table again with its sharding key", "table", name, "key", shardingKeys[name], "database", s.database)
	}
	return nil
}
