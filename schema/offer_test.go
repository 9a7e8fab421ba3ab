package schema_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// TestPricesAreRoundedOnceFromTheExactPrice: each price is the exact quoted amount, or its exact
// quotient or product by the GPU count, rounded once; never derived from a rounded price.
func TestPricesAreRoundedOnceFromTheExactPrice(t *testing.T) {
	tests := []struct {
		name           string
		count          uint16
		offer, perGPU  string // what the source quotes; one of them
		wantOffer      string
		wantPerGPU     string
		wantPerGPUFrom string // the per-GPU price derived from the rounded offer price, which is wrong
	}{
		{"a whole offer of 8 GPUs", 8, "35.159555555555556", "", "35.159556", "4.394944", "4.394945"},
		{"half a millionth rounds up", 2, "0.000003", "", "0.000003", "0.000002", ""},
		{"a price per GPU", 8, "", "2.1234565", "16.987652", "2.123457", ""},
		{"one GPU", 1, "0.06296296296296296", "", "0.062963", "0.062963", "0.062963"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := schema.Offer{GPUCount: tt.count}
			if tt.offer != "" {
				o.SetPrice(decimal.RequireFromString(tt.offer))
			} else {
				o.SetPricePerGPU(decimal.RequireFromString(tt.perGPU))
			}
			if o.PriceUSDPerHour.String() != tt.wantOffer || o.PriceUSDPerGPUHour.String() != tt.wantPerGPU {
				t.Errorf("prices %s, %s per GPU; want %s, %s", o.PriceUSDPerHour, o.PriceUSDPerGPUHour, tt.wantOffer, tt.wantPerGPU)
			}
			if tt.wantPerGPUFrom != "" {
				if got := schema.PerGPU(o.PriceUSDPerHour, tt.count).String(); got != tt.wantPerGPUFrom {
					t.Errorf("per GPU from the rounded offer price: %s, want %s (the case this guards against)", got, tt.wantPerGPUFrom)
				}
			}
		})
	}
}

func TestCommitments(t *testing.T) {
	for _, pt := range schema.PriceTypes {
		months, term := pt.TermMonths()
		switch {
		case pt == schema.OnDemand || pt == schema.Spot || pt == schema.Serverless:
			if pt.Committed() || term {
				t.Errorf("%s: committed %v, term %v", pt, pt.Committed(), term)
			}
		case pt == schema.Reserved:
			if !pt.Committed() || term {
				t.Errorf("reserved: committed %v, a term of %v months", pt.Committed(), months)
			}
		default:
			if !pt.Committed() || !term || months <= 0 {
				t.Errorf("%s: committed %v, term %v of %v months", pt, pt.Committed(), term, months)
			}
		}
	}
	if m, _ := schema.Term3M.TermMonths(); m != 3 {
		t.Errorf("term_3m is %v months", m)
	}
	if w, _ := schema.Term1W.TermMonths(); w >= 1 || w*52 != 12 {
		t.Errorf("a week is %v months", w)
	}
	// How the terms read beside a price ("$2.79 · 3 months").
	for pt, want := range map[schema.PriceType]string{schema.Term1W: "1 week", schema.Term1M: "1 month", schema.Term3M: "3 months",
		schema.Term6M: "6 months", schema.Term1Y: "1 year", schema.Term3Y: "3 years", schema.Reserved: "term not stated", schema.OnDemand: "", schema.Serverless: ""} {
		if got := pt.Term(); got != want {
			t.Errorf("%s: term %q, want %q", pt, got, want)
		}
	}
	for months, want := range map[float64]string{2 * schema.MonthsPerWeek: "2 weeks", 0.5: "0.5 months", 18: "18 months", 24: "2 years"} {
		if got := schema.TermText(months); got != want {
			t.Errorf("TermText(%v) = %q, want %q", months, got, want)
		}
	}
}
