package store_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// parserVersionMigration adds the offers' parser_version column (0013), which the store's offer
// inserts name: a test of an earlier migration applies it first to insert offers as today.
const parserVersionMigration = 13

// migrationsBefore returns the embedded migrations before version, and those also listed.
func migrationsBefore(tb testing.TB, version int, also ...int) fstest.MapFS {
	tb.Helper()
	all, err := schema.LoadMigrations(schema.Migrations)
	if err != nil {
		tb.Fatal(err)
	}
	before := fstest.MapFS{}
	for _, m := range all {
		if m.Version < version || slices.Contains(also, m.Version) {
			data, err := fs.ReadFile(schema.Migrations, m.Name)
			if err != nil {
				tb.Fatal(err)
			}
			before[m.Name] = &fstest.MapFile{Data: data}
		}
	}
	return before
}

// insertBeforeValidUntil inserts offers as the store wrote them before migration 0010, naming no
// valid_until column (InsertOffers names it); the columns not named get their defaults.
func insertBeforeValidUntil(tb testing.TB, s *store.Store, offers ...schema.Offer) {
	tb.Helper()
	str := func(v string) string { return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(v) + "'" }
	var selects []string
	for _, o := range offers {
		// Every value named: 18.16 takes two equal expressions of a SELECT for one column.
		selects = append(selects, fmt.Sprintf("SELECT toDateTime(%s, 'UTC') AS c1, %s AS c2, %s AS c3, %s AS c4, %s AS c5, %s AS c6, %s AS c7, %s AS c8, %d AS c9, "+
			"toDecimal64(%s, 6) AS c10, toDecimal64(%s, 6) AS c11, %s AS c12, %s AS c13, %s AS c14, %s AS c15",
			str(o.ObservedAt.UTC().Format(time.DateTime)), str(o.RunID), str(o.SourceURL), str(o.Provider), str(o.OfferID), str(string(o.Tier)), str(o.Region),
			str(o.GPUModel), o.GPUCount, str(o.PriceUSDPerHour.String()), str(o.PriceUSDPerGPUHour.String()),
			str(string(o.IntraNode)), str(string(o.InterNode)), str(string(o.Stock)), str(string(o.PriceType))))
	}
	q := `INSERT INTO offers (observed_at, run_id, source_url, provider, offer_id, tier, region, gpu_model, gpu_count,
		price_usd_per_hour, price_usd_per_gpu_hour, intra_node, inter_node, stock, price_type) ` + strings.Join(selects, " UNION ALL ")
	if err := rawConn(tb, s).Exec(context.Background(), q); err != nil {
		tb.Fatalf("inserting offers without valid_until: %v", err)
	}
}

// columnsOf returns "name type" of every column of a table or view, in the table's order.
func columnsOf(tb testing.TB, s *store.Store, table string) []string {
	tb.Helper()
	rows, err := rawConn(tb, s).Query(context.Background(), "SELECT name, type FROM system.columns WHERE database = ? AND table = ?", s.Database(), table)
	if err != nil {
		tb.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			tb.Fatal(err)
		}
		out = append(out, name+" "+typ)
	}
	if err := rows.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// checkValidUntilColumns checks that offers has valid_until after observed_at, and that
// offers_latest and the view latest_offers have the same columns as offers.
func checkValidUntilColumns(t *testing.T, s *store.Store) {
	t.Helper()
	offers := columnsOf(t, s, "offers")
	if len(offers) < 2 || offers[1] != "valid_until Nullable(DateTime('UTC'))" {
		t.Errorf("offers columns start %q, want observed_at then valid_until Nullable(DateTime('UTC'))", offers[:min(2, len(offers))])
	}
	for _, other := range []string{"offers_latest", "latest_offers"} {
		if diff := cmp.Diff(offers, columnsOf(t, s, other)); diff != "" {
			t.Errorf("%s has other columns than offers (-offers +%s):\n%s", other, other, diff)
		}
	}
}

