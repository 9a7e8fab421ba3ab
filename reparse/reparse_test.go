package reparse_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/reparse"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/scrapers"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// snapshotDir is the shipped recorded run of the providers, replayed by every scrape here.
const snapshotDir = "../scrapers/testdata/snapshot"

// The runs of the tests: two months, and a run after the range re-derived.
var (
	runOct = schema.Run{ID: "reparse-oct", ObservedAt: time.Date(2026, 10, 30, 12, 0, 0, 0, time.UTC)}
	runNov = schema.Run{ID: "reparse-nov", ObservedAt: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}
	runOut = schema.Run{ID: "reparse-out", ObservedAt: time.Date(2026, 11, 2, 15, 0, 0, 0, time.UTC)}
	from   = time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	to     = time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC)
)

// reparsed are the providers the tests re-derive; lambda's runs are left as they are.
var reparsed = []string{scrapers.CoreWeaveName, scrapers.RunPodName, scrapers.VastName}

// defect is what a defective parser did to one provider's offers: it lost some, mispriced
// some, got a field of some wrong (one the GPU model) and made up others. It counts each, the changes a
// re-derivation with the right parser must report.
type defect struct {
	lost, mispriced, wrong, madeUp int
}

func (d *defect) apply(offers []schema.Offer) []schema.Offer {
	var out []schema.Offer
	for i, o := range offers {
		switch i % 7 {
		case 0:
			d.lost++
			continue
		case 1:
			o.SetPricePerGPU(o.PriceUSDPerGPUHour.Add(decimal.New(1, -2)))
			d.mispriced++
		case 2:
			o.Region = "xx-defect"
			d.wrong++
		case 3:
			o.GPUModel = "DEFECT-GPU" // a row group of its own, which a re-derivation removes
			d.wrong++
		case 4:
			bogus := o
			bogus.OfferID = "made-up-" + o.OfferID
			out = append(out, bogus)
			d.madeUp++
		}
		out = append(out, o)
	}
	return out
}

// defective is a source whose parser has the defect: its payloads are the real ones, its
// offers are not.
type defective struct {
	pipeline.Source
	d *defect
}

func (s defective) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	if emit := run.Emit; emit != nil {
		run.Emit = func(p schema.Page) error {
			p.Offers = s.d.apply(p.Offers)
			return emit(p)
		}
	}
	ex, err := s.Source.Fetch(ctx, run)
	ex.Offers = s.d.apply(ex.Offers)
	return ex, err
}

// sources are the snapshot's sources, replayed, as the demo runs them but RunPod with a key, so
// that its runs store the v2 catalog's answer (its serverless prices) beside GraphQL's; those of
// defects (by provider) have their defect.
func sources(t *testing.T, defects map[string]*defect) []pipeline.Source {
	t.Helper()
	c, err := scrapers.NewClient(scrapers.ClientConfig{ReplayDir: snapshotDir, MaxBodyBytes: 64 << 20, MaxSourceBytes: 256 << 20})
	if err != nil {
		t.Fatal(err)
	}
	var out []pipeline.Source
	for _, s := range []pipeline.Source{
		scrapers.NewCoreWeave(c, scrapers.CoreWeaveConfig{Delay: -1}, nil),
		scrapers.NewLambda(c, scrapers.LambdaConfig{Delay: -1}, nil),
		scrapers.NewRunPod(c, scrapers.RunPodConfig{APIKey: "snapshot-key"}, nil),
		scrapers.NewVast(c, scrapers.VastConfig{RequestInterval: -1}, nil),
	} {
		if d := defects[s.Name()]; d != nil {
			s = defective{Source: s, d: d}
		}
		out = append(out, s)
	}
	return out
}

// validation is the scrape configuration of the tests, the re-derivations' too.
var validation = pipeline.Config{OutlierFactor: 3, MaxPricePerGPUHour: decimal.NewFromInt(200)}

// scrape stores one run of the sources.
func scrape(t *testing.T, st testStore, run schema.Run, srcs []pipeline.Source) {
	t.Helper()
	cfg := validation
	cfg.SpoolDir = t.TempDir()
	r, err := pipeline.New(cfg, srcs, st.Store, st.Store, pipeline.Options{RunID: run.ID, Now: func() time.Time { return run.ObservedAt }})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := r.Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range rep.Providers {
		if p.Status == schema.RunFailed || p.Spooled {
			t.Fatalf("scraping %s: %s %+v", run.ID, p.Provider, p)
		}
	}
}

