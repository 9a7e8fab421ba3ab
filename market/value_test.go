package market

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// valueMarket is a market whose value figures are worked out by hand in TestValues, cheapest
// first as the store's LatestOffers returns it.
func valueMarket() []schema.Offer {
	at := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	offer := func(provider, id, model string, pt schema.PriceType, price string) schema.Offer {
		return schema.Offer{ObservedAt: at, Provider: provider, OfferID: id, Region: "us-east", GPUModel: model, GPUCount: 1,
			PriceType: pt, PriceUSDPerGPUHour: decimal.RequireFromString(price)}
	}
	return []schema.Offer{
		offer("vastai", "ask-9", "", schema.OnDemand, "0.01"),          // not in the catalog: no value
		offer("vastai", "ask-8", "NOT-A-GPU", schema.OnDemand, "0.02"), // neither
		offer("vastai", "ask-1", "V100-SXM2-32GB", schema.OnDemand, "0.30"),
		offer("vastai", "ask-2", "RTX-4090-24GB", schema.OnDemand, "0.35"),
		offer("runpod", "l40s/secure", "L40S-48GB", schema.OnDemand, "0.90"),
		offer("runpod", "h100/community", "H100-SXM-80GB", schema.Spot, "1.50"),
		offer("aws", "p5/1y", "H100-SXM-80GB", schema.Term1Y, "1.60"),
		offer("runpod", "h100/secure", "H100-SXM-80GB", schema.Term3M, "1.80"),
		offer("runpod", "h100/secure", "H100-SXM-80GB", schema.OnDemand, "2.00"),
		offer("lambda", "gpu_1x_h100_sxm5", "H100-SXM-80GB", schema.OnDemand, "2.49"),
		offer("verda", "serverless/h100", "H100-SXM-80GB", schema.Serverless, "3.10"),
		offer("lambda", "gpu_1x_b200", "B200-SXM-180GB", schema.OnDemand, "4.50"),
	}
}

// TestValues checks the ranking and the figures against hand computations: price per GPU-hour
// ÷ the catalog's dense rate (H100 BF16 989, FP8 1979; B200 2250, 4500, 9000; RTX 4090 165.2,
// 330; L40S 362, 733; V100 FP16 125 and no BF16, FP8 or FP4), to 8 decimals, half up.
func TestValues(t *testing.T) {
	models := PerGPU(valueMarket())
	type row struct {
		model  string
		pt     schema.PriceType
		runsAt gpus.Precision
		usd    string
	}
	tests := []struct {
		name string
		q    ValueQuery
		want []row
	}{
		{"on-demand BF16: the V100 has none and is ranked at FP16", ValueQuery{Basis(schema.OnDemand), gpus.BF16}, []row{
			{"B200-SXM-180GB", schema.OnDemand, gpus.BF16, "0.002"},     // 4.50 / 2250
			{"H100-SXM-80GB", schema.OnDemand, gpus.BF16, "0.00202224"}, // 2.00 / 989, not lambda's 2.49
			{"RTX-4090-24GB", schema.OnDemand, gpus.BF16, "0.00211864"}, // 0.35 / 165.2
			{"V100-SXM2-32GB", schema.OnDemand, gpus.FP16, "0.0024"},    // 0.30 / 125
			{"L40S-48GB", schema.OnDemand, gpus.BF16, "0.00248619"},     // 0.90 / 362
		}},
		{"on-demand FP8", ValueQuery{Basis(schema.OnDemand), gpus.FP8}, []row{
			{"B200-SXM-180GB", schema.OnDemand, gpus.FP8, "0.001"},     // 4.50 / 4500
			{"H100-SXM-80GB", schema.OnDemand, gpus.FP8, "0.00101061"}, // 2.00 / 1979
			{"RTX-4090-24GB", schema.OnDemand, gpus.FP8, "0.00106061"}, // 0.35 / 330
			{"L40S-48GB", schema.OnDemand, gpus.FP8, "0.00122783"},     // 0.90 / 733
			{"V100-SXM2-32GB", schema.OnDemand, gpus.FP16, "0.0024"},   // weight-only FP8 runs at FP16
		}},
		{"on-demand FP4: only Blackwell has it", ValueQuery{Basis(schema.OnDemand), gpus.FP4}, []row{
			{"B200-SXM-180GB", schema.OnDemand, gpus.FP4, "0.0005"}, // 4.50 / 9000
			{"H100-SXM-80GB", schema.OnDemand, gpus.FP16, "0.00202224"},
			{"RTX-4090-24GB", schema.OnDemand, gpus.FP16, "0.00211864"},
			{"V100-SXM2-32GB", schema.OnDemand, gpus.FP16, "0.0024"},
			{"L40S-48GB", schema.OnDemand, gpus.FP16, "0.00248619"},
		}},
		{"on-demand TF32: the V100 runs FP32 work at FP32", ValueQuery{Basis(schema.OnDemand), gpus.TF32}, []row{
			{"H100-SXM-80GB", schema.OnDemand, gpus.TF32, "0.0040404"},   // 2.00 / 495
			{"B200-SXM-180GB", schema.OnDemand, gpus.TF32, "0.00409091"}, // 4.50 / 1100
			{"RTX-4090-24GB", schema.OnDemand, gpus.TF32, "0.00423729"},  // 0.35 / 82.6
			{"L40S-48GB", schema.OnDemand, gpus.TF32, "0.00491803"},      // 0.90 / 183
			{"V100-SXM2-32GB", schema.OnDemand, gpus.FP32, "0.01910828"}, // 0.30 / 15.7
		}},
		{"the cheapest commitment, whatever its term", ValueQuery{Commitment, gpus.BF16}, []row{
			{"H100-SXM-80GB", schema.Term1Y, gpus.BF16, "0.0016178"}, // 1.60 / 989, below the 3-month 1.80
		}},
		{"one term", ValueQuery{Basis(schema.Term3M), gpus.BF16}, []row{
			{"H100-SXM-80GB", schema.Term3M, gpus.BF16, "0.00182002"}, // 1.80 / 989
		}},
		{"spot", ValueQuery{Basis(schema.Spot), gpus.BF16}, []row{
			{"H100-SXM-80GB", schema.Spot, gpus.BF16, "0.00151668"}, // 1.50 / 989
		}},
		{"serverless", ValueQuery{Basis(schema.Serverless), gpus.BF16}, []row{
			{"H100-SXM-80GB", schema.Serverless, gpus.BF16, "0.00313448"}, // 3.10 / 989
		}},
		{"a price type nobody sells at", ValueQuery{Basis(schema.Reserved), gpus.BF16}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []row
			for _, v := range Values(models, tt.q) {
				if v.Precision != tt.q.Precision {
					t.Errorf("%s: precision %s, want the one asked for, %s", v.GPUModel, v.Precision, tt.q.Precision)
				}
				got = append(got, row{v.GPUModel, v.PriceType, v.RunsAt, v.USDPerTFLOPHour.String()})
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(row{})); diff != "" {
				t.Errorf("values (-hand +Values):\n%s", diff)
			}
		})
	}
}

