package main

import (
	"context"
	"fmt"

	"github.com/gpucost/gpucost/store"
)

const migrateHelp = `Create the ClickHouse database and tables, or upgrade them to this version's schema.
Safe to run again and from two jobs at once; a migration interrupted half-way is completed by the
next run. The DSN comes from --dsn, else clickhouse.dsn of the config (GPUCOST_CLICKHOUSE_DSN),
by default the local server of 'make clickhouse' (` + store.DefaultDSN + `).

With --cluster NAME (or clickhouse.cluster), the same migrations create, ON CLUSTER NAME,
replicated local tables (TABLE_local, Replicated*MergeTree) and Distributed tables under the
usual names, which every gpucost command then reads and writes. The servers need the cluster in
remote_servers, {shard} and {replica} macros, and ZooKeeper or ClickHouse Keeper
(deploy/clickhouse-cluster has a 2 × 2 example).`

func runMigrate(ctx context.Context, e env, args []string) error {
	fs := newFlags("migrate", "[--dsn DSN] [--cluster NAME]", migrateHelp)
	fs.withConfig()
	dsn := fs.String("dsn", "", "ClickHouse DSN, clickhouse://user:password@host:9000/database (default clickhouse.dsn)")
	cluster := fs.String("cluster", "", "create the schema on this ClickHouse cluster (default clickhouse.cluster)")
	if err := fs.parse(e, args, 0); err != nil {
		return err
	}
	cfg, err := fs.config(e)
	if err != nil {
		return err
	}
	if *dsn != "" {
		cfg.ClickHouse.DSN = *dsn
	}
	if *cluster != "" {
		cfg.ClickHouse.Cluster = *cluster
	}
	s, err := openStore(ctx, cfg.ClickHouse, store.Options{Logger: newLogger(e)})
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.Migrate(ctx)
	if err != nil {
		return err
	}
	for _, name := range res.Applied {
		fmt.Fprintf(e.stdout, "applied %s\n", name)
	}
	state := "is up to date (schema version %d, ClickHouse %s)"
	if len(res.Applied) > 0 {
		state = "is at schema version %d (ClickHouse %s)"
	}
	fmt.Fprintf(e.stdout, "database %s "+state+"\n", s.Database(), res.Current, s.ServerVersion())
	return nil
}
