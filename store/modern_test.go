//go:build modern

// This file checks that every migration and every query the store issues also runs on a current
// ClickHouse engine (embedded chDB 26.x), not only on the local 18.16 server. Run it with
// `make test-modern`, which fetches the engine library (npm package @chdb/lib-linux-x64-gnu)
// once and sets CHDB_LIB_PATH.

package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chdb-io/chdb-go/chdb"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// queryCheck is one store query, its bound arguments and what its result must satisfy.
type queryCheck struct {
	name string
	sql  string
	args []any
	want func(out string) error
}

// modern runs statements on one chDB session.
type modern struct {
	t *testing.T
	s *chdb.Session
}

func (m modern) exec(what, sql string) string {
	m.t.Helper()
	r, err := m.s.Query(sql, "TSV")
	if err != nil {
		m.t.Fatalf("%s fails on current ClickHouse: %v\nSQL: %s", what, err, sql)
	}
	return strings.TrimSpace(r.String())
}

func TestModernClickHouse(t *testing.T) {
	sess, err := chdb.NewSession(t.TempDir())
	if err != nil {
		t.Fatalf("starting chDB (is CHDB_LIB_PATH set? make test-modern sets it): %v", err)
	}
	defer sess.Close()
	m := modern{t, sess}
	v, err := parseServerVersion(m.exec("version", "SELECT version()"))
	if err != nil {
		t.Fatal(err)
	}
	if v.Major < 24 {
		t.Fatalf("chDB reports ClickHouse %s: not a current engine", v)
	}
	if len(v.settings(false)) != 0 {
		t.Fatalf("the store would send %v to ClickHouse %s, which rejects unknown settings", v.settings(false), v)
	}
	s := &Store{database: "default", version: v, now: func() time.Time { return modernNow }}

	// The migrations, exactly as the migrator sends them to a current server.
	m.exec("migrations table", s.migrationsTableDDL())
	migrations, err := schema.LoadMigrations(schema.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	for _, mg := range migrations {
		for i, stmt := range mg.Statements {
			m.exec(fmt.Sprintf("migration %s statement %d", mg.Name, i+1), stmt)
		}
		m.exec("recording "+mg.Name, fmt.Sprintf("INSERT INTO %s (version, name, checksum, applied_at) VALUES (%d, %s, %s, %s)",
			s.table("schema_migrations"), mg.Version, literal(mg.Name), literal(mg.Checksum), literal(modernNow)))
	}
	if got := m.exec("applied migrations", s.appliedMigrationsQuery()); strings.Count(got, "\n")+1 != len(migrations) {
		t.Fatalf("applied migrations read back as %q, want %d rows", got, len(migrations))
	}

	// Writes, with the store's column lists.
	var values []string
	for d := 0; d < 10; d++ {
		for h := 0; h < 24; h += 6 {
			at := modernNow.AddDate(0, 0, -d).Add(time.Duration(-h) * time.Hour)
			values = append(values,
				offerValues(at, "vastai", "ask-1", "H100-SXM-80GB", "on_demand", fmt.Sprintf("2.%02d", d), true),
				offerValues(at, "runpod", "H100 SXM/secure", "H100-SXM-80GB", "spot", "1.75", false),
				offerValues(at, "lambda", "gpu_1x_mystery", "", "on_demand", "0.99", false))
		}
	}
	m.exec("offers insert", "INSERT INTO "+s.table("offers")+" ("+offerColumns+") VALUES "+strings.Join(values, ", "))
	m.exec("run log insert", "INSERT INTO "+s.table("scrape_runs")+" ("+runColumns+") VALUES "+
		fmt.Sprintf("('r1', 'vastai', %s, %s, 'ok', 10, 9, 1, '', 3), ('r2', 'vastai', %s, %s, 'failed', 0, 0, 0, 'HTTP 503', 5)",
			literal(modernNow.Add(-2*time.Hour)), literal(modernNow.Add(-2*time.Hour)), literal(modernNow), literal(modernNow)))
	m.exec("payload insert", "INSERT INTO "+s.table("raw_payloads")+" ("+payloadColumns+") VALUES "+
		fmt.Sprintf("('r1', 'vastai', 'https://console.vast.ai/api/v0/bundles/', 200, %s, %s)", literal(modernNow), literal("{\"offers\": []}\n")))

	m.exec("plan insert", "INSERT INTO "+s.table("plans")+" ("+planColumns+") VALUES "+
		fmt.Sprintf("('plan-1', %s, 'search', 'llama', 'inference', 'ok', 'why', 'lambda', 'H100-SXM-80GB', 2, 'on_demand', 'market', 6.58, 4803.4, "+
			"'runpod', 'US-TX-3', 'x', 'H100-SXM-80GB', 2, 1, 'on_demand', 'fp16', 5.38, 730, 3927.4, 876, 18.2, 3, 7)", literal(modernNow)))

	m.exec("report send insert", "INSERT INTO "+s.table("report_sends")+" ("+sendColumns+") VALUES "+
		fmt.Sprintf("(toDate('2026-11-16'), '2026-W47', 'search', 'search@example.com', 'sent', %s, '<id@x>', 1, '', 0)", literal(modernNow)))

	// Reads: every query builder, with bound values rendered the way the driver binds them.
	checks := []queryCheck{
		{"has run", s.hasRunQuery(), []any{"r1"}, equals("1")}, {"has no run", s.hasRunQuery(), []any{"r9"}, equals("0")},
		{"last runs", s.lastRunsQuery(false), nil, contains("r2\tvastai")},
		{"last good runs", s.lastRunsQuery(true), nil, contains("r1\tvastai")},
		{"payloads", s.payloadsQuery(), []any{"r1"}, contains("bundles")},
		{"run rows", s.runRowsQuery(), []any{"r1", "vastai"}, equals("1")},
		{"loaded counts", s.loadedCountsQuery(), []any{"run", "vastai", modernNow.AddDate(0, 0, -30), modernNow.Add(time.Hour),
			"r1", "vastai", modernNow.Add(-time.Hour), modernNow.Add(time.Hour)}, equals("40\t1")},
		{"latest prices", s.latestPricesQuery(), []any{"vastai"}, contains("ask-1\ton_demand\t2")},
		{"plan stored", s.planStoredQuery(), []any{"plan-1"}, equals("1")},
		{"sent teams", s.sentTeamsQuery(), []any{time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)}, contains("search\t2026-11-20 12:00:00")},
		{"sends", s.sendsQuery(), []any{time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)}, contains("2026-W47\tsearch")},
		{"latest plan", s.latestPlanQuery(), nil, contains("plan-1")},
	}
	for _, f := range []OfferFilter{
		{},
		{GPUModels: []string{"H100-SXM-80GB"}, MinVRAMGB: 40, Providers: []string{"vastai", "runpod"}, PriceTypes: []schema.PriceType{schema.OnDemand, schema.Spot}, MaxAge: 24 * time.Hour, Limit: 10},
	} {
		q, args := s.latestOffersQuery(f)
		checks = append(checks, queryCheck{fmt.Sprintf("latest offers %+v", f), q, args, lines(3 - boolInt(len(f.Providers) > 0))})
	}
	for _, iv := range []Interval{Hour, Day, Week} {
		hq := HistoryQuery{GPUModel: "H100-SXM-80GB", Providers: []string{"vastai"}, PriceTypes: []schema.PriceType{schema.OnDemand},
			From: modernNow.AddDate(0, 0, -30), To: modernNow.Add(time.Hour), Interval: iv}
		q, args, err := s.historyQuery(hq)
		if err != nil {
			t.Fatal(err)
		}
		checks = append(checks, queryCheck{"history by " + string(iv), q, args, contains("vastai\tH100-SXM-80GB\ton_demand")})
	}
	for _, cq := range []ChangesQuery{
		{From: modernNow.AddDate(0, 0, -30), To: modernNow.Add(time.Hour)},
		{From: modernNow.AddDate(0, 0, -5), To: modernNow.Add(time.Hour), GPUModels: []string{"H100-SXM-80GB"}, Providers: []string{"vastai"},
			PriceTypes: []schema.PriceType{schema.OnDemand}, MinChangePct: 0.1, Limit: 3},
	} {
		q, args, err := s.changesQuery(cq)
		if err != nil {
			t.Fatal(err)
		}
		checks = append(checks, queryCheck{fmt.Sprintf("changes %+v", cq), q, args, contains("vastai\ton_demand\task-1\tH100-SXM-80GB\t8")})
	}
	oq, oargs, err := s.observationsQuery(ObservationFilter{From: modernNow.AddDate(0, 0, -2), To: modernNow.Add(time.Hour),
		GPUModels: []string{"H100-SXM-80GB"}, Providers: []string{"runpod"}, PriceTypes: []schema.PriceType{schema.Spot}, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	checks = append(checks, queryCheck{"observations", oq, oargs, lines(5)},
		queryCheck{"imported counts", s.importedCountsQuery(), []any{"run", modernNow.AddDate(0, 0, -30), modernNow.Add(time.Hour), "vastai", "r1"}, equals("120\t1")},
		queryCheck{"price_changes view", "SELECT count() FROM " + s.table("price_changes") + " WHERE provider = ?", []any{"runpod"}, equals("0")},
		queryCheck{"price_changes view moves", "SELECT count() FROM " + s.table("price_changes") + " WHERE provider = ?", []any{"vastai"}, equals("9")})
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			sql, err := render(c.sql, c.args)
			if err != nil {
				t.Fatal(err)
			}
			out := modern{t, sess}.exec(c.name, sql)
			if err := c.want(out); err != nil {
				t.Errorf("%v\nSQL: %s\nresult:\n%s", err, sql, out)
			}
		})
	}
}