// defectiveHistory stores the three runs with the defective parsers of the re-derived
// providers, and returns the defects of the runs in the range.
func defectiveHistory(t *testing.T, st testStore) map[string]*defect {
	t.Helper()
	inRange := map[string]*defect{}
	for _, p := range reparsed {
		inRange[p] = &defect{}
	}
	scrape(t, st, runOct, sources(t, inRange))
	scrape(t, st, runNov, sources(t, inRange))
	after := map[string]*defect{}
	for _, p := range reparsed {
		after[p] = &defect{}
	}
	scrape(t, st, runOut, sources(t, after))
	return inRange
}

// rightHistory stores the same runs as a scrape with today's parsers would have: right within
// the range, defective after it.
func rightHistory(t *testing.T, st testStore) {
	t.Helper()
	scrape(t, st, runOct, sources(t, nil))
	scrape(t, st, runNov, sources(t, nil))
	after := map[string]*defect{}
	for _, p := range reparsed {
		after[p] = &defect{}
	}
	scrape(t, st, runOut, sources(t, after))
}

func options() reparse.Options {
	return reparse.Options{From: from, To: to, Providers: reparsed, Validation: validation}
}

// TestReparseEqualsAFreshScrape: a history stored by defective parsers, re-derived with today's,
// equals the history today's parsers would have stored (offers, rollups, final rows, latest
// view), and the runs outside the range or of other providers stay as they were.
func TestReparseEqualsAFreshScrape(t *testing.T) {
	ctx := context.Background()
	got, want := openStore(t), openStore(t)
	defectiveHistory(t, got)
	rightHistory(t, want)
	if diff := compareHistories(t, got, want); diff == "" {
		t.Fatal("the defective history equals the right one: the test proves nothing")
	}
	// The defect's own GPU model has a daily history; re-derived, it has none (its final rows
	// are emptied, and History skips them).
	defectHistory := func() []schema.HistoryPoint {
		t.Helper()
		points, err := got.History(ctx, schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"DEFECT-GPU"}},
			From: from, To: to.AddDate(0, 0, 2), Interval: schema.Day})
		if err != nil {
			t.Fatal(err)
		}
		return points
	}
	onOct30 := func(points []schema.HistoryPoint) (n int) {
		for _, p := range points {
			if p.Bucket.Equal(runOct.ObservedAt.Truncate(24 * time.Hour)) {
				n++
			}
		}
		return n
	}
	if onOct30(defectHistory()) == 0 {
		t.Fatal("the defective history has no DEFECT-GPU points on runOct's day: the test proves nothing")
	}
	rep, err := reparse.Run(ctx, got.Store, options())
	if err != nil {
		t.Fatal(err)
	}
	if points := defectHistory(); onOct30(points) != 0 || len(points) == 0 {
		// runOut, after the range, keeps its defect on its day (runNov's too).
		t.Errorf("DEFECT-GPU history after the re-derivation: %+v, want none on runOct's day, some on runOut's", points)
	}
	if diff := cmp.Diff([]string{"2026-10", "2026-11"}, rep.Months); diff != "" {
		t.Errorf("months (-want +got):\n%s", diff)
	}
	if diff := compareHistories(t, got, want); diff != "" {
		t.Errorf("re-derived history differs from a fresh scrape's (-fresh +re-derived):\n%s", diff)
	}
	if diff := storetest.RollupDiff(t, got.dsn); diff != "" {
		t.Errorf("rollups differ from a recomputation from offers:\n%s", diff)
	}
	// A dry run now finds nothing to change, and a second re-derivation changes nothing.
	dry := options()
	dry.DryRun = true
	check, err := reparse.Run(ctx, got.Store, dry)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range check.Providers {
		if p.Runs != 2 || p.Added+p.Removed+p.Repriced+p.Changed != 0 {
			t.Errorf("a dry run after the re-derivation of %s: %+v, want 2 runs and no change", p.Provider, p)
		}
	}
	if _, err := reparse.Run(ctx, got.Store, options()); err != nil {
		t.Fatal(err)
	}
	if diff := compareHistories(t, got, want); diff != "" {
		t.Errorf("after a second re-derivation (-fresh +re-derived):\n%s", diff)
	}
}

