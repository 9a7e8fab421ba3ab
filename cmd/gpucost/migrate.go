package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/gpucost/gpucost/store"
)

func runMigrate(ctx context.Context, e env, args []string) int {
	fs := newFlags("migrate", "[--dsn DSN] [--cluster NAME]", `Create the ClickHouse database and tables, or upgrade them to this version's schema.
Safe to run again and from two jobs at once; a migration interrupted half-way is completed by the
next run. The DSN comes from --dsn, else clickhouse.dsn of the config (GPUCOST_CLICKHOUSE_DSN),
by default the local server of 'make clickhouse' (`+store.DefaultDSN+`).

With --cluster NAME (or clickhouse.cluster), the same migrations create, ON CLUSTER NAME,
replicated local tables (TABLE_local, Replicated*MergeTree) and Distributed tables under the
usual names, which every gpucost command then reads and writes. The servers need the cluster in
remote_servers, {shard} and {replica} macros, and ZooKeeper or ClickHouse Keeper
(deploy/clickhouse-cluster has a 2 × 2 example).`)
	fs.withConfig()
	dsn := fs.String("dsn", "", "ClickHouse DSN, clickhouse://user:password@host:9000/database (default clickhouse.dsn)")
	cluster := fs.String("cluster", "", "create the schema on this ClickHouse cluster (default clickhouse.cluster)")
	if code := fs.parse(e, args); code >= 0 {
		return code
	}
	cfg, code := fs.config(e)
	if code >= 0 {
		return code
	}
	if *dsn != "" {
		cfg.ClickHouse.DSN = *dsn
	}
	if *cluster != "" {
		cfg.ClickHouse.Cluster = *cluster
	}
	logger := newLogger(e)
	s, err := storeFromConfig(ctx, cfg.ClickHouse, logger)
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost migrate: %v\n", err)
		return exitFailed
	}
	defer s.Close()
	res, err := s.Migrate(ctx)
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost migrate: %v\n", err)
		return exitFailed
	}
	if len(res.Applied) == 0 {
		fmt.Fprintf(e.stdout, "database %s is up to date (schema version %d, ClickHouse %s)\n", s.Database(), res.Current, s.ServerVersion())
		return exitOK
	}
	for _, name := range res.Applied {
		fmt.Fprintf(e.stdout, "applied %s\n", name)
	}
	fmt.Fprintf(e.stdout, "database %s is at schema version %d (ClickHouse %s)\n", s.Database(), res.Current, s.ServerVersion())
	return exitOK
}

// storeFromConfig opens the store the configuration names, in cluster mode when it names a cluster.
func storeFromConfig(ctx context.Context, c ClickHouseConfig, logger *slog.Logger) (*store.Store, error) {
	return storeWith(ctx, c, store.Options{Logger: logger})
}

// storeWith is storeFromConfig with more options (the scrape's load steps).
func storeWith(ctx context.Context, c ClickHouseConfig, opts store.Options) (*store.Store, error) {
	opts.Cluster = c.Cluster
	return store.Open(ctx, c.DSN, opts)
}

// newLogger returns the structured logger commands hand to the packages they call.
func newLogger(e env) *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
