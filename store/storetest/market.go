package storetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store"
)

// MarketDSN returns the DSN of a new database holding a market to plan on: the optimizer's test
// offers (optimizer/testdata/offers.json), observed an hour ago, and one ok scrape run per
// provider. The database is dropped when tb ends.
func MarketDSN(tb testing.TB) string {
	tb.Helper()
	dsn := DSN(tb)
	ctx := context.Background()
	s, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Migrate(ctx); err != nil {
		tb.Fatal(err)
	}
	_, here, _, _ := runtime.Caller(0)
	data, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "optimizer", "testdata", "offers.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var offers []schema.Offer
	if err := json.Unmarshal(data, &offers); err != nil {
		tb.Fatal(err)
	}
	const runID = "run-report-test"
	now := time.Now().UTC().Truncate(time.Second)
	byProvider := map[string][]schema.Offer{}
	for _, o := range offers {
		o.ObservedAt, o.RunID = now.Add(-time.Hour), runID
		byProvider[o.Provider] = append(byProvider[o.Provider], o)
	}
	for p, list := range byProvider {
		if err := s.InsertOffers(ctx, runID, list); err != nil {
			tb.Fatal(err)
		}
		if err := s.RecordRun(ctx, schema.ScrapeRun{RunID: runID, Provider: p, StartedAt: now.Add(-61 * time.Minute),
			FinishedAt: now.Add(-time.Hour), Status: schema.RunOK, OffersParsed: uint32(len(list)), OffersLoaded: uint32(len(list))}); err != nil {
			tb.Fatal(err)
		}
	}
	return dsn
}
