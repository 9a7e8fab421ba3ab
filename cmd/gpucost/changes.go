package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
)

const changesHelp = `List price changes, newest first: every time an offer's $/GPU-hour differed from its
previous observation, one row with the old and new price, the change in dollars and percent,
and when each price was seen. An offer is one provider's offer id at one price type.

--since and --until take a date, a time, "now" or an age such as 36h or 7d; the range
[since, until) selects when the new price was first seen. The same rows are in the
price_changes view for SQL (docs/analysts.md).

The table fits 100 columns:
  CHANGED (UTC)  when the new price was first seen
  N              GPUs in the offer
  OLD, NEW       the price per GPU-hour before and after, in dollars
  CHANGE         the move in percent of the old price
The offer id and the previous observation are in csv and json.
When --limit leaves changes out, a line under the table says how many: "shown 200 of 1,234".
--output csv and json carry every column of the price_changes view, under its names, the
previous observation's time and the change in dollars included; json is the envelope of
/api/v1/changes (gpucost.changes/v2), "truncated": true when the limit left changes out.`

func changesCommand(e env) *cobra.Command {
	var (
		cf          configFlag
		req         selection.Request
		output      string
		outputCheck func() error
	)
	cmd := &cobra.Command{
		Use:   "changes [flags]",
		Short: "list price changes: each time an offer's price moved, old and new price and percent",
		Long:  changesHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			q, err := req.Changes(time.Now(), selection.Bounds{})
			if err != nil {
				return err
			}
			if err := outputCheck(); err != nil {
				return err
			}
			s, err := cf.openStore(ctx, e)
			if err != nil {
				return err
			}
			defer s.Close()
			page := export.Envelope[schema.PriceChange]{Schema: export.ChangesSchema, Query: export.NewChangesQuery(q)}
			limit := q.Limit
			if limit > 0 {
				q.Limit = limit + 1 // one more says whether the limit leaves any out
			}
			if page.Items, err = s.Changes(ctx, q); err != nil {
				return err
			}
			total := len(page.Items)
			if limit > 0 && total > limit {
				page.Items, page.Truncated = page.Items[:limit], true
				if output != "json" {
					if total, err = s.CountChanges(ctx, q); err != nil {
						return err
					}
				}
			}
			if output == "json" {
				err = export.WriteJSON(e.stdout, page)
			} else {
				err = export.Changes(e.stdout, export.Format(output), page.Items)
			}
			if err != nil {
				return fmt.Errorf("writing the output: %w", err)
			}
			if !page.Truncated || output == "json" {
				return nil
			}
			// Under the table, its last line; beside a CSV, on stderr.
			w := e.stdout
			if output == "csv" {
				w = e.stderr
			}
			return export.WriteShown(w, len(page.Items), total, "price changes, the newest")
		},
	}
	cf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&req.GPU, "gpu", "", "comma-separated canonical GPU models (default all)")
	fl.StringVar(&req.Provider, "provider", "", "comma-separated providers (default all)")
	fl.StringVar(&req.PriceType, "price-type", "", "comma-separated price types (default all)")
	fl.StringVar(&req.Since, "since", "7d", "start of the range: a date, a time, or an age like 7d")
	fl.StringVar(&req.Until, "until", "now", "end of the range (exclusive)")
	fl.StringVar(&req.MinPct, "min-pct", "0", "only moves of at least this many percent, up or down")
	fl.StringVar(&req.Limit, "limit", "200", "at most this many rows, newest first (0: all)")
	outputCheck = outputFlag(cmd, &output, "table", "json", "csv")
	completeSelection(cmd)
	return cmd
}
