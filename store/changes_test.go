package store_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// priceSeries is one offer observed every six hours from t0, with the price listed per step.
type priceSeries struct {
	provider, id, model string
	pt                  schema.PriceType
	prices              []string
}

// changesFixture stores three offers with known moves and returns the store, the start time
// and every move as a hand-written list.
func changesFixture(t *testing.T) (*store.Store, time.Time, []schema.PriceChange) {
	t.Helper()
	s := storetest.Open(t)
	t0 := time.Date(2026, 3, 30, 0, 0, 0, 0, time.UTC) // spans a month boundary: two partitions
	const step = 6 * time.Hour
	series := []priceSeries{
		{"vastai", "ask-1", "H100-SXM-80GB", schema.OnDemand, []string{"2.00", "2.00", "1.80", "1.80", "1.80", "2.10", "2.10", "2.10"}},
		{"runpod", "H100 SXM/secure", "H100-SXM-80GB", schema.Spot, []string{"1.50", "1.50", "1.50", "1.50", "1.50", "1.50", "1.50", "1.50"}},
		{"lambda", "gpu_8x_a100", "A100-SXM-80GB", schema.OnDemand, []string{"1.29", "1.29", "1.29", "1.29", "1.49", "1.49", "1.29", "1.29"}},
	}
	var offers []schema.Offer
	var moves []schema.PriceChange
	for _, ser := range series {
		for i, p := range ser.prices {
			at := t0.Add(time.Duration(i) * step)
			o := offer(ser.provider, ser.id, ser.model, ser.pt, at, p, 8)
			offers = append(offers, o)
			if i > 0 && p != ser.prices[i-1] {
				old, nw := dec(ser.prices[i-1]), dec(p)
				moves = append(moves, schema.PriceChange{
					ChangedAt: at, PreviousAt: at.Add(-step), Provider: ser.provider, PriceType: ser.pt, OfferID: ser.id,
					GPUModel: ser.model, GPUCount: 8, Tier: schema.TierSecure, Region: "US-TX-3",
					OldPrice: old, NewPrice: nw, ChangeUSD: nw.Sub(old),
					ChangePct: nw.Sub(old).Mul(dec("100")).DivRound(old, 2), RunID: o.RunID,
				})
			}
		}
	}
	// Insert in two batches, newest first, to show that insertion order does not matter.
	half := len(offers) / 2
	if err := s.InsertOffers(context.Background(), "second", offers[half:]); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertOffers(context.Background(), "first", offers[:half]); err != nil {
		t.Fatal(err)
	}
	// The fixture's price moves, worked out by hand.
	var pcts []string
	for _, m := range moves {
		pcts = append(pcts, m.ChangePct.StringFixed(2))
	}
	if got, want := strings.Join(pcts, " "), "-10.00 16.67 15.50 -13.42"; got != want {
		t.Fatalf("fixture moves by %s percent, want %s", got, want)
	}
	return s, t0, moves
}

