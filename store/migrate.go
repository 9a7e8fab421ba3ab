package store

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"time"

	"github.com/gpucost/gpucost/schema"
)

// MigrateResult says what Migrate did.
type MigrateResult struct {
	Applied []string // migrations applied by this call, in order
	Current int      // the schema version after the call
}

// Migrate creates the database if needed and applies the embedded migrations not yet recorded in
// its schema_migrations table, in version order. Call it before any other method of the Store,
// not concurrently with them: when it creates the database it replaces the connection pool. It
// is safe to run again, and two processes
// running it at once (two cron jobs starting together) both succeed: every statement is
// idempotent, and a migration recorded twice is read once. A migration that fails half-way
// returns an error naming the file and statement; running Migrate again completes it. Last, it
// writes the final daily rows of the completed days that have none or a stale one (final.go):
// the back-fill of the days stored before migration 0012.
func (s *Store) Migrate(ctx context.Context) (MigrateResult, error) {
	return s.MigrateFS(ctx, schema.Migrations)
}

// MigrateFS is Migrate with the migrations read from fsys instead of the embedded ones.
func (s *Store) MigrateFS(ctx context.Context, fsys fs.FS) (MigrateResult, error) {
	migrations, err := schema.LoadMigrations(fsys)
	if err != nil {
		return MigrateResult{}, err
	}
	createDB := "CREATE DATABASE IF NOT EXISTS " + quoteIdent(s.database)
	if s.cluster != "" {
		createDB += " ON CLUSTER " + quoteIdent(s.cluster)
	}
	if err := s.conn.Exec(s.ctx(ctx), createDB); err != nil {
		return MigrateResult{}, fmt.Errorf("creating database %s at %s: %w", s.database, s.addr, err)
	}
	if s.missing {
		// The pool points at the server's default database; the migrations' unqualified names
		// must land in ours.
		conn, err := s.connect(ctx)
		if err != nil {
			return MigrateResult{}, err
		}
		s.conn.Close()
		s.conn, s.missing = conn, false
	}
	tables := clusterTables([]string{s.migrationsTableDDL()})
	for _, m := range migrations {
		maps.Copy(tables, clusterTables(m.Statements))
	}
	run, err := s.statements(s.migrationsTableDDL(), tables)
	if err == nil {
		err = s.execAll(ctx, run)
	}
	if err != nil {
		return MigrateResult{}, fmt.Errorf("creating schema_migrations in %s at %s: %w", s.database, s.addr, err)
	}
	applied, err := s.appliedMigrations(ctx)
	if err != nil {
		return MigrateResult{}, err
	}
	var res MigrateResult
	for _, m := range migrations {
		if sum, ok := applied[m.Version]; ok {
			if sum != m.Checksum {
				return res, fmt.Errorf("migration %s was changed after it was applied to %s (checksum %.12s…, recorded %.12s…): add a new migration instead", m.Name, s.database, m.Checksum, sum)
			}
			res.Current = m.Version
			continue
		}
		for i, stmt := range m.Statements {
			run, err := s.statements(stmt, tables)
			if err == nil {
				err = s.execAll(ctx, run)
			}
			if err != nil {
				return res, fmt.Errorf("applying migration %s (statement %d of %d) to %s at %s: %w; fix the cause and run migrate again", m.Name, i+1, len(m.Statements), s.database, s.addr, err)
			}
		}
		if err := s.recordMigration(ctx, m); err != nil {
			return res, err
		}
		// Debug: the caller reports what was applied (MigrateResult; gpucost migrate prints it).
		s.logger.Debug("Applied migration", "migration", m.Name, "database", s.database)
		res.Applied = append(res.Applied, m.Name)
		res.Current = m.Version
	}
	if s.cluster != "" {
		if err := s.ensureShardingKeys(ctx, tables); err != nil {
			return res, err
		}
	}
	if tables["offers_daily_final"] {
		// The days stored before migration 0012, and those that got rows outside the loads.
		if _, err := s.finalizeStale(ctx); err != nil {
			return res, err
		}
	}
	return res, nil
}

// statements returns what to run for one migration statement: itself on a single server, its
// cluster form (cluster.go, with tables from clusterTables) in cluster mode; each as this server
// takes it (serverVersion.ddl).
func (s *Store) statements(stmt string, tables map[string]bool) ([]ddl, error) {
	stmts := []string{stmt}
	if s.cluster != "" {
		var err error
		c := clusterSchema{db: s.database, cluster: s.cluster, tables: tables, recreateDistributed: !s.version.altersDistributedOnCluster()}
		if stmts, err = clusterStatements(stmt, c); err != nil {
			return nil, err
		}
	}
	out := make([]ddl, len(stmts))
	for i, st := range stmts {
		out[i] = s.version.ddl(st)
	}
	return out, nil
}

func (s *Store) execAll(ctx context.Context, stmts []ddl) error {
	for _, d := range stmts {
		if d.column != "" {
			var n uint64
			if err := s.conn.QueryRow(s.ctx(ctx), "SELECT count() FROM system.columns WHERE database = ? AND table = ? AND name = ?",
				s.database, d.table, d.column).Scan(&n); err != nil {
				return fmt.Errorf("looking for column %s of %s: %w", d.column, d.table, err)
			}
			if n > 0 {
				s.logger.Debug("Column already added", "table", d.table, "column", d.column)
				continue
			}
		}
		err := s.conn.Exec(s.ctx(ctx), d.sql)
		if err != nil && d.columnExistsIsApplied && columnExists(err) {
			s.logger.Debug("Column already added", "statement", d.sql)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// SchemaVersion returns the highest migration version applied, 0 for an empty database.
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	applied, err := s.appliedMigrations(ctx)
	if err != nil {
		return 0, err
	}
	top := 0
	for v := range applied {
		top = max(top, v)
	}
	return top, nil
}

func (s *Store) appliedMigrations(ctx context.Context) (map[int]string, error) {
	rows, err := s.conn.Query(s.ctx(ctx), s.appliedMigrationsQuery())
	if err != nil {
		return nil, s.queryError("reading schema_migrations", err)
	}
	defer rows.Close()
	out := map[int]string{}
	for rows.Next() {
		var v uint32
		var sum string
		if err := rows.Scan(&v, &sum); err != nil {
			return nil, fmt.Errorf("reading schema_migrations: %w", err)
		}
		out[int(v)] = sum
	}
	return out, rows.Err()
}

func (s *Store) recordMigration(ctx context.Context, m schema.Migration) error {
	batch, err := s.conn.PrepareBatch(s.ctx(ctx), "INSERT INTO "+s.table("schema_migrations")+" (version, name, checksum, applied_at)")
	if err != nil {
		return fmt.Errorf("recording migration %s: %w", m.Name, err)
	}
	defer batch.Close()
	if err := batch.Append(uint32(m.Version), m.Name, m.Checksum, s.now().UTC().Truncate(time.Second)); err != nil {
		return fmt.Errorf("recording migration %s: %w", m.Name, err)
	}
	if err := batch.Send(); err != nil {
		return fmt.Errorf("recording migration %s: %w", m.Name, err)
	}
	return nil
}

// migrationsTableDDL creates the table that records applied migrations. A migration recorded
// twice (two migrators at once) is one row after merges and one version when read.
func (s *Store) migrationsTableDDL() string {
	return `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    UInt32,
		name       String,
		checksum   String,
		applied_at DateTime('UTC')
	) ENGINE = ReplacingMergeTree ORDER BY version`
}

func (s *Store) appliedMigrationsQuery() string {
	return `SELECT version, any(checksum) FROM ` + s.table("schema_migrations") + ` GROUP BY version`
}
