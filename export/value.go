package export

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/textcell"
)

// valueColumns are the columns of value figures: market.Value's JSON names, the figures per
// TFLOP-hour and per TB/s-hour with market.ValueDecimals decimals.
var valueColumns = columnsOf[market.Value](map[string]int32{
	"usd_per_tflop_hour": market.ValueDecimals, "usd_per_tbps_hour": market.ValueDecimals,
	"fp32_usd_per_tflop_hour": market.ValueDecimals, "tf32_usd_per_tflop_hour": market.ValueDecimals,
	"fp16_usd_per_tflop_hour": market.ValueDecimals, "bf16_usd_per_tflop_hour": market.ValueDecimals,
	"fp8_usd_per_tflop_hour": market.ValueDecimals, "int8_usd_per_tops_hour": market.ValueDecimals,
	"fp4_usd_per_tflop_hour": market.ValueDecimals,
})

// Values writes value figures (market.Values, ranked at precision p) as a terminal table or
// CSV. CSV carries every figure, exact to market.ValueDecimals places, as JSON does (the items
// of an Envelope of ValueSchema); the table the ranking figure, the price and the bandwidth
// figure, in dollars to three significant digits.
func Values(w io.Writer, f Format, p gpus.Precision, values []market.Value) error {
	switch f {
	case CSV:
		return writeCSV(w, valueColumns, values)
	case Table:
		return valueTable(w, p, values)
	}
	return unsupported("value figures", f)
}

// valueTable writes the ranking: a figure at a precision the GPU falls back to says which.
func valueTable(w io.Writer, p gpus.Precision, values []market.Value) error {
	name := strings.ToUpper(string(p))
	unit := "$/TFLOP-H"
	if p == gpus.INT8 {
		unit = "$/TOPS-H"
	}
	cols := []textcell.Column{{Head: "GPU"}, {Head: name + " " + unit}, {Head: "$/GPU-H", Right: true, Point: true}, {Head: "$/TB/S-H"},
		{Head: "PRICE TYPE"}, {Head: "PROVIDER"}, {Head: "N", Right: true}, {Head: "REGION"}}
	fallback := false
	for _, v := range values {
		figure := money.Unit(v.USDPerTFLOPHour)
		if v.RunsAt != v.Precision {
			figure += " at " + string(v.RunsAt)
			fallback = true
		}
		for j, cell := range []string{v.GPUModel, figure, money.Price(v.PriceUSDPerGPUHour), money.Unit(v.USDPerTBpsHour), string(v.PriceType),
			v.Provider, strconv.Itoa(int(v.GPUCount)), v.Region} {
			cols[j].Add(cell, OfferCellWidth)
		}
	}
	// Within 100 columns: a region or a provider's name of more than 12 characters is cut.
	if _, err := textcell.Fit(w, cols, textcell.TerminalWidth, []textcell.Step{textcell.Shrink("REGION", 12), textcell.Shrink("PROVIDER", 12)}); err != nil {
		return err
	}
	note := fmt.Sprintf("\n%s: the cheapest $/GPU-hour over the GPU's dense %s rate (no 2:4 sparsity).\n"+
		"$/TB/S-H: the same price over its memory bandwidth in TB/s, what decode-bound inference pays for.", unit, name)
	if fallback {
		note += fmt.Sprintf("\n\"at fp16\": the GPU has no %s path; the figure is at the rate such work runs at on it.", name)
	}
	_, err := fmt.Fprintln(w, note)
	return err
}
