package export

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
)

// TestValuesTable checks the ranking a person reads: figures in dollars to three significant
// digits, the precision a GPU falls back to named, and a note that explains them.
func TestValuesTable(t *testing.T) {
	at := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	offer := func(provider, model, price string) schema.Offer {
		return schema.Offer{ObservedAt: at, Provider: provider, OfferID: "x", Region: "us-east", GPUModel: model, GPUCount: 8,
			PriceType: schema.OnDemand, PriceUSDPerGPUHour: decimal.RequireFromString(price)}
	}
	gpuMarket := market.PerGPU([]schema.Offer{offer("vastai", "V100-SXM2-32GB", "0.30"), offer("runpod", "H100-SXM-80GB", "2.00")})
	for _, tc := range []struct {
		p     gpus.Precision
		lines []string
		note  string
	}{
		// 2.00 / 989 = 0.002022; 2.00 / 3.35 TB/s = 0.597. The V100 has no BF16: 0.30 / 125 at FP16;
		// 0.30 / 0.9 TB/s.
		{gpus.BF16, []string{
			"GPU BF16 $/TFLOP-H $/GPU-H $/TB/S-H PRICE TYPE PROVIDER N REGION",
			"H100-SXM-80GB $0.00202 $2.00 $0.597 on_demand runpod 8 us-east",
			"V100-SXM2-32GB $0.0024 at fp16 $0.30 $0.333 on_demand vastai 8 us-east",
		}, `"at fp16": the GPU has no BF16 path`},
		// 2.00 / 1979 TOPS; the V100 has no INT8 path either.
		{gpus.INT8, []string{
			"GPU INT8 $/TOPS-H $/GPU-H $/TB/S-H PRICE TYPE PROVIDER N REGION",
			"H100-SXM-80GB $0.00101 $2.00 $0.597 on_demand runpod 8 us-east",
			"V100-SXM2-32GB $0.0024 at fp16 $0.30 $0.333 on_demand vastai 8 us-east",
		}, "$/TOPS-H: the cheapest $/GPU-hour over the GPU's dense INT8 rate (no 2:4 sparsity)"},
		// 0.30 / 15.7 TFLOPS FP32 puts the V100 last.
		{gpus.FP32, []string{
			"GPU FP32 $/TFLOP-H $/GPU-H $/TB/S-H PRICE TYPE PROVIDER N REGION",
			"V100-SXM2-32GB $0.0191 $0.30 $0.333 on_demand vastai 8 us-east",
			"H100-SXM-80GB $0.0299 $2.00 $0.597 on_demand runpod 8 us-east",
		}, "$/TFLOP-H: the cheapest $/GPU-hour over the GPU's dense FP32 rate"},
	} {
		t.Run(string(tc.p), func(t *testing.T) {
			var b bytes.Buffer
			if err := Values(&b, Table, tc.p, market.Values(gpuMarket, market.ValueQuery{Basis: market.Basis(schema.OnDemand), Precision: tc.p})); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(b.String(), "\n")
			for i, want := range tc.lines {
				if got := strings.Join(strings.Fields(lines[i]), " "); got != want {
					t.Errorf("line %d = %q, want %q", i, got, want)
				}
			}
			if note := strings.Join(strings.Fields(strings.Join(lines[len(tc.lines):], " ")), " "); !strings.Contains(note, tc.note) {
				t.Errorf("the note %q does not say %q", note, tc.note)
			}
			for _, line := range lines {
				if n := len([]rune(line)); n > 100 {
					t.Errorf("a line is %d columns wide, more than a 100-column terminal: %q", n, line)
				}
			}
			if tc.p == gpus.FP32 && strings.Contains(b.String(), "at fp") {
				t.Errorf("a note on fallbacks where none was needed:\n%s", b.String())
			}
		})
	}
	if err := Values(&bytes.Buffer{}, Markdown, gpus.BF16, nil); err == nil {
		t.Error("a Markdown table of value figures was written")
	}
}
