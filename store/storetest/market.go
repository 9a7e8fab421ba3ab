package storetest

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/shopspring/decimal"

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

// FilterMarket is a market of ten offers observed at at, o1 to o10, whose answers to each filter
// of `gpucost offers` the tests work out by hand (store's TestLatestOfferFilters, the CLI's
// TestOffersFilters): four providers' H100, A100, RTX 4090 and MI300X offers of 1 to 8 GPUs in
// US and Swedish regions and none, on-demand and spot, with and without their host's vCPUs and
// RAM, and two GPUs outside the catalog (o8, o9).
func FilterMarket(at time.Time) []schema.Offer {
	f := func(x float64) *float64 { return &x }
	offer := func(id, provider, model, raw string, n uint16, vram float64, pt schema.PriceType, price, region, country string, vcpus, ram *float64) schema.Offer {
		o := schema.Offer{ObservedAt: at, RunID: "run-filters", Provider: provider, OfferID: id, Tier: schema.TierSecure, Region: region, Country: country,
			GPUModel: model, GPUNameRaw: raw, GPUCount: n, VRAMGB: vram, VCPUs: vcpus, RAMGB: ram, PriceType: pt,
			IntraNode: schema.IntraUnknown, InterNode: schema.InterUnknown, Stock: schema.StockUnknown}
		o.SetPricePerGPU(decimal.RequireFromString(price))
		return o
	}
	return []schema.Offer{
		offer("o1", "vastai", "H100-SXM-80GB", "H100 SXM", 8, 80, schema.OnDemand, "2.00", "us-texas", "US", f(128), f(1024)),
		offer("o2", "vastai", "H100-PCIE-80GB", "H100 PCIE", 1, 80, schema.Spot, "1.10", "se-sweden", "SE", f(16), f(64)),
		offer("o3", "runpod", "H100-NVL-94GB", "H100 NVL", 2, 94, schema.OnDemand, "2.60", "", "", nil, nil),
		offer("o4", "lambda", "A100-SXM-40GB", "A100 SXM4 40GB", 1, 40, schema.OnDemand, "1.29", "us-east-1", "US", f(30), f(200)),
		offer("o5", "lambda", "A100-SXM-80GB", "A100 SXM4 80GB", 8, 80, schema.OnDemand, "1.79", "us-east-1", "US", f(240), f(1800)),
		offer("o6", "coreweave", "A100-PCIE-80GB", "A100 PCIe", 4, 80, schema.Spot, "1.50", "US-EAST-04", "US", f(48), f(512)),
		offer("o7", "vastai", "RTX-4090-24GB", "RTX 4090", 1, 24, schema.Spot, "0.30", "usa-1", "US", f(8), f(32)),
		offer("o8", "vastai", "", "GTX 1080 Ti", 1, 11, schema.Spot, "0.03", "se-sweden", "SE", f(4), f(16)),
		offer("o9", "vultr", "", "NVIDIA_H100", 1, 80, schema.OnDemand, "2.30", "ewr", "", nil, nil),
		offer("o10", "runpod", "MI300X-192GB", "MI300X", 8, 192, schema.OnDemand, "2.49", "", "", nil, nil),
	}
}
