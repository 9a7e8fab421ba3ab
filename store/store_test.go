package store_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"sort"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

func ptr[T any](v T) *T { return &v }

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// offer returns an offer with every field set; tests override what they vary.
func offer(provider, id, model string, pt schema.PriceType, at time.Time, perGPU string, count uint16) schema.Offer {
	p := dec(perGPU)
	return schema.Offer{
		ObservedAt: at, RunID: "run-" + at.Format("2006010215"), SourceURL: "https://example.test/" + provider,
		Provider: provider, OfferID: id, Tier: schema.TierSecure, Region: "US-TX-3", Country: "US",
		GPUModel: model, GPUNameRaw: "NVIDIA " + model, GPUCount: count, VRAMGB: 80,
		VCPUs: ptr(32.0), RAMGB: ptr(251.5), DiskGB: ptr(1000.0),
		PriceType: pt, PriceUSDPerHour: p.Mul(decimal.NewFromInt(int64(count))), PriceUSDPerGPUHour: p,
		IntraNode: schema.IntraNVSwitch, NVLinkGbps: ptr(900.0), InterNode: schema.InterInfiniBand,
		AvailableCount: ptr(uint32(3)), Stock: schema.StockHigh, Reliability: ptr(0.9931),
		DQFlags: []schema.DQFlag{schema.FlagVRAMSnapped},
	}
}

var cmpOffers = cmp.Options{
	cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) }),
	cmpopts.EquateEmpty(),
}

func TestMigrateFromEmptyAndAgain(t *testing.T) {
	s := storetest.OpenEmpty(t)
	ctx := context.Background()
	all, err := schema.LoadMigrations(schema.Migrations)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Migrate(ctx)
	if err != nil {
		t.Fatalf("first migrate: %v", err)
	}
	if len(res.Applied) != len(all) || res.Current != all[len(all)-1].Version {
		t.Fatalf("first migrate applied %v (current %d), want all %d migrations", res.Applied, res.Current, len(all))
	}
	res, err = s.Migrate(ctx)
	if err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if len(res.Applied) != 0 || res.Current != all[len(all)-1].Version {
		t.Fatalf("second migrate applied %v (current %d), want nothing", res.Applied, res.Current)
	}
}

func TestMigrateConcurrently(t *testing.T) {
	dsn := storetest.DSN(t)
	ctx := context.Background()
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			s, err := store.Open(ctx, dsn, store.Options{})
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			_, err = s.Migrate(ctx)
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatalf("concurrent migrate: %v", err)
		}
	}
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	v, err := s.SchemaVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all, _ := schema.LoadMigrations(schema.Migrations)
	if want := all[len(all)-1].Version; v != want {
		t.Fatalf("schema version after two concurrent migrations = %d, want %d", v, want)
	}
}

