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

// TestLatestOfferFilters reads the hand-made market (storetest.FilterMarket) with each filter
// of `gpucost offers`: the offers come back in the order asked, and the counts say how many
// matched and how many of GPUs outside the catalog KnownGPUs left out. Offer o1 was seen at
// 1.50 an hour before its newest price, 2.00: filters read the newest.
func TestLatestOfferFilters(t *testing.T) {
	s := storetest.Open(t)
	ctx := context.Background()
	at := time.Now().UTC().Truncate(time.Second).Add(-time.Hour)
	older := storetest.FilterMarket(at.Add(-time.Hour))[0]
	older.RunID = "run-filters-before"
	older.SetPricePerGPU(decimal.RequireFromString("1.50"))
	if err := s.InsertOffers(ctx, older.RunID, []schema.Offer{older}); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertOffers(ctx, "run-filters", storetest.FilterMarket(at)); err != nil {
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
		{"by GPU, those outside the catalog last", schema.OfferFilter{Sort: schema.SortGPU}, []string{"o6", "o4", "o5", "o3", "o2", "o1", "o10", "o7", "o8", "o9"}, 10, 0},
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