func TestChangesExactlyWherePricesMoved(t *testing.T) {
	s, t0, moves := changesFixture(t)
	ctx := context.Background()
	step := 6 * time.Hour
	// want filters the hand-written moves, newest first like Changes.
	want := func(keep func(schema.PriceChange) bool) []schema.PriceChange {
		var out []schema.PriceChange
		for _, m := range moves {
			if keep(m) {
				out = append(out, m)
			}
		}
		sort.Slice(out, func(i, j int) bool {
			a, b := out[i], out[j]
			if !a.ChangedAt.Equal(b.ChangedAt) {
				return a.ChangedAt.After(b.ChangedAt)
			}
			return a.Provider < b.Provider
		})
		return out
	}
	all := func(schema.PriceChange) bool { return true }
	tests := []struct {
		name string
		q    schema.ChangesQuery
		want []schema.PriceChange
	}{
		{"everything", schema.ChangesQuery{From: t0.AddDate(0, 0, -1), To: t0.AddDate(0, 0, 7)}, want(all)},
		{"a range that starts right at a move uses the observation before it",
			schema.ChangesQuery{From: t0.Add(2 * step), To: t0.Add(3 * step)},
			want(func(c schema.PriceChange) bool { return c.ChangedAt.Equal(t0.Add(2 * step)) })},
		{"the end is exclusive",
			schema.ChangesQuery{From: t0, To: t0.Add(2 * step)}, nil},
		{"one GPU model", schema.ChangesQuery{Selection: schema.Selection{GPUModels: []string{"A100-SXM-80GB"}}, From: t0, To: t0.AddDate(0, 0, 7)},
			want(func(c schema.PriceChange) bool { return c.GPUModel == "A100-SXM-80GB" })},
		{"provider and price type", schema.ChangesQuery{Selection: schema.Selection{Providers: []string{"vastai", "runpod"}, PriceTypes: []schema.PriceType{schema.OnDemand}}, From: t0, To: t0.AddDate(0, 0, 7)},
			want(func(c schema.PriceChange) bool { return c.Provider == "vastai" })},
		{"big moves only", schema.ChangesQuery{From: t0, To: t0.AddDate(0, 0, 7), MinChangePct: 15},
			want(func(c schema.PriceChange) bool { return c.ChangePct.Abs().GreaterThanOrEqual(dec("15")) })},
		{"limit keeps the newest", schema.ChangesQuery{From: t0, To: t0.AddDate(0, 0, 7), Limit: 2}, want(all)[:2]},
		{"a provider with a quote in its name finds nothing", schema.ChangesQuery{Selection: schema.Selection{Providers: []string{"x' OR 1=1 --"}}, From: t0, To: t0.AddDate(0, 0, 7)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Changes(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpOffers); diff != "" {
				t.Errorf("Changes (-want +got):\n%s", diff)
			}
			// CountChanges counts what Changes finds without a limit: what a limit left out.
			unlimited := tt.q
			unlimited.Limit = 0
			all, err := s.Changes(ctx, unlimited)
			if err != nil {
				t.Fatal(err)
			}
			if n, err := s.CountChanges(ctx, tt.q); err != nil || n != len(all) {
				t.Errorf("CountChanges = %d (%v), want %d", n, err, len(all))
			}
		})
	}
}