func TestMigrateFailsHalfWayThenRecovers(t *testing.T) {
	s := storetest.OpenEmpty(t)
	ctx := context.Background()
	good, err := fs.ReadFile(schema.Migrations, "0001_offers.sql")
	if err != nil {
		t.Fatal(err)
	}
	second := "CREATE TABLE IF NOT EXISTS half (x UInt8) ENGINE = Memory;\n"
	broken := fstest.MapFS{
		"0001_offers.sql": {Data: good},
		"0002_half.sql":   {Data: []byte(second + "CREATE TABLE IF NOT EXISTS other (x NoSuchType) ENGINE = Memory;\n")},
	}
	_, err = s.MigrateFS(ctx, broken)
	if err == nil {
		t.Fatal("migrate with a broken statement succeeded")
	}
	for _, want := range []string{"0002_half.sql", "statement 2 of 2", "NoSuchType"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
	fixed := fstest.MapFS{
		"0001_offers.sql": {Data: good},
		"0002_half.sql":   {Data: []byte(second + "CREATE TABLE IF NOT EXISTS other (x UInt8) ENGINE = Memory;\n")},
	}
	res, err := s.MigrateFS(ctx, fixed)
	if err != nil {
		t.Fatalf("migrate after the fix: %v", err)
	}
	if diff := cmp.Diff([]string{"0002_half.sql"}, res.Applied); diff != "" {
		t.Errorf("applied after the fix (-want +got):\n%s", diff)
	}
}

func TestMigrateRefusesAnEditedMigration(t *testing.T) {
	s := storetest.OpenEmpty(t)
	ctx := context.Background()
	v1 := fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE IF NOT EXISTS a (x UInt8) ENGINE = Memory;\n")}}
	if _, err := s.MigrateFS(ctx, v1); err != nil {
		t.Fatal(err)
	}
	v2 := fstest.MapFS{"0001_a.sql": {Data: []byte("CREATE TABLE IF NOT EXISTS a (x UInt16) ENGINE = Memory;\n")}}
	_, err := s.MigrateFS(ctx, v2)
	if err == nil || !strings.Contains(err.Error(), "0001_a.sql was changed after it was applied") {
		t.Fatalf("error = %v, want it to say the migration was changed", err)
	}
}

func TestOpenErrors(t *testing.T) {
	storetest.Enabled(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tests := []struct {
		name    string
		dsn     string
		want    []string
		notWant string
	}{
		{"nowhere", "clickhouse://default@127.0.0.1:1/gpucost?dial_timeout=2s", []string{"connecting to ClickHouse at 127.0.0.1:1"}, ""},
		{"wrong password", strings.Replace(storetest.ServerDSN(), "default@", "default:s3cret-pw@", 1), []string{"authentication failed", `user "default"`}, "s3cret-pw"},
		{"unknown user", strings.Replace(storetest.ServerDSN(), "default@", "nobody:pw@", 1), []string{"authentication failed", `user "nobody"`}, ""},
		{"not a DSN", "clickhouse://user:hunter2@[::1/db", []string{"parsing ClickHouse DSN"}, "hunter2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := store.Open(ctx, tt.dsn, store.Options{})
			if err == nil {
				s.Close()
				t.Fatal("Open succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if tt.notWant != "" && strings.Contains(err.Error(), tt.notWant) {
				t.Errorf("error %q reveals the password", err)
			}
		})
	}
}

// Cluster mode reads from the replica it wrote to (load_balancing = in_order). A current server
// takes that per query; 18.16 only from the user's profile, so there cluster mode refuses a
// profile without it, since its reads could miss what it just wrote. The test server's profile
// keeps the default (random).
func TestClusterModeNeedsReadsFromTheReplicaWrittenTo(t *testing.T) {
	single := storetest.OpenEmpty(t)
	s, err := store.Open(context.Background(), storetest.ServerDSN(), store.Options{Cluster: "gpucost"})
	if !strings.HasPrefix(single.ServerVersion(), "18.") {
		if err != nil {
			t.Fatalf("cluster mode on ClickHouse %s: %v", single.ServerVersion(), err)
		}
		s.Close()
		return
	}
	if err == nil {
		s.Close()
		t.Fatal("cluster mode opened on a profile with random load balancing")
	}
	for _, w := range []string{"load_balancing = in_order", `user "default"`, `where it is "random"`, "deploy/clickhouse-cluster/README.md"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not say %q", err, w)
		}
	}
}

func TestQueryBeforeMigrateSaysSo(t *testing.T) {
	s := storetest.OpenEmpty(t)
	_, err := s.LatestOffers(context.Background(), schema.OfferFilter{})
	if err == nil || !strings.Contains(err.Error(), "gpucost migrate") {
		t.Fatalf("error = %v, want a hint to run gpucost migrate", err)
	}
}

func TestInsertAndReadBackEveryField(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)
	full := offer("vastai", "ask-1", "H100-SXM-80GB", schema.OnDemand, at, "2.123456", 8)
	full.GPUNameRaw = "H100 SXM — 東京 «raw» 'quoted'"
	full.Region = "Kraków, PL"
	full.ValidUntil = ptr(time.Date(2027, 3, 31, 23, 59, 59, 0, time.FixedZone("CEST", 2*3600)))
	sparse := offer("runpod", "NVIDIA H100 NVL/community", "H100-NVL-94GB", schema.Spot, at, "1.5", 1)
	sparse.VCPUs, sparse.RAMGB, sparse.DiskGB, sparse.NVLinkGbps, sparse.AvailableCount, sparse.Reliability = nil, nil, nil, nil, nil, nil
	sparse.DQFlags = nil
	sparse.IntraNode, sparse.InterNode, sparse.Stock = schema.IntraUnknown, schema.InterUnknown, schema.StockUnknown
	unknown := offer("lambda", "gpu_1x_mystery", "", schema.OnDemand, at, "0.99", 1)
	unknown.DQFlags = []schema.DQFlag{schema.FlagUnknownGPU, schema.FlagVRAMMissing}

	in := []schema.Offer{full, sparse, unknown}
	if err := s.InsertOffers(ctx, full.RunID, in); err != nil {
		t.Fatal(err)
	}
	got, err := s.LatestOffers(ctx, schema.OfferFilter{})
	if err != nil {
		t.Fatal(err)
	}
	full.ValidUntil = ptr(full.ValidUntil.UTC())  // read back in UTC
	want := []schema.Offer{unknown, sparse, full} // cheapest per GPU-hour first
	if diff := cmp.Diff(want, got, cmpOffers, utcTimes); diff != "" {
		t.Errorf("latest offers read back (-want +got):\n%s", diff)
	}
	var observed []schema.Offer
	if _, err := s.Observations(ctx, schema.ObservationFilter{From: at, To: at.Add(time.Second)}, func(o *schema.Offer) error {
		observed = append(observed, *o)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want = []schema.Offer{unknown, sparse, full} // by provider: lambda, runpod, vastai
	if diff := cmp.Diff(want, observed, cmpOffers, utcTimes); diff != "" {
		t.Errorf("observations read back (-want +got):\n%s", diff)
	}
}

// utcTimes compares times by instant and location, so a time read back in another zone than UTC
// is a difference.
var utcTimes = cmp.Comparer(func(a, b time.Time) bool { return a.Equal(b) && a.Location().String() == b.Location().String() })

// openAt opens a test database twice: s with the real clock, to write; at with its clock
// stopped at now, to read what the store counts as recent.
func openAt(t *testing.T, now time.Time) (s, at *store.Store) {
	t.Helper()
	s = storetest.Open(t)
	at, err := store.Open(context.Background(), storetest.DatabaseDSN(t, s.Database()), store.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { at.Close() })
	return s, at
}

func TestLatestOffersNewestPerKeyAndFilters(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	s, s2 := openAt(t, now)
	ctx := context.Background()
	h := func(d int) time.Time { return now.Add(time.Duration(-d) * time.Hour) }
	// Three runs of the same offers, the price of ask-1 moving; ask-old last seen 3 days ago.
	runs := [][]schema.Offer{
		{offer("vastai", "ask-1", "H100-SXM-80GB", schema.OnDemand, h(2), "2.50", 8), offer("vastai", "ask-old", "H100-SXM-80GB", schema.OnDemand, h(72), "1.00", 1)},
		{offer("vastai", "ask-1", "H100-SXM-80GB", schema.OnDemand, h(1), "2.40", 8), offer("runpod", "H100 SXM/secure", "H100-SXM-80GB", schema.OnDemand, h(1), "2.69", 1)},
		{offer("runpod", "H100 SXM/secure", "H100-SXM-80GB", schema.Spot, h(0), "1.75", 1), offer("lambda", "gpu_1x_a10", "A10-24GB", schema.OnDemand, h(0), "0.75", 1)},
	}
	// Insert the newest run first: the latest view must go by observation time, not insert order.
	for i := len(runs) - 1; i >= 0; i-- {
		if err := s.InsertOffers(ctx, runs[i][0].RunID, runs[i]); err != nil {
			t.Fatal(err)
		}
	}
	type row struct {
		Provider, OfferID string
		PriceType         schema.PriceType
		Price             string
	}
	rowsOf := func(os []schema.Offer) []row {
		var out []row
		for _, o := range os {
			out = append(out, row{o.Provider, o.OfferID, o.PriceType, o.PriceUSDPerGPUHour.String()})
		}
		return out
	}
	tests := []struct {
		name string
		f    schema.OfferFilter
		want []row
	}{
		{"all, newest per key, cheapest first", schema.OfferFilter{}, []row{
			{"lambda", "gpu_1x_a10", schema.OnDemand, "0.75"}, {"vastai", "ask-old", schema.OnDemand, "1"},
			{"runpod", "H100 SXM/secure", schema.Spot, "1.75"}, {"vastai", "ask-1", schema.OnDemand, "2.4"},
			{"runpod", "H100 SXM/secure", schema.OnDemand, "2.69"}}},
		{"max age drops what is no longer listed", schema.OfferFilter{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}}, MaxAge: 24 * time.Hour}, []row{
			{"runpod", "H100 SXM/secure", schema.Spot, "1.75"}, {"vastai", "ask-1", schema.OnDemand, "2.4"},
			{"runpod", "H100 SXM/secure", schema.OnDemand, "2.69"}}},
		{"provider and price type", schema.OfferFilter{Selection: schema.Selection{Providers: []string{"runpod"}, PriceTypes: []schema.PriceType{schema.OnDemand}}}, []row{
			{"runpod", "H100 SXM/secure", schema.OnDemand, "2.69"}}},
		{"min VRAM", schema.OfferFilter{MinVRAMGB: 81}, nil},
		{"limit", schema.OfferFilter{Limit: 1}, []row{{"lambda", "gpu_1x_a10", schema.OnDemand, "0.75"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s2.LatestOffers(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, rowsOf(got)); diff != "" {
				t.Errorf("latest offers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRunsAndHasRun(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	runs := []schema.ScrapeRun{
		{RunID: "r1", Provider: "vastai", StartedAt: t0, FinishedAt: t0.Add(3 * time.Second), Status: schema.RunOK, OffersParsed: 100, OffersLoaded: 98, OffersRejected: 2, HTTPAttempts: 5},
		{RunID: "r1", Provider: "runpod", StartedAt: t0, FinishedAt: t0.Add(time.Second), Status: schema.RunOK, OffersParsed: 40, OffersLoaded: 40, HTTPAttempts: 1},
		{RunID: "r2", Provider: "vastai", StartedAt: t0.Add(time.Hour), FinishedAt: t0.Add(time.Hour + time.Second), Status: schema.RunFailed, Error: "vastai: HTTP 503 after 5 attempts", HTTPAttempts: 5},
	}
	if err := s.RecordRun(ctx, runs...); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"r1": true, "r2": true, "r3": false} {
		got, err := s.HasRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("HasRun(%s) = %v, want %v", id, got, want)
		}
	}
	last, err := s.LastRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]schema.ScrapeRun{runs[1], runs[2]}, last); diff != "" {
		t.Errorf("last runs (-want +got):\n%s", diff)
	}
	good, err := s.LastGoodRuns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]schema.ScrapeRun{runs[1], runs[0]}, good); diff != "" {
		t.Errorf("last good runs (-want +got):\n%s", diff)
	}
}

