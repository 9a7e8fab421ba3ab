package store_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// The final daily rows (offers_daily_final): written for completed days by the loads and by
// migrate, taken by History only while they were made from what the rollups hold, so a day is
// read once, from its final rows or from its states, and a history equals the hand computation
// whatever the state of the finalization.

// clockStore is a store on a new database whose clock the test sets.
type clockStore struct {
	*store.Store
	now time.Time
}

// openClockStore opens a store on a new, empty database (migrate it) with its clock at now.
func openClockStore(t *testing.T, now time.Time) *clockStore {
	t.Helper()
	c := &clockStore{now: now}
	s, err := store.Open(context.Background(), storetest.DSN(t), store.Options{Now: func() time.Time { return c.now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	c.Store = s
	return c
}

// finalBatch is one vastai run at at: H100 offers on demand at the given prices, one H100 spot
// offer and an A100 offer (other row groups of the same day).
func finalBatch(runID string, at time.Time, prices ...string) schema.Batch {
	var offers []schema.Offer
	for i, p := range prices {
		offers = append(offers, offer("vastai", fmt.Sprintf("ask-%d", i), "H100-SXM-80GB", schema.OnDemand, at, p, 1))
	}
	offers = append(offers, offer("vastai", "ask-spot", "H100-SXM-80GB", schema.Spot, at, "1.10", 1),
		offer("vastai", "ask-a100", "A100-SXM-80GB", schema.OnDemand, at, "1.39", 1))
	for i := range offers {
		offers[i].RunID = runID
	}
	return schema.Batch{
		Run:      schema.ScrapeRun{RunID: runID, Provider: "vastai", StartedAt: at, FinishedAt: at, Status: schema.RunOK, OffersParsed: uint32(len(offers)), OffersLoaded: uint32(len(offers))},
		Offers:   offers,
		Payloads: []schema.RawPayload{{RunID: runID, Provider: "vastai", URL: "https://console.vast.ai/api/v0/bundles/", Status: 200, FetchedAt: at, Body: []byte(runID)}},
	}
}

// finalObservations returns, per day (YYYY-MM-DD), the observations the newest final rows of
// its row groups count.
func finalObservations(t *testing.T, s *store.Store) map[string]uint64 {
	t.Helper()
	rows, err := rawConn(t, s).Query(context.Background(), `SELECT toString(day), sum(n) FROM (
			SELECT day, provider, gpu_model, price_type, argMax(observations, version) AS n
			FROM offers_daily_final GROUP BY day, provider, gpu_model, price_type
		) GROUP BY day`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]uint64{}
	for rows.Next() {
		var day string
		var n uint64
		if err := rows.Scan(&day, &n); err != nil {
			t.Fatal(err)
		}
		out[day] = n
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkHistory compares History of the H100 over [from, to) with the hand computation from
// the offers stored, by day and by week.
func checkHistory(t *testing.T, s *store.Store, stored []schema.Offer, from, to time.Time) {
	t.Helper()
	hand := &storetest.History{Offers: stored}
	for _, interval := range []schema.Interval{schema.Day, schema.Week} {
		got, err := s.History(context.Background(), schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}}, From: from, To: to, Interval: interval})
		if err != nil {
			t.Fatal(err)
		}
		storetest.HistoryMatches(t, hand.HandHistory("H100-SXM-80GB", nil, interval, from, to), got)
	}
}

// TestFinalizedDayTakesLateRowsOnce loads three days of runs with the clock on the third, then
// rows that arrive late for finalized days, the way a load and an insert outside gpucost's loads
// bring them: the history equals the hand computation at every step (no day counted twice or
// missing), and the final rows follow: written for the completed days only, stale while late
// rows are not finalized, written again by the next load or migrate.
func TestFinalizedDayTakesLateRowsOnce(t *testing.T) {
	day1 := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) // a Monday
	day2, day3, day4 := day1.AddDate(0, 0, 1), day1.AddDate(0, 0, 2), day1.AddDate(0, 0, 3)
	s := openClockStore(t, day3.Add(10*time.Hour))
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	var stored []schema.Offer
	load := func(b schema.Batch) {
		t.Helper()
		if _, err := s.CompleteBatch(ctx, b); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, b.Offers...)
	}
	load(finalBatch("run-1a", day1.Add(6*time.Hour), "2.00", "2.10", "2.45"))
	load(finalBatch("run-1b", day1.Add(18*time.Hour), "2.20", "1.90"))
	load(finalBatch("run-2a", day2.Add(6*time.Hour), "2.30"))
	load(finalBatch("run-3a", day3.Add(6*time.Hour), "2.50", "2.60"))
	from, to := day1, day4
	want := map[string]uint64{"2026-11-02": 5 + 2*2, "2026-11-03": 1 + 2} // H100 on demand, spot, A100
	if diff := cmp.Diff(want, finalObservations(t, s.Store)); diff != "" {
		t.Errorf("final rows after the loads (-want +got):\n%s", diff)
	}
	checkHistory(t, s.Store, stored, from, to)

	// Rows of day 1 inserted outside a load: its final rows are stale until the next load or
	// migrate, and the history takes them from the states meanwhile.
	late := finalBatch("run-1-late", day1.Add(23*time.Hour), "1.50", "3.00")
	if err := s.InsertOffers(ctx, late.Run.RunID, late.Offers); err != nil {
		t.Fatal(err)
	}
	stored = append(stored, late.Offers...)
	if diff := cmp.Diff(want, finalObservations(t, s.Store)); diff != "" {
		t.Errorf("final rows after an insert outside a load (-want +got):\n%s", diff)
	}
	checkHistory(t, s.Store, stored, from, to)

	// A spooled batch of day 2 loaded on day 3: day 2 is finalized again, and so is day 1.
	load(finalBatch("run-2-spooled", day2.Add(20*time.Hour), "2.05", "2.15", "2.25"))
	want = map[string]uint64{"2026-11-02": 5 + 2*2 + 2 + 2, "2026-11-03": 1 + 2 + 3 + 2}
	if diff := cmp.Diff(want, finalObservations(t, s.Store)); diff != "" {
		t.Errorf("final rows after a late load (-want +got):\n%s", diff)
	}
	checkHistory(t, s.Store, stored, from, to)
	if diff := storetest.RollupDiff(t, storetest.DatabaseDSN(t, s.Database())); diff != "" {
		t.Errorf("rollups differ from offers:\n%s", diff)
	}

	// The next day: its first load finalizes day 3.
	s.now = day4.Add(time.Hour)
	load(finalBatch("run-4a", day4.Add(time.Hour), "2.70"))
	want["2026-11-04"] = 2 + 2
	if diff := cmp.Diff(want, finalObservations(t, s.Store)); diff != "" {
		t.Errorf("final rows on the next day (-want +got):\n%s", diff)
	}
	checkHistory(t, s.Store, stored, from, day4.AddDate(0, 0, 1))
}