func TestChangesViewAgreesWithChanges(t *testing.T) {
	s, t0, moves := changesFixture(t)
	ctx := context.Background()
	got, err := s.Changes(ctx, schema.ChangesQuery{From: t0.AddDate(-1, 0, 0), To: t0.AddDate(1, 0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(moves) {
		t.Fatalf("Changes found %d moves, want %d", len(got), len(moves))
	}
	// The view is the analysts' way to the same rows: checked by the docs test on its columns,
	// and here on its count.
	conn := rawConn(t, s)
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM price_changes").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != uint64(len(moves)) {
		t.Errorf("price_changes has %d rows, want %d", n, len(moves))
	}
}

func TestChangesRejectsBadQueries(t *testing.T) {
	s := storetest.Open(t)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		q       schema.ChangesQuery
		wantErr string
	}{
		{"no range", schema.ChangesQuery{}, "a start and an end are required"},
		{"inverted", schema.ChangesQuery{From: now, To: now.Add(-time.Hour)}, "is not after the start"},
		{"negative percent", schema.ChangesQuery{From: now, To: now.Add(time.Hour), MinChangePct: -1}, "negative"},
		{"negative limit", schema.ChangesQuery{From: now, To: now.Add(time.Hour), Limit: -1}, "negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Changes(context.Background(), tt.q)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestObservationsStreamsInOrder(t *testing.T) {
	s, t0, _ := changesFixture(t)
	ctx := context.Background()
	var got []string
	n, err := s.Observations(ctx, schema.ObservationFilter{Selection: schema.Selection{Providers: []string{"vastai", "lambda"}}, From: t0.Add(6 * time.Hour), To: t0.Add(18 * time.Hour)},
		func(o *schema.Offer) error {
			got = append(got, fmt.Sprintf("%s %s %s", o.ObservedAt.Format("02T15"), o.Provider, o.PriceUSDPerGPUHour.StringFixed(2)))
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"30T06 lambda 1.29", "30T06 vastai 2.00", "30T12 lambda 1.29", "30T12 vastai 1.80"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Observations (-want +got):\n%s", diff)
	}
	if n != len(want) {
		t.Errorf("Observations returned %d, want %d", n, len(want))
	}
	stop := fmt.Errorf("enough")
	n, err = s.Observations(ctx, schema.ObservationFilter{From: t0, To: t0.AddDate(0, 0, 7)}, func(*schema.Offer) error { return stop })
	if err != stop || n != 0 {
		t.Errorf("Observations with a failing callback = %d, %v; want 0, %v", n, err, stop)
	}
}

func TestLoadImportOnceAndCompletesAPartialOne(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	at := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	var offers []schema.Offer
	for i := range 3 {
		// Two monthly partitions: an insert of them writes two parts.
		o := offer("aws", fmt.Sprintf("import:p5.48xlarge:%d", i), "H100-SXM-80GB", schema.OnDemand, at.AddDate(0, i, 0), "4.10", 8)
		o.RunID = "import-abc"
		offers = append(offers, o)
	}
	imp := schema.Import{RunID: "import-abc", Offers: offers, Payload: schema.RawPayload{Provider: "import", URL: "import:prices.csv", Status: 200, FetchedAt: at, Body: []byte("provider,gpu\n")}}
	// An import cut off after the part of its first month.
	if err := s.InsertOffers(ctx, imp.RunID, offers[:1]); err != nil {
		t.Fatal(err)
	}
	res, err := s.LoadImport(ctx, imp)
	if err != nil {
		t.Fatal(err)
	}
	if res.OffersWritten != 2 || !res.PayloadWritten {
		t.Fatalf("import after a cut-off one: %+v, want the 2 missing offers and the payload written", res)
	}
	imp.Payload.FetchedAt = at.Add(time.Hour) // imported again later
	res, err = s.LoadImport(ctx, imp)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Skipped() {
		t.Fatalf("second import: %+v, want skipped", res)
	}
	var n int
	if _, err := s.Observations(ctx, schema.ObservationFilter{From: at, To: at.AddDate(0, 3, 0)}, func(*schema.Offer) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 3 {
		t.Fatalf("after two imports the store holds %d offers, want 3", n)
	}
	if payloads, err := s.Payloads(ctx, imp.RunID); err != nil || len(payloads) != 1 {
		t.Errorf("payloads of the import: %d (err %v), want 1", len(payloads), err)
	}
	if diff := storetest.RollupDiff(t, storetest.DatabaseDSN(t, s.Database())); diff != "" {
		t.Errorf("rollups differ from offers:\n%s", diff)
	}
	if runs, err := s.LastRuns(ctx); err != nil || len(runs) != 0 {
		t.Errorf("an import wrote run-log rows %v (err %v): imports are not scrapes", runs, err)
	}
}

// rawConn opens a driver connection to the store's database, for SQL the store does not issue
// (analysts' queries on the views).
func rawConn(tb testing.TB, s *store.Store) driver.Conn {
	tb.Helper()
	return storetest.Conn(tb, storetest.DatabaseDSN(tb, s.Database()))
}

// TestChangesInPages: the changes read in pages, each starting after the last change of the one
// before (ChangesQuery.After), are the changes read at once, every one once and in order. In
// the generated history every offer is observed at the same steps, so moves share their times.
func TestChangesInPages(t *testing.T) {
	fx := storetest.NewHistory(t)
	ctx := context.Background()
	q := schema.ChangesQuery{From: fx.Start, To: fx.End}
	whole, err := fx.Store.Changes(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) != len(fx.Moves) {
		t.Fatalf("%d changes, want the %d moves of the generated history", len(whole), len(fx.Moves))
	}
	var paged []schema.PriceChange
	q.Limit = 3
	for pages := 0; ; pages++ {
		if pages > len(whole) {
			t.Fatal("the pages never end")
		}
		page, err := fx.Store.Changes(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		paged = append(paged, page...)
		if len(page) < q.Limit {
			break
		}
		after := page[len(page)-1].Position()
		q.After = &after
	}
	if diff := cmp.Diff(whole, paged, cmpOffers); diff != "" {
		t.Errorf("read at once (-) and in pages (+):\n%s", diff)
	}
}
