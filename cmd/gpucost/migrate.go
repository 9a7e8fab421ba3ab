package main

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/gpucost/gpucost/store"
)

func runMigrate(ctx context.Context, e env, args []string) int {
	fs := newFlags("migrate", "[--dsn DSN]", `Create the ClickHouse database and tables, or upgrade them to this version's schema.
Safe to run again and from two jobs at once; a migration interrupted half-way is completed by the
next run. The DSN comes from --dsn, else GPUCOST_CLICKHOUSE_DSN, else the local server of
'make clickhouse' (`+store.DefaultDSN+`).`)
	dsn := fs.String("dsn", "", "ClickHouse DSN, clickhouse://user:password@host:9000/database (default $GPUCOST_CLICKHOUSE_DSN or the local server)")
	if code := fs.parse(e, args); code >= 0 {
		return code
	}
	logger := newLogger(e)
	s, err := store.Open(ctx, clickhouseDSN(e, *dsn), store.Options{Logger: logger})
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

// clickhouseDSN picks the DSN: the flag, else the environment, else the local server.
func clickhouseDSN(e env, flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if v := e.getenv("GPUCOST_CLICKHOUSE_DSN"); v != "" {
		return v
	}
	return store.DefaultDSN
}

// newLogger returns the structured logger commands hand to the packages they call.
func newLogger(e env) *slog.Logger {
	return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
