package market

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

func TestPerGPU(t *testing.T) {
	at := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	offer := func(provider, id, model string, pt schema.PriceType, price string, ago time.Duration) schema.Offer {
		return schema.Offer{ObservedAt: at.Add(-ago), Provider: provider, OfferID: id, GPUModel: model, VRAMGB: 79.6, GPUCount: 1,
			PriceType: pt, PriceUSDPerGPUHour: decimal.RequireFromString(price)}
	}
	// Cheapest first, as the store's LatestOffers returns them.
	offers := []schema.Offer{
		offer("vastai", "ask-1", "H100-SXM-80GB", schema.Spot, "1.20", time.Hour),
		offer("runpod", "h100/community", "H100-SXM-80GB", schema.Spot, "1.20", 0),
		offer("lambda", "tpu", "", schema.OnDemand, "1.50", 0), // not in the catalog: left out
		offer("vastai", "ask-2", "H100-SXM-80GB", schema.OnDemand, "1.80", 2*time.Hour),
		offer("aws", "p5", "H100-SXM-80GB", schema.Term1Y, "1.80", 3*time.Hour),
		offer("lambda", "gpu_1x_a100", "A100-SXM-80GB", schema.OnDemand, "1.29", 0),
		offer("lambda", "gpu_8x_h100", "H100-SXM-80GB", schema.OnDemand, "2.49", 30*time.Minute),
		offer("runpod", "h100/secure", "H100-SXM-80GB", schema.OnDemand, "2.69", 0),
		offer("unlisted", "x", "NOT-A-GPU", schema.OnDemand, "9", 0), // not in the catalog: its own VRAM
	}
	got := PerGPU(offers)
	want := []GPU{
		{GPUModel: "A100-SXM-80GB", VRAMGB: 80, Cheapest: []schema.Offer{offers[5]}, Offers: 1, Providers: 1, SeenAt: at},
		{GPUModel: "H100-SXM-80GB", VRAMGB: 80, Cheapest: []schema.Offer{offers[0], offers[3], offers[4]}, Offers: 6, Providers: 4, SeenAt: at},
		{GPUModel: "NOT-A-GPU", VRAMGB: 79.6, Cheapest: []schema.Offer{offers[8]}, Offers: 1, Providers: 1, SeenAt: at},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("PerGPU (-want +got):\n%s", diff)
	}
	h100 := got[1]
	if h100.OnDemand().OfferID != "ask-2" || h100.Spot().OfferID != "ask-1" || h100.Of(schema.Term1Y).Provider != "aws" || h100.Of(schema.Reserved) != nil {
		t.Errorf("H100: on-demand %v, spot %v, term_1y %v, reserved %v", h100.OnDemand(), h100.Spot(), h100.Of(schema.Term1Y), h100.Of(schema.Reserved))
	}
	if got[0].Spot() != nil {
		t.Errorf("A100 spot = %v, want none", got[0].Spot())
	}
	if PerGPU(nil) != nil {
		t.Error("PerGPU(nil) is not empty")
	}
}
