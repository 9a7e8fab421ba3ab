// Package store is gpucost's ClickHouse adapter: it opens a connection from one DSN, applies the
// schema migrations, writes offers, raw payloads and the run log in batches, and reads the
// current market and the price history back as schema types.
//
// Loading is idempotent row by row (batch.go): CompleteBatch compares each raw payload and offer
// of a batch with what is stored of its run, provider and timestamps and inserts only what is
// missing, then checks the rollups the materialized views keep against the batch's stored offers
// and writes what a crash kept from them (rollups.go), and writes the run-log row last. So a
// batch loaded again after a load was cut off at any point (the process killed, ClickHouse
// killed, an insert that reached some parts and not others) ends with each row stored once and
// the rollups equal to what offers holds. The pipeline's spool gives it the batch again, with the
// same timestamps; errors say whether the server was out of reach (schema.ErrUnavailable) or the
// batch itself is at fault (schema.ErrRejected).
//
// A Store is the pipeline's Sink and History as it is (LoadBatch, LastGoodRuns, LatestPrices),
// without either package importing the other: the kinds of failure they share are schema's.
// Lazy (lazy.go) is the same, opened on first use, for a scrape that must spool when ClickHouse
// is down at its start.
//
// Every query binds its values through the driver (never string concatenation) and runs on both
// current ClickHouse releases (make test) and ClickHouse 18.16, Debian's package (make
// test-legacy and the cluster tests); the few differences in what the two accept are handled in
// serverVersion (version.go: query settings, the DDL of migrations), in one place, and results
// whose type differs between them (the mean of a decimal) are computed so that both give the same
// value.
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// DefaultDSN is the local development server started by `make clickhouse`.
const DefaultDSN = "clickhouse://default@127.0.0.1:19000/gpucost?dial_timeout=5s"

// ClickHouse error codes the store turns into clear messages.
const (
	codeUnknownTable         = 60
	codeUnknownDatabase      = 81
	codeWrongPassword        = 193
	codeUnknownUser          = 192
	codeAuthenticationFailed = 516
	codeRequiredPassword     = 194
	codeDuplicateColumn      = 15 // current servers: ADD COLUMN of a column the table has
	codeIllegalColumn        = 44 // 18.x: the same, among other faults of a column
	codeCannotKill           = 380
)

// Options tune a Store beyond what the DSN says.
type Options struct {
	// Logger receives the driver's and the store's logs; nil discards them.
	Logger *slog.Logger
	// Now is the clock, for tests; nil means time.Now.
	Now func() time.Time
	// Cluster, when set, names the ClickHouse cluster (remote_servers) the schema lives on:
	// Migrate creates replicated local tables and Distributed tables ON CLUSTER (see
	// cluster.go); inserts through the Distributed tables wait for every shard, and reads go to
	// the replica written to (serverVersion.settings).
	Cluster string
	// OnLoadStep, when set, is called as CompleteBatch finishes each of its steps (LoadSteps), so a
	// fault-injection test can stop the process between any two of them.
	OnLoadStep func(step string)
}

// Store reads and writes gpucost's tables. It is safe for concurrent use.
type Store struct {
	conn     driver.Conn
	chOpts   *clickhouse.Options
	missing  bool // the database did not exist at Open; Migrate creates it and reconnects
	cluster  string
	database string
	addr     string // host:port list for messages; never includes credentials
	user     string
	version  serverVersion
	logger   *slog.Logger
	now      func() time.Time

	onLoadStep  func(step string)
	shareOffers int // of a load's insert; 0 means the constant

	mu           sync.Mutex
	shardWeights uint64              // the cluster's total shard weight, read on first use
	tableColumns map[string][]string // column lists, read on first use
}

// Open connects to the ClickHouse server named by dsn
// (clickhouse://user:password@host:port/database?dial_timeout=5s) and checks that it answers and
// is recent enough. The database need not exist yet: Migrate creates it. Errors name the server
// and what failed, never the password.
func Open(ctx context.Context, dsn string, opts Options) (*Store, error) {
	chOpts, err := clickhouse.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("parsing ClickHouse DSN: %w", redactDSNError(err, dsn))
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// The driver warns about every server exception (which we return as errors) and about
	// every server older than its own support window (18.16 is, and works for our queries):
	// pass on its errors only.
	chOpts.Logger = slog.New(minLevel{slog.LevelError, logger.Handler()})
	database := chOpts.Auth.Database
	if database == "" {
		database = "default"
	}
	s := &Store{
		chOpts:   chOpts,
		database: database,
		addr:     strings.Join(chOpts.Addr, ","),
		user:     chOpts.Auth.Username,
		logger:   logger,
		now:      opts.Now,
		cluster:  opts.Cluster,

		onLoadStep: opts.OnLoadStep,
	}
	if s.user == "" {
		s.user = "default"
	}
	if s.now == nil {
		s.now = time.Now
	}
	conn, err := s.connect(ctx)
	if err != nil {
		return nil, err
	}
	s.conn = conn
	var v string
	if err := conn.QueryRow(ctx, "SELECT version()").Scan(&v); err != nil {
		conn.Close()
		return nil, s.connectError(err)
	}
	s.version, err = parseServerVersion(v)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("ClickHouse at %s: %w", s.addr, err)
	}
	if err := s.version.supported(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("ClickHouse at %s: %w", s.addr, err)
	}
	if sv, err := conn.ServerVersion(); err == nil {
		s.version.Revision = sv.Revision
	}
	if s.cluster != "" && !s.version.takesTextSettings() {
		if err := s.checkProfileLoadBalancing(ctx); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return s, nil
}

