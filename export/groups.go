package export

import (
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// summaryColumns are the CSV columns of the market's groups: market.Summary's JSON names.
var summaryColumns = columnsOf[market.Summary](nil)

// Summaries writes the summaries of the market's groups (`gpucost offers --group-by`, grouped
// by by) as a terminal table fitted to v or CSV. CSV carries every field of market.Summary,
// exact, as JSON does (the items of an Envelope of OfferGroupsSchema), those of the dimensions not grouped by zero; the table the keys of
// the groups by, then how many offers and providers, the range of $/GPU-hour and the cheapest
// on-demand, spot, commitment and serverless prices.
func Summaries(w io.Writer, f Format, by []market.Dimension, groups []market.Summary, v View) error {
	switch f {
	case CSV:
		return writeCSV(w, summaryColumns, groups)
	case Table:
		return summaryTable(w, by, groups, v)
	}
	return unsupported("the market's groups", f)
}

// summaryTable writes the groups as a terminal table fitted to v.Width, then what v says was left
// out.
func summaryTable(w io.Writer, by []market.Dimension, groups []market.Summary, v View) error {
	if len(groups) == 0 {
		return noneMatch(w, "offers", v)
	}
	var cols []textcell.Column
	for _, d := range by {
		switch d {
		case market.ByGPU:
			cols = append(cols, textcell.Column{Head: "GPU"}, textcell.Column{Head: "VRAM", Right: true})
		case market.ByProvider:
			cols = append(cols, textcell.Column{Head: "PROVIDER"})
		case market.ByCount:
			cols = append(cols, textcell.Column{Head: "N", Right: true})
		}
	}
	if !slices.Contains(by, market.ByProvider) {
		cols = append(cols, textcell.Column{Head: "PROVIDERS", Right: true})
	}
	cols = append(cols, textcell.Column{Head: "OFFERS", Right: true}, textcell.Column{Head: "$/GPU-H", Right: true}, textcell.Column{Head: "ON-DEMAND", Right: true, Point: true},
		textcell.Column{Head: "SPOT", Right: true, Point: true}, textcell.Column{Head: "COMMITMENT", Right: true}, textcell.Column{Head: "SERVERLESS", Right: true, Point: true})
	col := func(head string) *textcell.Column {
		return &cols[slices.IndexFunc(cols, func(c textcell.Column) bool { return c.Head == head })]
	}
	outside := false
	for _, g := range groups {
		for _, d := range by {
			switch d {
			case market.ByGPU:
				outside = outside || g.GPUModel == ""
				col("GPU").Add(gpuCell(g.GPUModel, g.GPUNameRaw), OfferCellWidth)
				col("VRAM").Add(gb(g.VRAMGB), OfferCellWidth)
			case market.ByProvider:
				col("PROVIDER").Add(g.Provider, OfferCellWidth)
			case market.ByCount:
				col("N").Add(strconv.Itoa(int(g.GPUCount)), OfferCellWidth)
			}
		}
		if !slices.Contains(by, market.ByProvider) {
			col("PROVIDERS").Add(strconv.Itoa(g.Providers), OfferCellWidth)
		}
		col("OFFERS").Add(money.Thousands(strconv.Itoa(g.Offers)), OfferCellWidth)
		prices := money.Price(g.MinUSDPerGPUHour)
		if !g.MaxUSDPerGPUHour.Equal(g.MinUSDPerGPUHour) {
			prices += "–" + money.Price(g.MaxUSDPerGPUHour)
		}
		col("$/GPU-H").Add(prices, OfferCellWidth)
		col("ON-DEMAND").Add(optional(g.OnDemand, money.Price), OfferCellWidth)
		col("SPOT").Add(optional(g.Spot, money.Price), OfferCellWidth)
		commitment := optional(g.Commitment, money.Price)
		if g.Commitment != nil {
			commitment += " " + termCell(g.CommitmentType)
		}
		col("COMMITMENT").Add(commitment, OfferCellWidth)
		col("SERVERLESS").Add(optional(g.Serverless, money.Price), OfferCellWidth)
	}
	vram := textcell.Drop("VRAM")
	if outside {
		vram = textcell.Step{} // none: VRAM goes with the last
	}
	dropped, err := textcell.Fit(w, cols, v.Width, v.kept([]textcell.Step{textcell.Shrink("PROVIDER", 12), textcell.Shrink("GPU", 24), textcell.Drop("SERVERLESS"), vram,
		textcell.Drop("PROVIDERS"), textcell.Drop("OFFERS"), textcell.Shrink("GPU", 16), textcell.Drop("VRAM"), textcell.Shrink("PROVIDER", 10)}))
	if err != nil {
		return err
	}
	return footer(w, "groups", len(groups), dropped, v)
}

// termCell writes the term of a commitment briefly: 1w, 1m, 3m, 6m, 1y, 3y; res for a reserved
// price, whose term is not stated.
func termCell(pt schema.PriceType) string {
	if pt == schema.Reserved {
		return "res"
	}
	return strings.TrimPrefix(string(pt), "term_")
}
