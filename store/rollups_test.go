package store_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/store/storetest"
)

// rollupBatch is a batch of one provider and run over several row groups of one day.
func rollupBatch(runID string, at time.Time, cents int) schema.Batch {
	var offers []schema.Offer
	for i, m := range []struct {
		model string
		pt    schema.PriceType
	}{{"H100-SXM-80GB", schema.OnDemand}, {"H100-SXM-80GB", schema.OnDemand}, {"H100-SXM-80GB", schema.Spot}, {"A100-SXM-80GB", schema.OnDemand}, {"L4-24GB", schema.OnDemand}} {
		o := offer("vastai", fmt.Sprintf("ask-%d", i), m.model, m.pt, at, fmt.Sprintf("%d.%02d", (cents+i*7)/100, (cents+i*7)%100), 1)
		o.RunID = runID
		offers = append(offers, o)
	}
	return schema.Batch{
		Run:      schema.ScrapeRun{RunID: runID, Provider: "vastai", StartedAt: at, FinishedAt: at, Status: schema.RunOK, OffersParsed: 5, OffersLoaded: 5},
		Offers:   offers,
		Payloads: []schema.RawPayload{{RunID: runID, Provider: "vastai", URL: "https://console.vast.ai/api/v0/bundles/", Status: 200, FetchedAt: at, Body: []byte(runID)}},
	}
}

// TestLoadBatchRepairsRollupsACrashLeftBehind stores a batch's offers the way a ClickHouse crash
// during its insert leaves them (the part of offers written, the materialized views' parts not:
// here the views are detached while it is inserted) and loads the batch again: the rollups end
// equal to a recomputation from offers, with each observation once, on every server version.
func TestLoadBatchRepairsRollupsACrashLeftBehind(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	conn := rawConn(t, s)
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	// An earlier run in the same row groups, loaded normally: the repair must not touch it.
	if _, err := s.LoadBatch(ctx, rollupBatch("run-a", at.Add(-time.Hour), 250)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		views []string // the views whose parts the crash lost
	}{
		{"every view", []string{"offers_daily_mv", "offers_daily_sums_mv", "offers_latest_mv"}},
		{"one view", []string{"offers_daily_sums_mv"}},
		{"none", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runID := "run-" + tc.name
			b := rollupBatch(runID, at.Add(time.Duration(len(tc.views))*time.Minute), 300+len(tc.views))
			for _, v := range tc.views {
				if err := conn.Exec(ctx, "DETACH TABLE "+v); err != nil {
					t.Fatal(err)
				}
			}
			err := s.InsertOffers(ctx, runID, b.Offers)
			for _, v := range tc.views {
				if err := conn.Exec(ctx, "ATTACH TABLE "+v); err != nil {
					t.Fatal(err)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(tc.views) > 0 && storetest.RollupDiff(t, storetest.DatabaseDSN(t, s.Database())) == "" {
				t.Fatal("the simulated crash left the rollups whole")
			}
			res, err := s.CompleteBatch(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			// Groups: H100 on demand, H100 spot, A100, L4 in each daily rollup; 5 latest rows.
			want := 0
			for _, v := range tc.views {
				want += map[string]int{"offers_daily_mv": 4, "offers_daily_sums_mv": 4, "offers_latest_mv": 5}[v]
			}
			if res.OffersWritten != 0 || res.PayloadsWritten != 1 || res.Repaired != want || !res.RunWritten {
				t.Errorf("load after the crash: %+v, want no offers, 1 payload, %d repaired, the run row", res, want)
			}
			if diff := storetest.RollupDiff(t, storetest.DatabaseDSN(t, s.Database())); diff != "" {
				t.Errorf("rollups differ from offers after the repair:\n%s", diff)
			}
			// Loading it once more writes nothing, and the run row makes even the checks stop.
			if res, err := s.CompleteBatch(ctx, b); err != nil || !res.Skipped() {
				t.Errorf("third load: %+v, %v; want skipped", res, err)
			}
		})
	}
	// gpucost history reads the rollups: its counts are those of offers.
	hist, err := s.History(ctx, schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{"H100-SXM-80GB"}}, From: at.Add(-24 * time.Hour), To: at.Add(24 * time.Hour), Interval: schema.Day})
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, p := range hist {
		n += p.Observations
	}
	if n != 4*3 { // four runs (run-a and the three cases) of three H100 offers
		t.Errorf("history counts %d H100 observations, want 12", n)
	}
}