// TestReparseDryRun reports what the defect did, and writes nothing.
func TestReparseDryRun(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	defects := defectiveHistory(t, st)
	before := dump(t, st)
	opts := options()
	opts.DryRun = true
	rep, err := reparse.Run(ctx, st.Store, opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, dump(t, st)); diff != "" {
		t.Errorf("a dry run wrote (-before +after):\n%s", diff)
	}
	if len(rep.Providers) != len(reparsed) {
		t.Fatalf("providers %+v, want %v", rep.Providers, reparsed)
	}
	for _, p := range rep.Providers {
		d := defects[p.Provider]
		// The defect lost, mispriced, changed and made up offers; a re-derivation adds, reprices,
		// changes and removes as many.
		want := [4]int{d.lost, d.mispriced, d.wrong, d.madeUp}
		if got := [4]int{p.Added, p.Repriced, p.Changed, p.Removed}; got != want || p.Runs != 2 || len(p.Kept) != 0 {
			t.Errorf("%s: runs %d, added/repriced/changed/removed %v, kept %v; want 2 runs, %v, none kept", p.Provider, p.Runs, got, p.Kept, want)
		}
		if p.After != p.Before+d.lost-d.madeUp {
			t.Errorf("%s: %d offers before, %d after; want %d after", p.Provider, p.Before, p.After, p.Before+d.lost-d.madeUp)
		}
	}
}

// TestReparseInterruptedAndRerun: a re-derivation stopped after any of its steps and run again
// ends as one that was not stopped.
func TestReparseInterruptedAndRerun(t *testing.T) {
	want := openStore(t)
	rightHistory(t, want)
	for _, stop := range []string{"month 202610", "month 202611", "latest"} {
		t.Run(stop, func(t *testing.T) {
			ctx := context.Background()
			got := openStore(t)
			defectiveHistory(t, got)
			opts := options()
			stopped := errors.New("stopped")
			opts.OnStep = func(step string) error {
				if step == stop {
					return stopped
				}
				return nil
			}
			if _, err := reparse.Run(ctx, got.Store, opts); !errors.Is(err, stopped) {
				t.Fatalf("stopped at %q: %v", stop, err)
			}
			if _, err := reparse.Run(ctx, got.Store, options()); err != nil {
				t.Fatal(err)
			}
			if diff := compareHistories(t, got, want); diff != "" {
				t.Errorf("(-fresh +re-derived after a stop at %q):\n%s", stop, diff)
			}
		})
	}
}

// compareHistories compares everything the two stores derive from offers.
func compareHistories(t *testing.T, got, want testStore) string {
	t.Helper()
	return cmp.Diff(dump(t, want), dump(t, got))
}

// testStore is a migrated store of its own database, and the database's DSN.
type testStore struct {
	*store.Store
	dsn string
}

