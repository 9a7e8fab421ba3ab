package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// The final daily rows (offers_daily_final): written for completed days by the loads and by
// migrate, read by History for the days that have them, the states for the others, so a day is
// read once and a history equals the hand computation of what the loads stored.

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

// checkHistory compares History of the H100 over [from, to) with the hand computation: by day
// from the offers of days, by week (always from the states) from the offers of weeks.
func checkHistory(t *testing.T, s *store.Store, days, weeks []schema.Offer, from, to time.Time) {
	t.Helper()
	for interval, stored := range map[schema.Interval][]schema.Offer{schema.Day: days, schema.Week: weeks} {
		got, err := s.History(context.Background(), schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}}, From: from, To: to, Interval: interval})
		if err != nil {
			t.Fatal(err)
		}
		hand := &storetest.History{Offers: stored}
		storetest.HistoryMatches(t, hand.HandHistory("H100-SXM-80GB", nil, interval, from, to), got)
	}
}

// TestFinalizedDayTakesLateRowsOnce loads three days of runs with the clock on the third, then
// rows that arrive late for finalized days, by a load and by an insert outside gpucost's loads,
// and the next day's first load: the final rows are written for the completed days only, again
// for a day a load brings rows to, and by migrate for a day that got rows outside the loads; the
// history equals the hand computation of what it has finalized plus the current day, with no
// day counted twice or missing, at every step.
func TestFinalizedDayTakesLateRowsOnce(t *testing.T) {
	day0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day1, day2, day3, day4 := day0.AddDate(0, 0, 1), day0.AddDate(0, 0, 2), day0.AddDate(0, 0, 3), day0.AddDate(0, 0, 4)
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
	final := func(want map[string]uint64) {
		t.Helper()
		if diff := cmp.Diff(want, finalObservations(t, s.Store)); diff != "" {
			t.Errorf("final rows (-want +got):\n%s", diff)
		}
	}
	load(finalBatch("run-1a", day1.Add(6*time.Hour), "2.00", "2.10", "2.45"))
	load(finalBatch("run-1b", day1.Add(18*time.Hour), "2.20", "1.90"))
	load(finalBatch("run-2a", day2.Add(6*time.Hour), "2.30"))
	load(finalBatch("run-3a", day3.Add(6*time.Hour), "2.50", "2.60"))
	// Each run adds its H100 offers on demand, a spot offer and an A100 offer.
	want := map[string]uint64{"2026-11-02": 5 + 4, "2026-11-03": 3}
	final(want)
	checkHistory(t, s.Store, stored, stored, day1, day4)

	// Rows inserted outside a load: into finalized day 1, which keeps its final rows until the
	// next migrate, and into day 0, which has none and is read from the states.
	late := finalBatch("run-1-late", day1.Add(23*time.Hour), "1.50", "3.00")
	early := finalBatch("run-0", day0.Add(12*time.Hour), "2.80")
	for _, b := range []schema.Batch{late, early} {
		if err := s.InsertOffers(ctx, b.Run.RunID, b.Offers); err != nil {
			t.Fatal(err)
		}
	}
	final(want)
	stored = append(stored, early.Offers...)
	withLate := append(slices.Clone(stored), late.Offers...) // the weeks' states have them
	checkHistory(t, s.Store, stored, withLate, day0, day4)

	// A spooled batch of day 2 loaded on day 3: the load finalizes day 2 again.
	spooled := finalBatch("run-2-spooled", day2.Add(20*time.Hour), "2.05", "2.15", "2.25")
	load(spooled)
	withLate = append(withLate, spooled.Offers...)
	want["2026-11-03"] = 3 + 5
	final(want)
	checkHistory(t, s.Store, stored, withLate, day0, day4)

	// Migrate finalizes the days that got rows outside the loads.
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	want["2026-11-01"], want["2026-11-02"] = 3, 5+4+4
	final(want)
	stored = append(stored, late.Offers...)
	checkHistory(t, s.Store, stored, stored, day0, day4)
	if diff := storetest.RollupDiff(t, storetest.DatabaseDSN(t, s.Database())); diff != "" {
		t.Errorf("rollups differ from offers:\n%s", diff)
	}

	// The next day: its first load finalizes day 3, which has just ended.
	s.now = day4.Add(time.Hour)
	load(finalBatch("run-4a", day4.Add(time.Hour), "2.70"))
	want["2026-11-04"] = 4
	final(want)
	checkHistory(t, s.Store, stored, stored, day0, day4.AddDate(0, 0, 1))
}

// TestMigrateFinalizesTheDaysStoredBeforeIt upgrades a database that has history from before
// migration 0012: migrate writes the final rows of its completed days and not of the current
// one, and a history across the two reads each day once.
func TestMigrateFinalizesTheDaysStoredBeforeIt(t *testing.T) {
	day1 := time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC)
	s := openClockStore(t, day1.AddDate(0, 0, 2).Add(12*time.Hour))
	ctx := context.Background()
	if _, err := s.MigrateFS(ctx, migrationsBefore(t, 12, parserVersionMigration)); err != nil {
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
	checkHistory(t, s.Store, stored, stored, day1, day1.AddDate(0, 0, 3))
	// Half-way through the range too.
	checkHistory(t, s.Store, stored, stored, day1.Add(12*time.Hour), day1.AddDate(0, 0, 2).Add(time.Hour))
}

// TestHistoryReadsTheNewestFinalRow writes final rows by hand over a finalized day: History
// shows each row group's newest version, whatever the order of the inserts, and migrate writes
// the day again once its newest version no longer counts what the rollups hold.
func TestHistoryReadsTheNewestFinalRow(t *testing.T) {
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
	// write copies the H100 on-demand row group's newest final row with another minimum, count
	// and version (relative to the newest).
	write := func(minPrice string, observations uint64, version int) {
		t.Helper()
		if err := conn.Exec(ctx, `INSERT INTO offers_daily_final (day, provider, gpu_model, price_type, min_price, max_price,
				median_price, observations, distinct_offers, sum_price, summed, avg_price, version)
			SELECT day, provider, gpu_model, price_type, toDecimal64(?, 6), max_price, median_price, toUInt64(?), distinct_offers,
				sum_price, toUInt64(?), avg_price, toUInt64(toInt64(version) + ?)
			FROM offers_daily_final
			WHERE gpu_model = 'H100-SXM-80GB' AND price_type = 'on_demand'
			ORDER BY version DESC LIMIT 1`, minPrice, observations, observations, version); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what, min string, observations uint64) {
		t.Helper()
		got, err := s.History(ctx, schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}, PriceTypes: []schema.PriceType{schema.OnDemand}}, From: day, To: day.AddDate(0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Min.String() != min || got[0].Observations != observations {
			t.Errorf("%s: history %+v, want one day with min %s over %d observations", what, got, min, observations)
		}
	}
	check("as loaded", "2", 2)
	write("0.01", 2, 1)
	check("a newer version", "0.01", 2)
	write("0.02", 2, -5)
	check("an older version inserted later", "0.01", 2)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	check("migrate leaves a newest version that counts what the rollups hold", "0.01", 2)
	write("0.03", 3, 1)
	check("a newer version that counts more than the rollups hold", "0.03", 3)
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	check("migrate writes the day again", "2", 2)
}
