package export

import (
	"bytes"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
	"github.com/gpucost/gpucost/textcell/textcelltest"
)

// TestHostileText feeds every table and CSV writer of offers, history, changes and value
// figures the hostile names of package textcelltest: no line is forged, no control character or
// formula gets through, numbers stay numbers. (cmd/gpucost/hostile_test.go reads them back
// through the CLI from ClickHouse.)
func TestHostileText(t *testing.T) {
	now := time.Date(2026, 1, 31, 12, 0, 0, 0, time.UTC)
	offers := textcelltest.Offers(now, "1.50")
	unknown := offers[0]
	unknown.GPUModel, unknown.GPUNameRaw = "", textcelltest.Names[5].Text // "? " + the raw name in the table
	offers = append(offers, unknown)
	n := len(offers)

	var changes []schema.PriceChange
	var points []schema.HistoryPoint
	for _, h := range textcelltest.Names {
		changes = append(changes, schema.PriceChange{ChangedAt: now, PreviousAt: now.Add(-time.Hour), Provider: h.Text, PriceType: schema.OnDemand,
			OfferID: h.Text, GPUModel: "H100-SXM-80GB", GPUCount: 1, Tier: schema.TierSecure, Region: h.Text,
			OldPrice: decimal.RequireFromString("2"), NewPrice: decimal.RequireFromString("1.9"), ChangeUSD: decimal.RequireFromString("-0.1"),
			ChangePct: decimal.RequireFromString("-5"), RunID: h.Text})
		points = append(points, schema.HistoryPoint{Bucket: now, Provider: h.Text, GPUModel: h.Text, PriceType: schema.OnDemand,
			Min: decimal.RequireFromString("1"), Avg: decimal.RequireFromString("1"), Max: decimal.RequireFromString("1"), Median: decimal.RequireFromString("1"),
			Observations: 1, Offers: 1})
	}

	var values []market.Value
	for _, h := range textcelltest.Names {
		x := decimal.RequireFromString("0.00202224")
		values = append(values, market.Value{GPUModel: "H100-SXM-80GB", PriceType: schema.OnDemand, Provider: h.Text, OfferID: h.Text,
			Region: h.Text, GPUCount: 1, ObservedAt: now, PriceUSDPerGPUHour: decimal.RequireFromString("2"), Precision: gpus.BF16,
			RunsAt: gpus.BF16, USDPerTFLOPHour: x, BF16: &x, USDPerTBpsHour: decimal.RequireFromString("0.59701493")})
	}

	// A table line is at most the sum of its column caps and separators, and the tables that
	// fit a terminal fit it whatever their cells hold.
	t.Run("offers table", func(t *testing.T) {
		var b bytes.Buffer
		if err := Offers(&b, Table, offers); err != nil {
			t.Fatal(err)
		}
		// Fitted to 100 columns: a header, the offers, a blank line and the columns left out.
		textcelltest.CheckTable(t, b.String(), 1+n+2, textcell.TerminalWidth)
	})
	t.Run("offers table, every column", func(t *testing.T) {
		var b bytes.Buffer
		if err := OfferTable(&b, offers, View{}); err != nil {
			t.Fatal(err)
		}
		textcelltest.CheckTable(t, b.String(), 1+n, 14*(OfferCellWidth+2))
	})
	t.Run("changes table", func(t *testing.T) {
		var b bytes.Buffer
		if err := Changes(&b, Table, changes); err != nil {
			t.Fatal(err)
		}
		textcelltest.CheckTable(t, b.String(), 1+len(changes), textcell.TerminalWidth)
	})
	t.Run("history table", func(t *testing.T) {
		var b bytes.Buffer
		if err := History(&b, Table, schema.Hour, points); err != nil {
			t.Fatal(err)
		}
		textcelltest.CheckTable(t, b.String(), 1+len(points), textcell.TerminalWidth)
	})
	t.Run("offers csv", func(t *testing.T) {
		var b bytes.Buffer
		if err := Offers(&b, CSV, offers); err != nil {
			t.Fatal(err)
		}
		got := textcelltest.CheckCSV(t, b.String(), 1+n, "gpu_count", "vram_gb", "price_usd_per_gpu_hour", "price_usd_per_hour")
		// Export keeps text whole: the 10 kB name is one cell of 10 kB (offer_id, column 5).
		if len(got) > 6 && got[6][5] != textcelltest.Names[5].Text {
			t.Errorf("offer_id of the long name is %d bytes, want it whole", len(got[6][5]))
		}
	})
	t.Run("export offers csv", func(t *testing.T) {
		b := writeOffers(t, CSV, "", offers)
		textcelltest.CheckCSV(t, b.String(), 1+n, "gpu_count", "vram_gb", "price_usd_per_hour", "price_usd_per_gpu_hour")
	})
	t.Run("changes csv", func(t *testing.T) {
		var b bytes.Buffer
		if err := Changes(&b, CSV, changes); err != nil {
			t.Fatal(err)
		}
		rows := textcelltest.CheckCSV(t, b.String(), 1+len(changes), "old_price", "new_price", "change_usd", "change_pct")
		if len(rows) > 1 && (rows[1][11] != "-0.100000" || rows[1][12] != "-5.00") {
			t.Errorf("change_usd %q and change_pct %q, want the negative numbers -0.100000 and -5.00 as numbers", rows[1][11], rows[1][12])
		}
	})
	t.Run("value table", func(t *testing.T) {
		var b bytes.Buffer
		if err := Values(&b, Table, gpus.BF16, values); err != nil {
			t.Fatal(err)
		}
		// The table, a blank line and the two lines that explain the figures.
		textcelltest.CheckTable(t, b.String(), 1+len(values)+3, 8*(OfferCellWidth+2))
	})
	t.Run("value csv", func(t *testing.T) {
		var b bytes.Buffer
		if err := Values(&b, CSV, gpus.BF16, values); err != nil {
			t.Fatal(err)
		}
		rows := textcelltest.CheckCSV(t, b.String(), 1+len(values), "gpu_count", "price_usd_per_gpu_hour", "usd_per_tflop_hour", "bf16_usd_per_tflop_hour", "fp4_usd_per_tflop_hour", "usd_per_tbps_hour")
		if len(rows) > 1 && (rows[1][10] != "0.00202224" || rows[1][14] != "0.00202224" || rows[1][17] != "" || rows[1][18] != "0.59701493") {
			t.Errorf("figures %v: want BF16 and the ranking figure 0.00202224, no FP4 figure, 0.59701493 per TB/s-hour", rows[1])
		}
	})
	t.Run("history and export history csv", func(t *testing.T) {
		var b bytes.Buffer
		if err := History(&b, CSV, schema.Day, points); err != nil {
			t.Fatal(err)
		}
		textcelltest.CheckCSV(t, b.String(), 1+len(points), "min_usd_per_gpu_hour", "observations")
		var file bytes.Buffer
		if err := HistoryFile(&file, CSV, "", points); err != nil {
			t.Fatal(err)
		}
		if file.String() != b.String() {
			t.Error("export history's CSV is not gpucost history's")
		}
	})
}