func openStore(t testing.TB) testStore {
	t.Helper()
	dsn := storetest.DSN(t)
	st, err := store.Open(context.Background(), dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return testStore{st, dsn}
}

// history is what a store holds of the test runs: each run's offers, and the rollups, final
// rows and latest view as text.
type history struct {
	Offers map[string][]schema.Offer
	Tables map[string][]string
}

func dump(t *testing.T, st testStore) history {
	t.Helper()
	ctx := context.Background()
	h := history{Offers: map[string][]schema.Offer{}, Tables: map[string][]string{}}
	for _, r := range []schema.Run{runOct, runNov, runOut} {
		for _, p := range append([]string{scrapers.LambdaName}, reparsed...) {
			offers, err := st.RunOffers(ctx, r.ID, p)
			if err != nil {
				t.Fatal(err)
			}
			slices.SortFunc(offers, func(a, b schema.Offer) int {
				return strings.Compare(a.OfferID+"/"+string(a.PriceType), b.OfferID+"/"+string(b.PriceType))
			})
			h.Offers[r.ID+"/"+p] = offers
		}
	}
	conn := storetest.Conn(t, st.dsn)
	for name, q := range map[string]string{
		"offers_daily": `SELECT day, provider, gpu_model, price_type, minMerge(min_price), maxMerge(max_price), avgMerge(avg_price),
			quantilesTDigestMerge(0.1, 0.25, 0.5, 0.75, 0.9)(price_quantiles), countMerge(observations), uniqMerge(distinct_offers), sumMapMerge(runs)
			FROM offers_daily GROUP BY day, provider, gpu_model, price_type`,
		"offers_daily_sums": `SELECT day, provider, gpu_model, price_type, sumMerge(sum_price), countMerge(observations), sumMapMerge(runs)
			FROM offers_daily_sums GROUP BY day, provider, gpu_model, price_type`,
		"offers_daily_final": `SELECT day, provider, gpu_model, price_type, min_price, max_price, median_price, observations, distinct_offers, sum_price, summed, avg_price
			FROM (SELECT * FROM offers_daily_final FINAL) WHERE observations > 0`,
		"offers_latest": `SELECT provider, price_type, offer_id, observed_at, run_id, price_usd_per_gpu_hour, gpu_model, region FROM offers_latest FINAL`,
	} {
		h.Tables[name] = rows(t, conn, q)
	}
	return h
}

// rows runs q and returns its rows as text, sorted.
func rows(t *testing.T, conn driver.Conn, q string) []string {
	t.Helper()
	rs, err := conn.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	defer rs.Close()
	types := rs.ColumnTypes()
	var out []string
	for rs.Next() {
		vals := make([]any, len(types))
		for i, ct := range types {
			vals[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rs.Scan(vals...); err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(vals))
		for i, v := range vals {
			parts[i] = fmt.Sprint(reflect.ValueOf(v).Elem().Interface())
		}
		out = append(out, strings.Join(parts, " | "))
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

// lostPages is a source whose run stored its answers' offers but not all its payloads: with drop
// only the first answer's payload (a retention dropped the others), with cut the first payload
// cut short (an answer today's parser no longer reads, the others fine).
type lostPages struct {
	pipeline.Source
	drop, cut bool
}

func (s lostPages) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	n := 0
	thin := func(p []schema.RawPayload) []schema.RawPayload {
		var out []schema.RawPayload
		for _, pl := range p {
			n++
			switch {
			case s.drop && n > 1:
				continue
			case s.cut && n == 1:
				pl.Body = pl.Body[:len(pl.Body)/2]
			}
			out = append(out, pl)
		}
		return out
	}
	if emit := run.Emit; emit != nil {
		run.Emit = func(p schema.Page) error {
			p.Payloads = thin(p.Payloads)
			return emit(p)
		}
	}
	ex, err := s.Source.Fetch(ctx, run)
	ex.Payloads = thin(ex.Payloads)
	return ex, err
}

// TestReparseKeepsRunsItCannotRederiveWhole: a run whose payloads were partly lost, or no
// longer parse, keeps its stored offers, and the report and the error say so.
func TestReparseKeepsRunsItCannotRederiveWhole(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name      string
		drop, cut bool
		why       string
	}{
		{"payloads lost", true, false, "fewer than 50% of the"},
		{"a payload cut short", false, true, "does not read its payloads"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := openStore(t)
			var srcs []pipeline.Source
			for _, s := range sources(t, nil) {
				if s.Name() == scrapers.VastName {
					s = lostPages{Source: s, drop: tt.drop, cut: tt.cut}
				}
				srcs = append(srcs, s)
			}
			scrape(t, st, runOct, srcs)
			before := dump(t, st)
			opts := options()
			opts.Providers = []string{scrapers.VastName}
			opts.Validation.MinOfferRatio = 0.5
			rep, err := reparse.Run(ctx, st.Store, opts)
			if err != nil {
				t.Fatal(err)
			}
			var incomplete *reparse.Incomplete
			if !errors.As(rep.Err(), &incomplete) || incomplete.Kept != 1 {
				t.Errorf("report error %v, want one run kept", rep.Err())
			}
			if p := rep.Providers[0]; p.Runs != 0 || len(p.Kept) != 1 || !strings.Contains(p.Kept[0].Why, tt.why) || p.After != p.Before {
				t.Errorf("report %+v, want the run kept (%q) with its %d offers", p, tt.why, p.Before)
			}
			if diff := cmp.Diff(before, dump(t, st)); diff != "" {
				t.Errorf("a kept run changed (-before +after):\n%s", diff)
			}
		})
	}
}
