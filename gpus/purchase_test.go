package gpus_test

import (
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
)

// TestGuidesPurchasePrices: the buying guides' purchase table (B200 $45–50K at 1,000 W, H200
// $30–40K at 700 W, H100 ~$25K at 700 W, A100 80GB ~$15K used at 300 W, L40S ~$8K at 350 W,
// RTX 4090 ~$1,600 at 450 W) is in the catalog, each price on the model whose TDP the guide
// gives.
func TestGuidesPurchasePrices(t *testing.T) {
	for _, tt := range []struct {
		gpu       string
		low, high int64
		condition gpus.Condition
		watts     int
	}{
		{"B200-SXM-180GB", 45000, 50000, gpus.New, 1000},
		{"H200-SXM-141GB", 30000, 40000, gpus.New, 700},
		{"H100-SXM-80GB", 25000, 25000, gpus.New, 700},
		{"A100-PCIE-80GB", 15000, 15000, gpus.Used, 300},
		{"L40S-48GB", 8000, 8000, gpus.New, 350},
		{"RTX-4090-24GB", 1600, 1600, gpus.New, 450},
	} {
		p, ok := gpus.PurchaseOf(tt.gpu)
		if !ok {
			t.Errorf("%s: no purchase price", tt.gpu)
			continue
		}
		if !p.LowUSD.Equal(decimal.NewFromInt(tt.low)) || !p.HighUSD.Equal(decimal.NewFromInt(tt.high)) || p.Condition != tt.condition {
			t.Errorf("%s: $%s–%s %s, the guides say $%d–%d %s", tt.gpu, p.LowUSD, p.HighUSD, p.Condition, tt.low, tt.high, tt.condition)
		}
		if m := model(t, tt.gpu); m.TDPWatts != tt.watts {
			t.Errorf("%s: %d W in the catalog, the guides price a card of %d W", tt.gpu, m.TDPWatts, tt.watts)
		}
		if p.Seen != "2026" || p.Grade == gpus.Recalled {
			t.Errorf("%s: seen %q, graded %s; want the guides' 2026 table, a source", tt.gpu, p.Seen, p.Grade)
		}
	}
}

func TestPurchaseRangePoints(t *testing.T) {
	b200, _ := gpus.PurchaseOf("b200-sxm-180gb") // any case, like Lookup
	for point, want := range map[gpus.RangePoint]string{gpus.RangeLow: "45000", gpus.RangeMid: "47500", gpus.RangeHigh: "50000"} {
		got, err := b200.At(point)
		if err != nil || !got.Equal(decimal.RequireFromString(want)) {
			t.Errorf("B200 at %s: $%s (%v), want $%s", point, got, err, want)
		}
	}
	if _, err := b200.At("median"); err == nil {
		t.Error("a point that is not low, mid or high is accepted")
	}
	if _, ok := gpus.PurchaseOf("A16-16GB"); ok {
		t.Error("the A16, which no source prices, has a purchase price")
	}
	if _, ok := gpus.PurchaseOf("H100-SXM"); ok {
		t.Error("a name that is not canonical has a purchase price")
	}
}
