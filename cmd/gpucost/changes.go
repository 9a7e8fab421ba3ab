package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/textcell"
)

const changesHelp = `List price changes, newest first: every time an offer's $/GPU-hour differed from its
previous observation, one row with the old and new price, the change in dollars and percent,
and when each price was seen. An offer is one provider's offer id at one price type.

--since and --until take a date, a time, "now" or an age such as 36h or 7d; the range
[since, until) selects when the new price was first seen. The same rows are in the
price_changes view for SQL (docs/analysts.md).`

func runChanges(ctx context.Context, e env, args []string) error {
	fs := newFlags("changes", "[flags]", changesHelp)
	fs.withConfig()
	var req selection.Request
	fs.StringVar(&req.GPU, "gpu", "", "comma-separated canonical GPU models (default all)")
	fs.StringVar(&req.Provider, "provider", "", "comma-separated providers (default all)")
	fs.StringVar(&req.PriceType, "price-type", "", "comma-separated price types (default all)")
	fs.StringVar(&req.Since, "since", "7d", "start of the range: a date, a time, or an age like 7d")
	fs.StringVar(&req.Until, "until", "now", "end of the range (exclusive)")
	fs.StringVar(&req.MinPct, "min-pct", "0", "only moves of at least this many percent, up or down")
	fs.StringVar(&req.Limit, "limit", "200", "at most this many rows, newest first (0: all)")
	output := fs.String("output", "table", "table, json or csv")
	if err := fs.parse(e, args, 0); err != nil {
		return err
	}
	q, err := req.Changes(time.Now(), selection.Bounds{})
	if err != nil {
		return err
	}
	if err := checkOutput(*output); err != nil {
		return err
	}
	s, err := fs.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	changes, err := s.Changes(ctx, q)
	if err != nil {
		return err
	}
	if err := writeChanges(e.stdout, *output, changes); err != nil {
		return fmt.Errorf("writing the output: %w", err)
	}
	if q.Limit > 0 && len(changes) == q.Limit {
		fmt.Fprintf(e.stderr, "gpucost changes: showing the newest %d; --limit 0 shows all\n", q.Limit)
	}
	return nil
}

var changesHeader = []string{"changed_at", "previous_at", "provider", "gpu_model", "gpu_count", "price_type", "offer_id", "tier", "region",
	"old_usd_per_gpu_hour", "new_usd_per_gpu_hour", "change_usd", "change_pct", "run_id"}

func writeChanges(w io.Writer, output string, changes []schema.PriceChange) error {
	switch output {
	case "json":
		if changes == nil {
			changes = []schema.PriceChange{}
		}
		return export.WriteJSON(w, changes)
	case "csv":
		cw := textcell.NewCSVWriter(w)
		if err := cw.Write(changesHeader); err != nil {
			return err
		}
		for _, c := range changes {
			if err := cw.Write([]string{c.ChangedAt.Format(time.RFC3339), c.PreviousAt.Format(time.RFC3339), c.Provider, c.GPUModel,
				strconv.Itoa(int(c.GPUCount)), string(c.PriceType), c.OfferID, string(c.Tier), c.Region,
				c.OldPrice.StringFixed(schema.PriceDecimals), c.NewPrice.StringFixed(schema.PriceDecimals), c.ChangeUSD.StringFixed(schema.PriceDecimals),
				c.ChangePct.StringFixed(2), c.RunID}); err != nil {
				return err
			}
		}
		return cw.Flush()
	default:
		t := textcell.NewTable(w, textcell.NameWidth)
		t.Row("CHANGED AT", "PROVIDER", "GPU", "N", "PRICE TYPE", "OLD $/GPU-H", "NEW $/GPU-H", "CHANGE", "OFFER", "PREVIOUSLY SEEN")
		for _, c := range changes {
			sign := ""
			if c.ChangePct.IsPositive() {
				sign = "+"
			}
			t.Row(c.ChangedAt.Format("2006-01-02 15:04"), c.Provider, c.GPUModel, strconv.Itoa(int(c.GPUCount)),
				string(c.PriceType), c.OldPrice.StringFixed(4), c.NewPrice.StringFixed(4), sign+c.ChangePct.StringFixed(1)+"%", textcell.Clean(c.OfferID, 32),
				c.PreviousAt.Format("2006-01-02 15:04"))
		}
		return t.Flush()
	}
}
