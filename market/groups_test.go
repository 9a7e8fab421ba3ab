package market

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// groupsMarket is a small latest market whose groups are worked out by hand in TestSummaries.
func groupsMarket() []schema.Offer {
	offer := func(provider, id, model, raw string, vram float64, n uint16, pt schema.PriceType, price string) schema.Offer {
		return schema.Offer{Provider: provider, OfferID: id, GPUModel: model, GPUNameRaw: raw, VRAMGB: vram, GPUCount: n, PriceType: pt,
			PriceUSDPerGPUHour: decimal.RequireFromString(price)}
	}
	return []schema.Offer{
		offer("vastai", "ask-1", "H100-SXM-80GB", "H100 SXM", 80, 1, schema.Spot, "1.20"),
		offer("vastai", "ask-2", "H100-SXM-80GB", "H100 SXM", 80, 8, schema.OnDemand, "1.90"),
		offer("runpod", "h100/secure", "H100-SXM-80GB", "H100 80GB HBM3", 80, 1, schema.OnDemand, "2.69"),
		offer("runpod", "h100/secure", "H100-SXM-80GB", "H100 80GB HBM3", 80, 1, schema.Term1M, "2.10"),
		offer("runpod", "h100/secure", "H100-SXM-80GB", "H100 80GB HBM3", 80, 1, schema.Term3M, "1.95"),
		offer("lambda", "1cc-16x-h100", "H100-SXM-80GB", "H100", 80, 16, schema.Reserved, "1.95"),
		offer("verda", "serverless/H100", "H100-SXM-80GB", "H100", 80, 1, schema.Serverless, "3.10"),
		offer("vastai", "ask-3", "", "GTX 1080 Ti", 11, 1, schema.Spot, "0.03"),
		offer("vastai", "ask-4", "", "GTX 1080 Ti", 11, 1, schema.OnDemand, "0.06"),
		offer("lambda", "gpu_8x_a100", "A100-SXM-80GB", "A100", 80, 8, schema.OnDemand, "1.29"),
	}
}

func TestSummaries(t *testing.T) {
	usd := func(s string) *decimal.Decimal { d := decimal.RequireFromString(s); return &d }
	price := decimal.RequireFromString
	offers := groupsMarket()
	a100 := Summary{GPUModel: "A100-SXM-80GB", VRAMGB: 80, Offers: 1, Providers: 1, MinUSDPerGPUHour: price("1.29"), MaxUSDPerGPUHour: price("1.29"),
		OnDemand: usd("1.29")}
	// Seven offers at four providers; of the commitments term_3m and reserved tie at 1.95, and
	// reserved comes first in schema.PriceTypes.
	h100 := Summary{GPUModel: "H100-SXM-80GB", VRAMGB: 80, Offers: 7, Providers: 4, MinUSDPerGPUHour: price("1.20"), MaxUSDPerGPUHour: price("3.10"),
		OnDemand: usd("1.90"), Spot: usd("1.20"), Commitment: usd("1.95"), CommitmentType: schema.Reserved, Serverless: usd("3.10")}
	gtx := Summary{GPUNameRaw: "GTX 1080 Ti", VRAMGB: 11, Offers: 2, Providers: 1, MinUSDPerGPUHour: price("0.03"), MaxUSDPerGPUHour: price("0.06"),
		OnDemand: usd("0.06"), Spot: usd("0.03")}

	lambda8 := Summary{Provider: "lambda", GPUCount: 8, Offers: 1, Providers: 1, MinUSDPerGPUHour: price("1.29"), MaxUSDPerGPUHour: price("1.29"), OnDemand: usd("1.29")}
	lambda16 := Summary{Provider: "lambda", GPUCount: 16, Offers: 1, Providers: 1, MinUSDPerGPUHour: price("1.95"), MaxUSDPerGPUHour: price("1.95"),
		Commitment: usd("1.95"), CommitmentType: schema.Reserved}
	runpod1 := Summary{Provider: "runpod", GPUCount: 1, Offers: 3, Providers: 1, MinUSDPerGPUHour: price("1.95"), MaxUSDPerGPUHour: price("2.69"),
		OnDemand: usd("2.69"), Commitment: usd("1.95"), CommitmentType: schema.Term3M}
	vast1 := Summary{Provider: "vastai", GPUCount: 1, Offers: 3, Providers: 1, MinUSDPerGPUHour: price("0.03"), MaxUSDPerGPUHour: price("1.20"),
		OnDemand: usd("0.06"), Spot: usd("0.03")}
	vast8 := Summary{Provider: "vastai", GPUCount: 8, Offers: 1, Providers: 1, MinUSDPerGPUHour: price("1.90"), MaxUSDPerGPUHour: price("1.90"), OnDemand: usd("1.90")}
	verda1 := Summary{Provider: "verda", GPUCount: 1, Offers: 1, Providers: 1, MinUSDPerGPUHour: price("3.10"), MaxUSDPerGPUHour: price("3.10"), Serverless: usd("3.10")}

	tests := []struct {
		name  string
		by    []Dimension
		order schema.OfferSort
		want  []Summary
	}{
		{"by GPU: catalog models by name, a GPU outside it after them", []Dimension{ByGPU}, "", []Summary{a100, h100, gtx}},
		{"by GPU, the most VRAM first, ties the cheapest first", []Dimension{ByGPU}, schema.SortVRAM, []Summary{h100, a100, gtx}},
		{"by GPU, cheapest first", []Dimension{ByGPU}, schema.SortPrice, []Summary{gtx, h100, a100}},
		{"by provider and count", []Dimension{ByProvider, ByCount}, "", []Summary{lambda8, lambda16, runpod1, vast1, vast8, verda1}},
		{"by count and provider", []Dimension{ByCount, ByProvider}, "", []Summary{runpod1, vast1, verda1, lambda8, vast8, lambda16}},
		// lambda ×16 and runpod ×1 tie at 1.95: by their keys.
		{"by provider and count, cheapest first", []Dimension{ByProvider, ByCount}, schema.SortPrice, []Summary{vast1, lambda8, vast8, lambda16, runpod1, verda1}},
		{"everything in one group", nil, "", []Summary{{Offers: 10, Providers: 4, MinUSDPerGPUHour: price("0.03"), MaxUSDPerGPUHour: price("3.10"),
			OnDemand: usd("0.06"), Spot: usd("0.03"), Commitment: usd("1.95"), CommitmentType: schema.Reserved, Serverless: usd("3.10")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Summaries(offers, tt.by)
			SortSummaries(got, tt.by, tt.order)
			if diff := cmp.Diff(tt.want, got, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
				t.Errorf("Summaries (-want +got):\n%s", diff)
			}
		})
	}
	if got := Summaries(nil, []Dimension{ByGPU}); got != nil {
		t.Errorf("Summaries of no offers = %v, want none", got)
	}
}