func TestValidUntilMigration(t *testing.T) {
	ctx := context.Background()
	t.Run("empty database", func(t *testing.T) {
		s := storetest.Open(t)
		checkValidUntilColumns(t, s)
	})
	t.Run("database with offers from before it", func(t *testing.T) {
		s := storetest.OpenEmpty(t)
		if _, err := s.MigrateFS(ctx, migrationsBefore(t, 10)); err != nil {
			t.Fatal(err)
		}
		old := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
		insertBeforeValidUntil(t, s, offer("vastai", "ask-1", "H100-SXM-80GB", schema.OnDemand, old, "2.5", 8))
		res, err := s.Migrate(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]string{"0010_offers_valid_until.sql"}, res.Applied[:min(1, len(res.Applied))]); diff != "" {
			t.Errorf("applied (-want +got):\n%s", diff)
		}
		checkValidUntilColumns(t, s)
		until := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
		imported := offer("aws", "import:H100-SXM-80GB/8x/datacenter/us-east-1", "H100-SXM-80GB", schema.OnDemand, old.Add(time.Hour), "6.88", 8)
		imported.ValidUntil = &until
		if err := s.InsertOffers(ctx, imported.RunID, []schema.Offer{imported}); err != nil {
			t.Fatal(err)
		}
		type row struct {
			Provider   string
			ValidUntil *time.Time
		}
		var observed []row
		if _, err := s.Observations(ctx, schema.ObservationFilter{From: old, To: old.AddDate(0, 0, 1)}, func(o *schema.Offer) error {
			observed = append(observed, row{o.Provider, o.ValidUntil})
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]row{{"vastai", nil}, {"aws", &until}}, observed); diff != "" {
			t.Errorf("observations after the migration (-want +got):\n%s", diff)
		}
		latest, err := s.LatestOffers(ctx, schema.OfferFilter{})
		if err != nil {
			t.Fatal(err)
		}
		var got []row
		for _, o := range latest {
			got = append(got, row{o.Provider, o.ValidUntil})
		}
		if diff := cmp.Diff([]row{{"vastai", nil}, {"aws", &until}}, got); diff != "" {
			t.Errorf("latest offers after the migration (-want +got):\n%s", diff)
		}
		// The rollups' views still take every insert, and the latest-offers view shows the column.
		var nulls, set uint64
		if err := rawConn(t, s).QueryRow(ctx, "SELECT countIf(valid_until IS NULL), countIf(valid_until IS NOT NULL) FROM latest_offers").Scan(&nulls, &set); err != nil {
			t.Fatal(err)
		}
		if nulls != 1 || set != 1 {
			t.Errorf("latest_offers holds %d rows without valid_until and %d with, want 1 and 1", nulls, set)
		}
		var days uint64
		if err := rawConn(t, s).QueryRow(ctx, "SELECT countMerge(observations) FROM offers_daily").Scan(&days); err != nil {
			t.Fatal(err)
		}
		if days != 2 {
			t.Errorf("offers_daily counts %d observations, want 2", days)
		}
	})
	t.Run("half-way, then again", func(t *testing.T) {
		// The first ALTER of 0010 already applied (a migrate cut off after it): the next migrate
		// completes it, on servers with ADD COLUMN IF NOT EXISTS and on 18.16 without it.
		s := storetest.OpenEmpty(t)
		if _, err := s.MigrateFS(ctx, migrationsBefore(t, 10)); err != nil {
			t.Fatal(err)
		}
		if err := rawConn(t, s).Exec(ctx, "ALTER TABLE offers_latest ADD COLUMN valid_until Nullable(DateTime('UTC')) AFTER observed_at"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Migrate(ctx); err != nil {
			t.Fatalf("migrate after a half-way 0010: %v", err)
		}
		checkValidUntilColumns(t, s)
	})
	t.Run("two migrators at once", func(t *testing.T) {
		s := storetest.OpenEmpty(t)
		if _, err := s.MigrateFS(ctx, migrationsBefore(t, 10)); err != nil {
			t.Fatal(err)
		}
		if err := migrateTwiceAtOnce(ctx, storetest.DatabaseDSN(t, s.Database()), store.Options{}); err != nil {
			t.Errorf("concurrent migrate: %v", err)
		}
		checkValidUntilColumns(t, s)
	})
}