// TestMigrateFinalizesTheDaysStoredBeforeIt upgrades a database that has history from before
// migration 0012: migrate writes the final rows of its completed days and not of the current
// one, and a history across the two reads each day once.
func TestMigrateFinalizesTheDaysStoredBeforeIt(t *testing.T) {
	day1 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	s := openClockStore(t, day1.AddDate(0, 0, 2).Add(12*time.Hour))
	ctx := context.Background()
	if _, err := s.MigrateFS(ctx, migrationsBefore(t, 12)); err != nil {
		t.Fatal(err)
	}
	var stored []schema.Offer
	for d := range 3 {
		for h, run := range []string{"a", "b"} {
			b := finalBatch(fmt.Sprintf("run-%d%s", d, run), day1.AddDate(0, 0, d).Add(time.Duration(6+8*h)*time.Hour), "2.00", fmt.Sprintf("2.%02d", 10*d+h))
			if err := s.InsertOffers(ctx, b.Run.RunID, b.Offers); err != nil {
				t.Fatal(err)
			}
			stored = append(stored, b.Offers...)
		}
	}
	if res, err := s.Migrate(ctx); err != nil || len(res.Applied) != 1 {
		t.Fatalf("migrate to 0012: %+v, %v", res, err)
	}
	want := map[string]uint64{"2026-11-29": 8, "2026-11-30": 8} // 2 runs of 2 H100 on demand, a spot and an A100
	if diff := cmp.Diff(want, finalObservations(t, s.Store)); diff != "" {
		t.Errorf("final rows after migrate (-want +got):\n%s", diff)
	}
	checkHistory(t, s.Store, stored, day1, day1.AddDate(0, 0, 3))
	// Half-way through the range too.
	checkHistory(t, s.Store, stored, day1.Add(12*time.Hour), day1.AddDate(0, 0, 2).Add(time.Hour))
}

// TestHistoryReadsTheNewestCurrentFinalRow writes final rows by hand over a finalized day: the
// history shows the newest version while it counts what the rollups hold, and the states as
// soon as the newest version does not.
func TestHistoryReadsTheNewestCurrentFinalRow(t *testing.T) {
	day := time.Date(2026, 11, 10, 0, 0, 0, 0, time.UTC)
	s := openClockStore(t, day.AddDate(0, 0, 1))
	ctx := context.Background()
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	b := finalBatch("run-a", day.Add(6*time.Hour), "2.00", "2.40")
	if _, err := s.CompleteBatch(ctx, b); err != nil {
		t.Fatal(err)
	}
	conn := rawConn(t, s.Store)
	write := func(minPrice string, observations uint64) {
		t.Helper()
		if err := conn.Exec(ctx, `INSERT INTO offers_daily_final (day, provider, gpu_model, price_type, min_price, max_price,
				median_price, observations, distinct_offers, sum_price, summed, avg_price, version)
			SELECT day, provider, gpu_model, price_type, toDecimal64(?, 6), max_price, median_price, toUInt64(?), distinct_offers,
				sum_price, summed, avg_price, version + 1
			FROM offers_daily_final
			WHERE gpu_model = 'H100-SXM-80GB' AND price_type = 'on_demand'
			ORDER BY version DESC LIMIT 1`, minPrice, observations); err != nil {
			t.Fatal(err)
		}
	}
	history := func() schema.HistoryPoint {
		t.Helper()
		got, err := s.History(ctx, schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}, PriceTypes: []schema.PriceType{schema.OnDemand}}, From: day, To: day.AddDate(0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 {
			t.Fatalf("history: %+v, want one day", got)
		}
		return got[0]
	}
	write("0.01", 2)
	if p := history(); p.Min.String() != "0.01" || p.Observations != 2 {
		t.Errorf("history with a newer final row: min %s over %d, want that row's 0.01 over 2", p.Min, p.Observations)
	}
	write("0.02", 3) // counts more than the rollups hold
	if p := history(); p.Min.String() != "2" || p.Observations != 2 {
		t.Errorf("history with a stale newest final row: min %s over %d, want the states' 2 over 2", p.Min, p.Observations)
	}
}