func TestPayloadsRoundTrip(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	in := []schema.RawPayload{
		{RunID: "r1", Provider: "coreweave", URL: "https://www.coreweave.com/pricing", Status: 200, FetchedAt: at, Body: []byte("<html>\x00binary\xff ünïcode</html>")},
		{RunID: "r1", Provider: "coreweave", URL: "https://www.coreweave.com/pricing?page=2", Status: 200, FetchedAt: at.Add(time.Second), Body: []byte(`{"a":1}`)},
	}
	if err := s.InsertPayloads(ctx, in); err != nil {
		t.Fatal(err)
	}
	got, err := s.Payloads(ctx, "r1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, got); diff != "" {
		t.Errorf("payloads (-want +got):\n%s", diff)
	}
}

func TestHistoryMatchesHandComputation(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	// Monday 2026-11-02 to Sunday 2026-11-15: two weeks, three observations a day at 01:00,
	// 09:00 and 17:00 for two providers. Prices follow a rule we can recompute here.
	start := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	type obs struct {
		at       time.Time
		provider string
		price    decimal.Decimal
	}
	var all []obs
	for d := 0; d < 14; d++ {
		var batch []schema.Offer
		for k, hour := range []int{1, 9, 17} {
			at := start.AddDate(0, 0, d).Add(time.Duration(hour) * time.Hour)
			for pi, provider := range []string{"runpod", "vastai"} {
				cents := 200 + 5*d + 3*k + 40*pi // deterministic, distinct per observation
				price := decimal.New(int64(cents), -2)
				o := offer(provider, "x-"+provider, "H100-SXM-80GB", schema.OnDemand, at, price.String(), 1)
				batch = append(batch, o)
				all = append(all, obs{at, provider, price})
			}
			// Noise that every query must filter out.
			batch = append(batch, offer("runpod", "a10", "A10-24GB", schema.OnDemand, at, "0.5", 1))
			batch = append(batch, offer("runpod", "x-runpod", "H100-SXM-80GB", schema.Spot, at, "0.1", 1))
		}
		if err := s.InsertOffers(ctx, batch[0].RunID, batch); err != nil {
			t.Fatal(err)
		}
	}
	hand := func(interval schema.Interval, from, to time.Time) []schema.HistoryPoint {
		groups := map[[2]string][]decimal.Decimal{}
		for _, o := range all {
			b := interval.Truncate(o.at)
			if b.Before(interval.Truncate(from)) || !b.Before(to) {
				continue
			}
			k := [2]string{b.Format(time.RFC3339), o.provider}
			groups[k] = append(groups[k], o.price)
		}
		var out []schema.HistoryPoint
		for k, ps := range groups {
			b, _ := time.Parse(time.RFC3339, k[0])
			sort.Slice(ps, func(i, j int) bool { return ps[i].LessThan(ps[j]) })
			sum := decimal.Zero
			for _, p := range ps {
				sum = sum.Add(p)
			}
			n := len(ps)
			median := ps[n/2]
			if n%2 == 0 {
				median = ps[n/2-1].Add(ps[n/2]).Div(decimal.NewFromInt(2))
			}
			out = append(out, schema.HistoryPoint{Bucket: b.UTC(), Provider: k[1], GPUModel: "H100-SXM-80GB", PriceType: schema.OnDemand,
				Min: ps[0], Max: ps[n-1], Avg: sum.DivRound(decimal.NewFromInt(int64(n)), 6), Median: median, Observations: uint64(n), Offers: 1})
		}
		sort.Slice(out, func(i, j int) bool {
			if !out[i].Bucket.Equal(out[j].Bucket) {
				return out[i].Bucket.Before(out[j].Bucket)
			}
			return out[i].Provider < out[j].Provider
		})
		return out
	}
	tests := []struct {
		name     string
		interval schema.Interval
		from, to time.Time
	}{
		{"days, whole range", schema.Day, start, start.AddDate(0, 0, 14)},
		{"days, mid-day bounds include the partial days", schema.Day, start.AddDate(0, 0, 3).Add(12 * time.Hour), start.AddDate(0, 0, 5).Add(6 * time.Hour)},
		{"weeks", schema.Week, start.AddDate(0, 0, 2), start.AddDate(0, 0, 14)},
		{"hours", schema.Hour, start.AddDate(0, 0, 1), start.AddDate(0, 0, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.History(ctx, schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}, PriceTypes: []schema.PriceType{schema.OnDemand}}, From: tt.from, To: tt.to, Interval: tt.interval})
			if err != nil {
				t.Fatal(err)
			}
			want := hand(tt.interval, tt.from, tt.to)
			if len(want) == 0 {
				t.Fatal("the hand computation selected nothing: the test is wrong")
			}
			// The median is a t-digest estimate: within a cent of the exact one on these data.
			isMedian := func(p cmp.Path) bool { return p.Last().String() == ".Median" }
			opts := cmp.Options{
				cmp.FilterPath(isMedian, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Sub(b).Abs().LessThanOrEqual(dec("0.01")) })),
				cmp.FilterPath(func(p cmp.Path) bool { return !isMedian(p) }, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })),
			}
			if diff := cmp.Diff(want, got, opts); diff != "" {
				t.Errorf("history (-hand +store):\n%s", diff)
			}
		})
	}
	t.Run("provider filter", func(t *testing.T) {
		got, err := s.History(ctx, schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}, Providers: []string{"vastai"}}, From: start, To: start.AddDate(0, 0, 1), Interval: schema.Day})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Provider != "vastai" || !got[0].Min.Equal(dec("2.40")) {
			t.Errorf("vastai on the first day = %+v, want one bucket with min 2.40", got)
		}
	})
}