// TestValueFigures checks every figure of one value: the offer it came from, the price per
// TFLOP-hour at each precision (none where the H100 has no path: FP4) and per TB/s-hour.
func TestValueFigures(t *testing.T) {
	values := Values(PerGPU(valueMarket()), ValueQuery{Basis(schema.OnDemand), gpus.BF16})
	var h100 Value
	for _, v := range values {
		if v.GPUModel == "H100-SXM-80GB" {
			h100 = v
		}
	}
	d := func(s string) *decimal.Decimal { x := decimal.RequireFromString(s); return &x }
	want := Value{GPUModel: "H100-SXM-80GB", PriceType: schema.OnDemand, Provider: "runpod", OfferID: "h100/secure", Region: "us-east",
		GPUCount: 1, ObservedAt: time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC), PriceUSDPerGPUHour: decimal.RequireFromString("2.00"),
		Precision: gpus.BF16, RunsAt: gpus.BF16, USDPerTFLOPHour: *d("0.00202224"),
		FP32: d("0.02985075"), // 2.00 / 67
		TF32: d("0.0040404"),  // 2.00 / 495
		FP16: d("0.00202224"), BF16: d("0.00202224"),
		FP8: d("0.00101061"), INT8: d("0.00101061"), // 2.00 / 1979 TOPS
		FP4:            nil,
		USDPerTBpsHour: *d("0.59701493"), // 2.00 / 3.35 TB/s
	}
	if diff := cmp.Diff(want, h100, cmp.Comparer(func(a, b decimal.Decimal) bool { return a.Equal(b) })); diff != "" {
		t.Errorf("the H100's value (-hand +Values):\n%s", diff)
	}
}

func TestBases(t *testing.T) {
	want := []schema.PriceType{schema.Reserved, schema.Term1W, schema.Term1M, schema.Term3M, schema.Term6M, schema.Term1Y, schema.Term3Y}
	if diff := cmp.Diff(want, Commitment.PriceTypes()); diff != "" {
		t.Errorf("a commitment's price types (-want +got):\n%s", diff)
	}
	if got := Basis(schema.Spot).PriceTypes(); len(got) != 1 || got[0] != schema.Spot {
		t.Errorf("spot's price types: %v", got)
	}
	h100 := PerGPU(valueMarket())[1]
	if h100.GPUModel != "H100-SXM-80GB" || h100.Commitment().PriceType != schema.Term1Y || h100.At(Commitment) != h100.Commitment() || h100.At(Basis(schema.Serverless)).Provider != "verda" {
		t.Errorf("%s: commitment %v, serverless %v", h100.GPUModel, h100.Commitment(), h100.At(Basis(schema.Serverless)))
	}
	if b200 := PerGPU(valueMarket())[0]; b200.Commitment() != nil {
		t.Errorf("%s: commitment %v, want none", b200.GPUModel, b200.Commitment())
	}
}