// checkProfileLoadBalancing makes sure a server that cannot take load_balancing per query has it
// from the user's settings profile (see serverVersion.settings).
func (s *Store) checkProfileLoadBalancing(ctx context.Context) error {
	var lb string
	if err := s.conn.QueryRow(ctx, "SELECT value FROM system.settings WHERE name = 'load_balancing'").Scan(&lb); err != nil {
		return fmt.Errorf("ClickHouse at %s: reading the load_balancing setting: %w", s.addr, err)
	}
	if lb != "in_order" {
		return fmt.Errorf("ClickHouse %s at %s: cluster mode needs load_balancing = in_order (so gpucost reads the replica it wrote to), "+
			"and this server takes it only from the settings profile of user %q, where it is %q: add <load_balancing>in_order</load_balancing> "+
			"to that profile (deploy/clickhouse-cluster/README.md)", s.version, s.addr, s.user, lb)
	}
	return nil
}

// connect opens a connection pool to the store's database and checks that it answers. When the
// database does not exist yet, it connects to the server's default database instead and marks
// the store as missing its database, which Migrate then creates.
func (s *Store) connect(ctx context.Context) (driver.Conn, error) {
	opts := *s.chOpts
	opts.Auth.Database = s.database
	conn, err := clickhouse.Open(&opts)
	if err == nil {
		err = conn.Ping(ctx)
	}
	var ex *clickhouse.Exception
	if errors.As(err, &ex) && ex.Code == codeUnknownDatabase {
		conn.Close()
		s.missing = true
		opts.Auth.Database = "default"
		conn, err = clickhouse.Open(&opts)
		if err == nil {
			err = conn.Ping(ctx)
		}
	}
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		return nil, s.connectError(err)
	}
	return conn, nil
}

// Close closes the connection pool. It is safe to call more than once.
func (s *Store) Close() error {
	if s == nil || s.conn == nil {
		return nil
	}
	return s.conn.Close()
}

// Database is the database the store reads and writes.
func (s *Store) Database() string { return s.database }

// ServerVersion is the server's version string, e.g. "18.16.1".
func (s *Store) ServerVersion() string { return s.version.String() }

// table returns the qualified, quoted name of one of our tables.
func (s *Store) table(name string) string {
	return quoteIdent(s.database) + "." + quoteIdent(name)
}

// ctx adds the settings this server version and mode need to every query.
func (s *Store) ctx(ctx context.Context, opts ...clickhouse.QueryOption) context.Context {
	if set := s.version.settings(s.cluster != ""); set != nil {
		opts = append(opts, clickhouse.WithSettings(set))
	}
	return clickhouse.Context(ctx, opts...)
}

// connectError turns a driver error at connect time into one clear sentence.
func (s *Store) connectError(err error) error {
	var ex *clickhouse.Exception
	if errors.As(err, &ex) {
		switch ex.Code {
		case codeWrongPassword, codeUnknownUser, codeAuthenticationFailed, codeRequiredPassword:
			return fmt.Errorf("connecting to ClickHouse at %s as user %q: authentication failed (wrong user or password): %w", s.addr, s.user, err)
		}
	}
	return fmt.Errorf("connecting to ClickHouse at %s: %w", s.addr, err)
}

// queryError adds the hint that matters most to an error from a query on our tables.
func (s *Store) queryError(what string, err error) error {
	var ex *clickhouse.Exception
	if errors.As(err, &ex) && (ex.Code == codeUnknownDatabase || ex.Code == codeUnknownTable) {
		return fmt.Errorf("%s in database %s at %s: %w (run `gpucost migrate`)", what, s.database, s.addr, err)
	}
	return fmt.Errorf("%s in database %s at %s: %w", what, s.database, s.addr, err)
}

// quoteIdent quotes a ClickHouse identifier with backquotes.
func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(strings.ReplaceAll(name, `\`, `\\`), "`", "\\`") + "`"
}

// redactDSNError removes the DSN's password from a parse error, which may quote the DSN.
func redactDSNError(err error, dsn string) error {
	msg := err.Error()
	if i := strings.Index(dsn, "://"); i >= 0 {
		rest := dsn[i+3:]
		if at := strings.LastIndex(rest, "@"); at >= 0 {
			if _, pass, ok := strings.Cut(rest[:at], ":"); ok && pass != "" {
				msg = strings.ReplaceAll(msg, pass, "xxxxx")
			}
		}
	}
	return errors.New(msg)
}

// minLevel drops records below min before they reach the wrapped handler.
type minLevel struct {
	min slog.Level
	slog.Handler
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{h.min, h.Handler.WithAttrs(attrs)}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{h.min, h.Handler.WithGroup(name)}
}