// TestHistoryMeanIsTheSameExactDecimalOnEveryServer checks means whose seventh decimal decides
// the rounding. ClickHouse's own avg of a Decimal differs between versions: 18.x truncates it to
// six places (1.000001, 0.166666 and 2.000003 here), current versions return a Float64 (which
// rounds to these decimals here), so make test-legacy is where a mean taken from the server
// fails. The store's mean is the exact sum divided and rounded half up, the same on every server
// and in every interval.
func TestHistoryMeanIsTheSameExactDecimalOnEveryServer(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 4, 10, 0, 0, 0, time.UTC)
	means := map[string]struct {
		prices []string
		mean   string // by hand
	}{
		"vastai": {[]string{"1.000001", "1.000002"}, "1.000002"},                         // 1.0000015
		"runpod": {[]string{"0.1", "0.2", "0.2"}, "0.166667"},                            // 0.1666…
		"lambda": {[]string{"2.000003", "2.000004", "2.000004", "2.000004"}, "2.000004"}, // 2.00000375
	}
	var batch []schema.Offer
	for provider, m := range means {
		for i, p := range m.prices {
			batch = append(batch, offer(provider, fmt.Sprintf("%s-%d", provider, i), "H100-SXM-80GB", schema.OnDemand, at, p, 1))
		}
	}
	if err := s.InsertOffers(ctx, batch[0].RunID, batch); err != nil {
		t.Fatal(err)
	}
	for _, interval := range []schema.Interval{schema.Hour, schema.Day, schema.Week} {
		t.Run(string(interval), func(t *testing.T) {
			got, err := s.History(ctx, schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}}, From: at.AddDate(0, 0, -7), To: at.AddDate(0, 0, 7), Interval: interval})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(means) {
				t.Fatalf("%d buckets, want one per provider (%d): %+v", len(got), len(means), got)
			}
			for _, p := range got {
				m := means[p.Provider]
				if p.Avg.String() != m.mean || p.Observations != uint64(len(m.prices)) {
					t.Errorf("%s: mean %s over %d observations, want %s over %d", p.Provider, p.Avg, p.Observations, m.mean, len(m.prices))
				}
			}
		})
	}
}

