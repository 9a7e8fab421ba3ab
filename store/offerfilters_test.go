package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/store/storetest"
)

// filterMarket is a market of ten offers whose answers to each filter of `gpucost offers` are
// worked out by hand in TestLatestOfferFilters. Offer o1 was seen at 1.50 an hour before its
// newest price, 2.00.
func filterMarket(at time.Time) []schema.Offer {
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

// TestLatestOfferFilters reads the hand-made market with each filter of `gpucost offers`: the
// offers come back in the order asked, and the counts say how many matched and how many of
// GPUs outside the catalog KnownGPUs left out.
func TestLatestOfferFilters(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	at := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	older := filterMarket(at.Add(-time.Hour))[0]
	older.RunID = "run-filters-before"
	older.SetPricePerGPU(decimal.RequireFromString("1.50"))
	if err := s.InsertOffers(ctx, older.RunID, []schema.Offer{older}); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertOffers(ctx, "run-filters", filterMarket(at)); err != nil {
		t.Fatal(err)
	}
	h100 := []string{"H100-NVL-94GB", "H100-PCIE-80GB", "H100-SXM-80GB"}
	price := decimal.RequireFromString
	tests := []struct {
		name            string
		f               schema.OfferFilter
		want            []string // offer ids, in order
		offers, outside int      // CountLatest
	}{
		{"all, cheapest first", schema.OfferFilter{}, []string{"o8", "o7", "o2", "o4", "o6", "o5", "o1", "o9", "o10", "o3"}, 10, 0},
		{"catalog GPUs", schema.OfferFilter{KnownGPUs: true}, []string{"o7", "o2", "o4", "o6", "o5", "o1", "o10", "o3"}, 8, 2},
		{"a family", schema.OfferFilter{GPUs: []schema.GPUSpec{{Models: h100}}}, []string{"o2", "o1", "o3"}, 3, 0},
		{"a family, two GPUs or more", schema.OfferFilter{GPUs: []schema.GPUSpec{{Models: h100, MinCount: 2}}}, []string{"o1", "o3"}, 2, 0},
		{"one GPU at most", schema.OfferFilter{GPUs: []schema.GPUSpec{{MaxCount: 1}}}, []string{"o8", "o7", "o2", "o4", "o9"}, 5, 0},
		{"four to eight GPUs", schema.OfferFilter{GPUs: []schema.GPUSpec{{MinCount: 4, MaxCount: 8}}}, []string{"o6", "o5", "o1", "o10"}, 4, 0},
		// Memory without models: the VRAM of every offer, a GPU outside the catalog's too (o9).
		{"48 to 100 GB", schema.OfferFilter{GPUs: []schema.GPUSpec{{MinVRAMGB: 48, MaxVRAMGB: 100}}}, []string{"o2", "o6", "o5", "o1", "o9", "o3"}, 6, 0},
		{"48 to 100 GB, catalog GPUs", schema.OfferFilter{GPUs: []schema.GPUSpec{{MinVRAMGB: 48, MaxVRAMGB: 100}}, KnownGPUs: true},
			[]string{"o2", "o6", "o5", "o1", "o3"}, 5, 1},
		{"either of two specs", schema.OfferFilter{GPUs: []schema.GPUSpec{{Models: []string{"H100-SXM-80GB"}}, {Models: []string{"RTX-4090-24GB"}}}},
			[]string{"o7", "o1"}, 2, 0},
		// o1 asked 1.50 before; its newest price, 2.00, is above the cap.
		{"at most 1.80", schema.OfferFilter{MaxUSDPerGPUHour: price("1.80")}, []string{"o8", "o7", "o2", "o4", "o6", "o5"}, 6, 0},
		{"at most 1.79, the cap included", schema.OfferFilter{MaxUSDPerGPUHour: price("1.79"), KnownGPUs: true}, []string{"o7", "o2", "o4", "o6", "o5"}, 5, 1},
		// us is us-texas, us-east-1 and US-EAST-04, not usa-1.
		{"a region and those inside it", schema.OfferFilter{Regions: []string{"us"}}, []string{"o4", "o6", "o5", "o1"}, 4, 0},
		{"two regions", schema.OfferFilter{Regions: []string{"us-east-1", "ewr"}}, []string{"o4", "o5", "o9"}, 3, 0},
		{"a country", schema.OfferFilter{Countries: []string{"SE"}, KnownGPUs: true}, []string{"o2"}, 1, 1},
		// An offer that does not say its vCPUs or RAM (o3, o9, o10) is left out.
		{"32 vCPUs", schema.OfferFilter{MinVCPUs: 32}, []string{"o6", "o5", "o1"}, 3, 0},
		{"64 GB of RAM", schema.OfferFilter{MinRAMGB: 64}, []string{"o2", "o4", "o6", "o5", "o1"}, 5, 0},
		{"filters combine", schema.OfferFilter{GPUs: []schema.GPUSpec{{Models: h100}}, MaxUSDPerGPUHour: price("2.50"), KnownGPUs: true},
			[]string{"o2", "o1"}, 2, 0},
		{"by GPU", schema.OfferFilter{Sort: schema.SortGPU}, []string{"o8", "o9", "o6", "o4", "o5", "o3", "o2", "o1", "o10", "o7"}, 10, 0},
		{"the most VRAM first", schema.OfferFilter{Sort: schema.SortVRAM}, []string{"o10", "o3", "o2", "o6", "o5", "o1", "o9", "o4", "o7", "o8"}, 10, 0},
		{"by provider", schema.OfferFilter{Sort: schema.SortProvider}, []string{"o6", "o4", "o5", "o10", "o3", "o8", "o7", "o2", "o1", "o9"}, 10, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, limit := range []int{0, 3} {
				f := tt.f
				f.Limit = limit
				offers, err := s.LatestOffers(ctx, f)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for _, o := range offers {
					got = append(got, o.OfferID)
				}
				want := tt.want
				if limit > 0 && len(want) > limit {
					want = want[:limit]
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("limit %d: offers (-want +got):\n%s", limit, diff)
				}
			}
			n, outside, err := s.CountLatest(ctx, tt.f)
			if err != nil || n != tt.offers || outside != tt.outside {
				t.Errorf("CountLatest = %d, %d, %v; want %d, %d", n, outside, err, tt.offers, tt.outside)
			}
		})
	}
	if _, err := s.LatestOffers(ctx, schema.OfferFilter{Sort: schema.SortGPU, After: &schema.OfferPosition{Provider: "vastai"}}); err == nil {
		t.Error("a page after an offer in GPU order: no error")
	}
}
