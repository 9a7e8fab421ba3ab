package export

import (
	"io"
	"strconv"

	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// changeColumns are the columns of price changes: the price_changes view's names
// (schema/migrations/0008_price_changes.sql); change_pct has 2 decimals, as the view rounds it.
var changeColumns = columnsOf[schema.PriceChange](map[string]int32{"change_pct": 2})

// Changes writes price changes as a terminal table or CSV. In JSON they are the items of an
// Envelope of ChangesSchema.
func Changes(w io.Writer, f Format, changes []schema.PriceChange) error {
	switch f {
	case CSV:
		return writeCSV(w, changeColumns, changes)
	case Table:
		return changesTable(w, changes)
	}
	return unsupported("price changes", f)
}

// changesTable writes the changes as a table of textcell.TerminalWidth columns: the time the
// new price was first seen, what moved (provider, GPU model and count, price type; "?" for a
// GPU the catalog does not know), the prices per GPU-hour and the change in percent. The offer
// id is left to CSV and JSON: ids run to 60 characters, and cut to the few left they would
// name nothing. Should a line still be too wide, the GPU model gives up characters, then the
// provider (scraped text passes textcell). `gpucost changes --help` is its legend.
func changesTable(w io.Writer, changes []schema.PriceChange) error {
	cols := []textcell.Column{{Head: "CHANGED (UTC)"}, {Head: "PROVIDER"}, {Head: "GPU"}, {Head: "N", Right: true}, {Head: "PRICE TYPE"},
		{Head: "OLD", Right: true, Point: true}, {Head: "NEW", Right: true, Point: true}, {Head: "CHANGE", Right: true}}
	for _, c := range changes {
		model := c.GPUModel
		if model == "" {
			model = "?"
		}
		for j, cell := range []string{c.ChangedAt.UTC().Format("2006-01-02 15:04"), c.Provider, model, strconv.Itoa(int(c.GPUCount)),
			string(c.PriceType), money.Price(c.OldPrice), money.Price(c.NewPrice), money.SignedPercent(c.ChangePct)} {
			cols[j].Add(cell, OfferCellWidth)
		}
	}
	_, err := textcell.Fit(w, cols, textcell.TerminalWidth, []textcell.Step{textcell.Shrink("GPU", 13), textcell.Shrink("PROVIDER", 8)})
	return err
}