func TestLatestOffersMaxAgeKeepsPricesStillValid(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	s, s2 := openAt(t, now)
	ctx := context.Background()
	h := func(d int) time.Time { return now.Add(time.Duration(d) * time.Hour) }
	at := func(id string, observed time.Time, validUntil *time.Time, perGPU string) schema.Offer {
		o := offer("aws", id, "H100-SXM-80GB", schema.OnDemand, observed, perGPU, 8)
		o.ValidUntil = validUntil
		return o
	}
	offers := []schema.Offer{
		at("scraped-now", h(-1), nil, "2.01"),
		at("scraped-3-days-ago", h(-72), nil, "2.02"),
		at("published-a-month-ago-valid-a-year", h(-30*24), ptr(h(365*24)), "2.03"),
		at("published-a-month-ago-expired-yesterday", h(-30*24), ptr(h(-24)), "2.04"),
		at("published-now-expired-a-minute-ago", h(-2), ptr(now.Add(-time.Minute)), "2.05"),
		at("published-now-valid-a-week", h(-2), ptr(h(7*24)), "2.06"),
	}
	for _, o := range offers {
		if err := s.InsertOffers(ctx, o.RunID, []schema.Offer{o}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		maxAge  time.Duration
		expired time.Duration // schema.OfferFilter.ExpiredWithin
		want    []string
	}{
		{"a day: seen within it and without an end, or valid until later", 24 * time.Hour, 0,
			[]string{"scraped-now", "published-a-month-ago-valid-a-year", "published-now-valid-a-week"}},
		{"a year: an end that has passed still drops the price", 365 * 24 * time.Hour, 0,
			[]string{"scraped-now", "scraped-3-days-ago", "published-a-month-ago-valid-a-year", "published-now-valid-a-week"}},
		{"a day, and what expired within two days: the planner can say a table expired", 24 * time.Hour, 48 * time.Hour,
			[]string{"scraped-now", "published-a-month-ago-valid-a-year", "published-a-month-ago-expired-yesterday",
				"published-now-expired-a-minute-ago", "published-now-valid-a-week"}},
		{"zero keeps all", 0, 0,
			[]string{"scraped-now", "scraped-3-days-ago", "published-a-month-ago-valid-a-year", "published-a-month-ago-expired-yesterday",
				"published-now-expired-a-minute-ago", "published-now-valid-a-week"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s2.LatestOffers(ctx, schema.OfferFilter{MaxAge: tt.maxAge, ExpiredWithin: tt.expired})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, o := range got {
				ids = append(ids, o.OfferID)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("latest offers with max age %s (-want +got):\n%s", tt.maxAge, diff)
			}
		})
	}
	// The newest observation of an offer decides: a price table published again without an end
	// is a price that ages like a scraped one.
	again := at("published-a-month-ago-valid-a-year", h(-48), nil, "2.03")
	if err := s.InsertOffers(ctx, again.RunID, []schema.Offer{again}); err != nil {
		t.Fatal(err)
	}
	got, err := s2.LatestOffers(ctx, schema.OfferFilter{Selection: schema.Selection{Providers: []string{"aws"}}, MaxAge: 24 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range got {
		if strings.HasPrefix(o.OfferID, "published-a-month-ago") {
			t.Errorf("%s observed again two days ago without valid_until is still kept: %s", o.OfferID, fmt.Sprint(o.ValidUntil))
		}
	}
}

// migrateTwiceAtOnce runs two migrators on dsn at the same time and returns the first error.
func migrateTwiceAtOnce(ctx context.Context, dsn string, opts store.Options) error {
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			m, err := store.Open(ctx, dsn, opts)
			if err == nil {
				_, err = m.Migrate(ctx)
				m.Close()
			}
			errs <- err
		}()
	}
	return errors.Join(<-errs, <-errs)
}