// TestLoadBatchInSharesRepairsWhatACrashLeft: a batch of more offers than one insert takes is
// written in shares of its row groups, an insert each. Some row groups stored the way a crash
// during their insert leaves them (offers written, the views' parts not), the load writes the
// rest and repairs exactly those row groups, and offers and rollups end whole, each observation
// once.
func TestLoadBatchInSharesRepairsWhatACrashLeft(t *testing.T) {
	s := storetest.Open(t)
	store.SetShareOffers(s, 50)
	ctx := context.Background()
	conn := rawConn(t, s)
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	b := rollupBatch("run-shares", at, 250)
	b.Offers = nil
	for i := range 400 {
		pt := schema.OnDemand
		if i%2 == 1 {
			pt = schema.Spot
		}
		o := offer("vastai", fmt.Sprintf("ask-%d", i), fmt.Sprintf("MODEL-%d", i%40), pt, at, fmt.Sprintf("1.%02d", i%100), 1)
		o.RunID = b.Run.RunID
		b.Offers = append(b.Offers, o)
	}
	b.Run.OffersLoaded = uint32(len(b.Offers)) // shares of about 50
	// The row groups of every eighth bucket, as a crash during their share's insert leaves them.
	var eighth schema.Share
	for bucket := 0; bucket < schema.Buckets; bucket += 8 {
		eighth.Buckets |= 1 << bucket
	}
	first := eighth.Of(b.Offers)
	groups := map[string]bool{}
	for _, o := range first {
		groups[o.GPUModel+"/"+string(o.PriceType)] = true
	}
	if len(first) == 0 || len(first) == len(b.Offers) {
		t.Fatalf("every eighth bucket holds %d of %d offers", len(first), len(b.Offers))
	}
	views := []string{"offers_daily_mv", "offers_daily_sums_mv", "offers_latest_mv"}
	for _, v := range views {
		if err := conn.Exec(ctx, "DETACH TABLE "+v); err != nil {
			t.Fatal(err)
		}
	}
	err := s.InsertOffers(ctx, b.Run.RunID, first)
	for _, v := range views {
		if err := conn.Exec(ctx, "ATTACH TABLE "+v); err != nil {
			t.Fatal(err)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.CompleteBatch(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2*len(groups) + len(first); res.OffersWritten != len(b.Offers)-len(first) || res.Repaired != want || !res.RunWritten {
		t.Errorf("load: %+v, want %d offers written and %d row groups repaired (%d per daily rollup, %d latest)", res, len(b.Offers)-len(first), want, len(groups), len(first))
	}
	if diff := storetest.RollupDiff(t, storetest.DatabaseDSN(t, s.Database())); diff != "" {
		t.Errorf("rollups differ from offers:\n%s", diff)
	}
	n := 0
	if _, err := s.Observations(ctx, schema.ObservationFilter{From: at, To: at.Add(time.Second)}, func(*schema.Offer) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != len(b.Offers) {
		t.Errorf("%d offers stored, want %d", n, len(b.Offers))
	}
}

// offerParts are a batch's offers as parts of 100 (schema.Parts), without payloads.
type offerParts []schema.Offer

func (p offerParts) EachOffers(share schema.Share, fn func([]schema.Offer) error) error {
	for start := 0; start < len(p); start += 100 {
		if err := fn(share.Of(p[start:min(start+100, len(p))])); err != nil {
			return err
		}
	}
	return nil
}

func (offerParts) EachPayloads(func([]schema.RawPayload) error) error { return nil }

// TestLoadBatchInSharesStoresNothingOfABadBatch: a batch loaded in shares that holds an offer it
// may not (of another run) is refused before any share is written, wherever the bad offer lies.
func TestLoadBatchInSharesStoresNothingOfABadBatch(t *testing.T) {
	s := storetest.Open(t)
	store.SetShareOffers(s, 50)
	ctx := context.Background()
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	// The bad offer in each row group in turn: in the first share written and in the later ones.
	for bad := range 40 {
		b := rollupBatch(fmt.Sprintf("run-bad-%d", bad), at, 250)
		b.Offers = nil
		for i := range 400 {
			o := offer("vastai", fmt.Sprintf("ask-%d", i), fmt.Sprintf("MODEL-%d", i%40), schema.OnDemand, at, "1.50", 1)
			o.RunID = b.Run.RunID
			if i == 360+bad {
				o.RunID = "another-run"
			}
			b.Offers = append(b.Offers, o)
		}
		b.Run.OffersLoaded = uint32(len(b.Offers))
		// In parts, as a spooled batch: what a batch holds in memory is checked before any load.
		b.Offers, b.Parts = nil, offerParts(b.Offers)
		if _, err := s.CompleteBatch(ctx, b); !errors.Is(err, schema.ErrRejected) {
			t.Fatalf("load with the bad offer in MODEL-%d: %v, want the batch rejected", bad, err)
		}
	}
	n := 0
	if _, err := s.Observations(ctx, schema.ObservationFilter{From: at, To: at.Add(time.Second)}, func(*schema.Offer) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d offers of the refused batches stored, want none", n)
	}
}

// TestLoadBatchCompletesWhatACutOffLoadLeft stores parts of a batch the way a load cut off
// half-way leaves them (some payloads, some offers) and loads it: only the missing rows are
// written.
func TestLoadBatchCompletesWhatACutOffLoadLeft(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)
	b := rollupBatch("run-cut", at, 199)
	// A second payload fetched after midnight, in the next month's partition.
	b.Payloads = append(b.Payloads, schema.RawPayload{RunID: "run-cut", Provider: "vastai", URL: b.Payloads[0].URL, Status: 200, FetchedAt: at.Add(2 * time.Second), Body: []byte("page 2")})
	if err := s.InsertPayloads(ctx, b.Payloads[1:]); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertOffers(ctx, "run-cut", b.Offers[:2]); err != nil {
		t.Fatal(err)
	}
	res, err := s.CompleteBatch(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if res.PayloadsWritten != 1 || res.OffersWritten != 3 || res.Repaired != 0 || !res.RunWritten {
		t.Errorf("load: %+v, want the 1 missing payload and 3 missing offers", res)
	}
	if got, err := s.Payloads(ctx, "run-cut"); err != nil || len(got) != 2 {
		t.Errorf("%d payloads stored (err %v), want 2", len(got), err)
	}
	var n int
	if _, err := s.Observations(ctx, schema.ObservationFilter{From: at, To: at.Add(time.Second)}, func(*schema.Offer) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 5 {
		t.Errorf("%d offers stored, want 5", n)
	}
	if diff := storetest.RollupDiff(t, storetest.DatabaseDSN(t, s.Database())); diff != "" {
		t.Errorf("rollups differ from offers:\n%s", diff)
	}
}

// TestLoadBatchRefusesRowsOfAnotherBatch: an offer of another run cannot be compared with what is
// stored of this one; the batch is invalid, whatever the server says.
func TestLoadBatchRefusesRowsOfAnotherBatch(t *testing.T) {
	s := storetest.Open(t)
	b := rollupBatch("run-x", time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC), 250)
	b.Offers[2].RunID = "run-y"
	_, err := s.LoadBatch(context.Background(), b)
	if !errors.Is(err, schema.ErrRejected) {
		t.Fatalf("load of a batch with another run's offer: %v, want schema.ErrRejected", err)
	}
}

// TestRollupRunsMigration upgrades a database whose rollups were kept before migration 0011
// (no runs fingerprint): the days rolled up before it keep their counts, and a batch loaded
// after it into the same row groups is checked and needs no repair.
func TestRollupRunsMigration(t *testing.T) {
	s := storetest.OpenEmpty(t)
	ctx := context.Background()
	if _, err := s.MigrateFS(ctx, migrationsBefore(t, 11, parserVersionMigration)); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	before := rollupBatch("run-before", at, 250)
	if err := s.InsertOffers(ctx, before.Run.RunID, before.Offers); err != nil {
		t.Fatal(err)
	}
	if res, err := s.MigrateFS(ctx, migrationsBefore(t, 12)); err != nil || len(res.Applied) != 1 {
		t.Fatalf("migrate to 0011: %+v, %v", res, err)
	}
	// The later migrations, which the load needs.
	if _, err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := s.CompleteBatch(ctx, rollupBatch("run-after", at.Add(time.Hour), 260))
	if err != nil {
		t.Fatal(err)
	}
	if res.OffersWritten != 5 || res.Repaired != 0 {
		t.Errorf("load after the migration: %+v, want 5 offers and nothing to repair", res)
	}
	if diff := storetest.RollupDiff(t, storetest.DatabaseDSN(t, s.Database())); diff != "" {
		t.Errorf("rollups differ from offers:\n%s", diff)
	}
}