var modernNow = time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)

func offerValues(at time.Time, provider, id, model, priceType, perGPU string, full bool) string {
	null := func(v string) string {
		if full {
			return v
		}
		return "NULL"
	}
	flags := "[]"
	if model == "" {
		flags = "['unknown_gpu']"
	}
	p := decimal.RequireFromString(perGPU)
	return fmt.Sprintf("(%s, 'run', 'https://x', %s, %s, 'secure', 'Kraków, PL', 'PL', %s, %s, 8, 80, %s, %s, %s, %s, %s, %s, 'nvswitch', %s, 'infiniband', %s, 'high', %s, %s)",
		literal(at), literal(provider), literal(id), literal(model), literal("NVIDIA «"+model+"» 東京"),
		null("32"), null("251.5"), null("1000"), literal(priceType), p.Mul(decimal.NewFromInt(8)).String(), p.String(),
		null("900"), null("3"), null("0.99"), flags)
}

// render binds args into the ? placeholders of sql the way clickhouse-go's client-side binding
// does for these types (strings quoted and escaped, times as toDateTime in UTC).
func render(sql string, args []any) (string, error) {
	var b strings.Builder
	i := 0
	for _, r := range sql {
		if r != '?' {
			b.WriteRune(r)
			continue
		}
		if i >= len(args) {
			return "", fmt.Errorf("more placeholders than the %d arguments", len(args))
		}
		b.WriteString(literal(args[i]))
		i++
	}
	if i != len(args) {
		return "", fmt.Errorf("%d arguments for %d placeholders", len(args), i)
	}
	return b.String(), nil
}

func literal(v any) string {
	switch v := v.(type) {
	case string:
		return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
	case time.Time:
		return v.UTC().Format("toDateTime('2006-01-02 15:04:05', 'UTC')")
	case float64:
		return fmt.Sprint(v)
	default:
		panic(fmt.Sprintf("literal: unsupported %T", v))
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func equals(want string) func(string) error {
	return func(out string) error {
		if out != want {
			return fmt.Errorf("got %q, want %q", out, want)
		}
		return nil
	}
}

func contains(want string) func(string) error {
	return func(out string) error {
		if !strings.Contains(out, want) {
			return fmt.Errorf("result does not contain %q", want)
		}
		return nil
	}
}

func lines(n int) func(string) error {
	return func(out string) error {
		got := 0
		if out != "" {
			got = strings.Count(out, "\n") + 1
		}
		if got != n {
			return fmt.Errorf("got %d rows, want %d", got, n)
		}
		return nil
	}
}