// TestHistoryMeanOfDaysRolledUpBeforeTheSums upgrades a database that has history from before
// migration 0009 (offers_daily_sums): its days keep the server's own average, within a millionth
// of the exact mean, and days after the upgrade get the exact one.
func TestHistoryMeanOfDaysRolledUpBeforeTheSums(t *testing.T) {
	s := storetest.OpenEmpty(t)
	ctx := context.Background()
	if _, err := s.MigrateFS(ctx, migrationsBefore(t, 9)); err != nil {
		t.Fatal(err)
	}
	day1 := time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC) // a Monday
	day2 := day1.AddDate(0, 0, 1)
	offers := func(at time.Time, prices ...string) []schema.Offer {
		var batch []schema.Offer
		for i, p := range prices {
			batch = append(batch, offer("runpod", fmt.Sprintf("x-%d", i), "H100-SXM-80GB", schema.OnDemand, at, p, 1))
		}
		return batch
	}
	insertBeforeValidUntil(t, s, offers(day1, "0.1", "0.2", "0.2")...) // exact mean 0.1666…
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertOffers(ctx, "run-day2", offers(day2, "1.000001", "1.000002")); err != nil { // exact mean 1.0000015
		t.Fatal(err)
	}
	history := func(interval schema.Interval) []schema.HistoryPoint {
		t.Helper()
		got, err := s.History(ctx, schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}}, From: day1, To: day2.Add(time.Hour), Interval: interval})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	near := func(got decimal.Decimal, exact string) bool {
		return got.Sub(dec(exact)).Abs().LessThanOrEqual(dec("0.000001"))
	}
	days := history(schema.Day)
	if len(days) != 2 || !near(days[0].Avg, "0.1666666667") || days[0].Observations != 3 || days[1].Avg.String() != "1.000002" || days[1].Observations != 2 {
		t.Errorf("days = %+v, want the first near 0.166667 over 3 observations, the second exactly 1.000002 over 2", days)
	}
	// The week mixes both: the sums cover two of its five observations, so the server's mean.
	weeks := history(schema.Week)
	if len(weeks) != 1 || !near(weeks[0].Avg, "0.5000006") || weeks[0].Observations != 5 {
		t.Errorf("weeks = %+v, want one near 0.5000006 (2.500003 / 5) over 5 observations", weeks)
	}
}

