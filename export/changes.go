package export

import (
	"io"
	"strconv"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// changeColumns are the columns of price changes: the price_changes view's names
// (schema/migrations/0008_price_changes.sql); change_pct has 2 decimals, as the view rounds it.
var changeColumns = columnsOf[schema.PriceChange](map[string]int32{"change_pct": 2})

// Changes writes price changes as a terminal table, JSON or CSV.
func Changes(w io.Writer, f Format, changes []schema.PriceChange) error {
	switch f {
	case JSON:
		if changes == nil {
			changes = []schema.PriceChange{}
		}
		return WriteJSON(w, changes)
	case CSV:
		return writeCSV(w, changeColumns, changes)
	case Table:
		t := textcell.NewTable(w, textcell.NameWidth)
		t.Row("CHANGED AT", "PROVIDER", "GPU", "N", "PRICE TYPE", "OLD $/GPU-H", "NEW $/GPU-H", "CHANGE", "OFFER", "PREVIOUSLY SEEN")
		for _, c := range changes {
			sign := ""
			if c.ChangePct.IsPositive() {
				sign = "+"
			}
			t.Row(c.ChangedAt.UTC().Format("2006-01-02 15:04"), c.Provider, c.GPUModel, strconv.Itoa(int(c.GPUCount)),
				string(c.PriceType), c.OldPrice.StringFixed(4), c.NewPrice.StringFixed(4), sign+c.ChangePct.StringFixed(1)+"%", textcell.Clean(c.OfferID, 32),
				c.PreviousAt.UTC().Format("2006-01-02 15:04"))
		}
		return t.Flush()
	}
	return unsupported("price changes", f)
}