func TestHistoryRejectsBadQueries(t *testing.T) {
	s := storetest.Open(t)
	t0 := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC)
	for name, q := range map[string]schema.HistoryQuery{
		"no GPU":           {From: t0, To: t0.Add(time.Hour)},
		"inverted range":   {Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}}, From: t0, To: t0.Add(-time.Hour)},
		"unknown interval": {Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}}, From: t0, To: t0.Add(time.Hour), Interval: "fortnight"},
	} {
		if _, err := s.History(context.Background(), q); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestLoadBatchWritesEachPartOnce(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	o1 := offer("vastai", "ask-1", "H100-SXM-80GB", schema.OnDemand, at, "2.5", 8)
	o2 := offer("vastai", "ask-2", "RTX-4090-24GB", schema.Spot, at, "0.3", 1)
	o1.RunID, o2.RunID = "run-a", "run-a"
	b := schema.Batch{
		Run:      schema.ScrapeRun{RunID: "run-a", Provider: "vastai", StartedAt: at, FinishedAt: at.Add(time.Second), Status: schema.RunOK, OffersParsed: 2, OffersLoaded: 2},
		Offers:   []schema.Offer{o1, o2},
		Payloads: []schema.RawPayload{{RunID: "run-a", Provider: "vastai", URL: "https://console.vast.ai/api/v0/bundles/", Status: 200, FetchedAt: at, Body: []byte(`{"offers":[]}`)}},
	}
	// A crash after the offers were written but before the run row: only the rest is loaded.
	if err := s.InsertOffers(ctx, "run-a", b.Offers); err != nil {
		t.Fatal(err)
	}
	res, err := s.CompleteBatch(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(store.LoadResult{PayloadsWritten: 1, RunWritten: true}, res); diff != "" {
		t.Errorf("first load (-want +got):\n%s", diff)
	}
	res, err = s.CompleteBatch(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Skipped() {
		t.Errorf("second load wrote %+v, want nothing", res)
	}
	// The same run id for another provider is a different batch.
	b2 := b
	b2.Run.Provider = "runpod"
	b2.Offers, b2.Payloads = nil, nil
	if res, err := s.CompleteBatch(ctx, b2); err != nil || !res.RunWritten {
		t.Errorf("other provider's batch: %+v, %v; want its run row written", res, err)
	}
	got, err := s.LatestOffers(ctx, schema.OfferFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Errorf("%d offers stored, want 2 (no doubles)", len(got))
	}
	prices, err := s.LatestPrices(ctx, "vastai")
	if err != nil {
		t.Fatal(err)
	}
	want := map[schema.Key]decimal.Decimal{o1.Key(): dec("2.5"), o2.Key(): dec("0.3")}
	if diff := cmp.Diff(want, prices, cmpOffers); diff != "" {
		t.Errorf("latest prices (-want +got):\n%s", diff)
	}
}

// TestLatestOffersMinIntraNode: the interconnect filter runs in the query (so a limit applies
// to what is shown) and ranks as schema.IntraNode.AtLeast: at least nvlink keeps nvswitch and
// infinity_fabric too; at least pcie drops only unknown.
func TestLatestOffersMinIntraNode(t *testing.T) {
	now := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	s, s2 := openAt(t, now)
	ctx := context.Background()
	var offers []schema.Offer
	for i, c := range []schema.IntraNode{schema.IntraPCIe, schema.IntraNVLink, schema.IntraNVSwitch, schema.IntraInfinityFabric, schema.IntraUnknown} {
		o := offer("runpod", string(c), "H100-SXM-80GB", schema.OnDemand, now.Add(-time.Hour), fmt.Sprintf("2.%d0", i), 8)
		o.IntraNode = c
		offers = append(offers, o)
	}
	if err := s.InsertOffers(ctx, offers[0].RunID, offers); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		min   schema.IntraNode
		limit int
		want  []string
	}{
		{schema.IntraNVLink, 0, []string{"nvlink", "nvswitch", "infinity_fabric"}},
		{schema.IntraNVLink, 2, []string{"nvlink", "nvswitch"}},
		{schema.IntraPCIe, 0, []string{"pcie", "nvlink", "nvswitch", "infinity_fabric"}},
		{schema.IntraNVSwitch, 0, []string{"nvswitch"}},
	} {
		got, err := s2.LatestOffers(ctx, schema.OfferFilter{MinIntraNode: tc.min, Limit: tc.limit})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, o := range got {
			ids = append(ids, o.OfferID)
		}
		if diff := cmp.Diff(tc.want, ids); diff != "" {
			t.Errorf("at least %s, limit %d (-want +got):\n%s", tc.min, tc.limit, diff)
		}
	}
}

// TestLargeBatchLoadsWhole: a large batch (65,543 offers, payload bodies past one 8 MiB insert block)
// is stored whole, each row once, rolled up and in offers_latest, on every server.
func TestLargeBatchLoadsWhole(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	const n = 32_768*2 + 7
	offers := make([]schema.Offer, n)
	for i := range offers {
		// Ten models: above about 10k offers a rollup group's distinct offers are an estimate
		// (uniq, docs/analysts.md), which the exact recomputation would not match.
		model := []string{"RTX-4090-24GB", "L40S-48GB", "H100-SXM-80GB", "A100-SXM-80GB", "H200-SXM-141GB",
			"L4-24GB", "A10-24GB", "RTX-A6000-48GB", "B200-SXM-180GB", "MI300X-192GB"}[i%10]
		offers[i] = offer("vastai", fmt.Sprintf("ask-%d", i), model, schema.OnDemand, at, "0.3", 1)
		offers[i].RunID = "run-blocks"
		offers[i].PriceUSDPerGPUHour = decimal.New(int64(30_000+i), -5)
	}
	body := func(c byte) []byte { return bytes.Repeat([]byte{c}, 5<<20) }
	b := schema.Batch{
		Run:    schema.ScrapeRun{RunID: "run-blocks", Provider: "vastai", StartedAt: at, FinishedAt: at.Add(time.Second), Status: schema.RunOK, OffersParsed: n, OffersLoaded: n},
		Offers: offers,
		Payloads: []schema.RawPayload{
			{RunID: "run-blocks", Provider: "vastai", URL: "https://console.vast.ai/api/v0/bundles/?1", Status: 200, FetchedAt: at, Body: body('a')},
			{RunID: "run-blocks", Provider: "vastai", URL: "https://console.vast.ai/api/v0/bundles/?2", Status: 200, FetchedAt: at.Add(time.Second), Body: body('b')},
			{RunID: "run-blocks", Provider: "vastai", URL: "https://console.vast.ai/api/v0/bundles/?3", Status: 200, FetchedAt: at.Add(2 * time.Second), Body: body('c')},
		},
	}
	res, err := s.CompleteBatch(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(store.LoadResult{PayloadsWritten: 3, OffersWritten: n, RunWritten: true}, res); diff != "" {
		t.Errorf("load (-want +got):\n%s", diff)
	}
	got, err := s.LatestOffers(ctx, schema.OfferFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n || !got[0].PriceUSDPerGPUHour.Equal(decimal.New(30_000, -5)) || !got[n-1].PriceUSDPerGPUHour.Equal(decimal.New(30_000+n-1, -5)) {
		t.Errorf("%d latest offers from %v to %v, want %d from 0.3 to %v", len(got), got[0].PriceUSDPerGPUHour, got[len(got)-1].PriceUSDPerGPUHour, n, decimal.New(30_000+n-1, -5))
	}
	payloads, err := s.Payloads(ctx, "run-blocks")
	if err != nil {
		t.Fatal(err)
	}
	if len(payloads) != len(b.Payloads) {
		t.Fatalf("%d payloads stored, want %d", len(payloads), len(b.Payloads))
	}
	for i, p := range payloads {
		if p.URL != b.Payloads[i].URL || !bytes.Equal(p.Body, b.Payloads[i].Body) {
			t.Errorf("payload %d: %s, %d bytes; want %s, %d bytes of %q", i, p.URL, len(p.Body), b.Payloads[i].URL, len(b.Payloads[i].Body), b.Payloads[i].Body[0])
		}
	}
	if diff := storetest.RollupDiff(t, storetest.DatabaseDSN(t, s.Database())); diff != "" {
		t.Errorf("rollups differ from the offers:\n%s", diff)
	}
}
