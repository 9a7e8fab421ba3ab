package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

const changesHelp = `List price changes, newest first: every time an offer's $/GPU-hour differed from its
previous observation, one row with the old and new price, the change in dollars and percent,
and when each price was seen. An offer is one provider's offer id at one price type.

--since and --until take a date, a time, "now" or an age such as 36h or 7d; the range
[since, until) selects when the new price was first seen. The same rows are in the
price_changes view for SQL (docs/analysts.md).`

func runChanges(ctx context.Context, e env, args []string) int {
	fs := newFlags("changes", "[flags]", changesHelp)
	fs.withConfig()
	gpu := fs.String("gpu", "", "comma-separated canonical GPU models (default all)")
	provider := fs.String("provider", "", "comma-separated providers (default all)")
	priceType := fs.String("price-type", "", "comma-separated price types (default all)")
	since := fs.String("since", "7d", "start of the range: a date, a time, or an age like 7d")
	until := fs.String("until", "now", "end of the range (exclusive)")
	minPct := fs.Float64("min-pct", 0, "only moves of at least this many percent, up or down")
	limit := fs.Int("limit", 200, "at most this many rows, newest first (0: all)")
	output := fs.String("output", "table", "table, json or csv")
	if code := fs.parse(e, args); code >= 0 {
		return code
	}
	q, err := changesQueryFromFlags(*gpu, *provider, *priceType, *since, *until, *minPct, *limit, time.Now().UTC())
	if err == nil {
		err = checkOutput(*output)
	}
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost changes: %v\n", err)
		return exitUsage
	}
	s, code := openStore(ctx, e, fs)
	if code >= 0 {
		return code
	}
	defer s.Close()
	changes, err := s.Changes(ctx, q)
	if err != nil {
		fmt.Fprintf(e.stderr, "gpucost changes: %v\n", err)
		return exitFailed
	}
	if err := writeChanges(e.stdout, *output, changes); err != nil {
		fmt.Fprintf(e.stderr, "gpucost changes: writing the output: %v\n", err)
		return exitFailed
	}
	if q.Limit > 0 && len(changes) == q.Limit {
		fmt.Fprintf(e.stderr, "gpucost changes: showing the newest %d; --limit 0 shows all\n", q.Limit)
	}
	return exitOK
}

// changesQueryFromFlags validates the changes flags (or API parameters) into a query.
func changesQueryFromFlags(gpu, providers, priceTypes, since, until string, minPct float64, limit int, now time.Time) (schema.ChangesQuery, error) {
	var q schema.ChangesQuery
	var err error
	if q.GPUModels, err = parseGPUs(gpu); err != nil {
		return q, err
	}
	if q.Providers, err = parseProviders(providers); err != nil {
		return q, err
	}
	if q.PriceTypes, err = parsePriceTypes(priceTypes); err != nil {
		return q, err
	}
	if q.From, q.To, err = parseRange(since, until, now); err != nil {
		return q, err
	}
	if minPct < 0 || minPct > 1e6 || minPct != minPct {
		return q, fmt.Errorf("the minimum change %g%% must be between 0 and 1000000", minPct)
	}
	if limit < 0 {
		return q, fmt.Errorf("the limit %d is negative", limit)
	}
	q.MinChangePct, q.Limit = minPct, limit
	return q, nil
}

var changesHeader = []string{"changed_at", "previous_at", "provider", "gpu_model", "gpu_count", "price_type", "offer_id", "tier", "region",
	"old_usd_per_gpu_hour", "new_usd_per_gpu_hour", "change_usd", "change_pct", "run_id"}

func writeChanges(w io.Writer, output string, changes []schema.PriceChange) error {
	switch output {
	case "json":
		if changes == nil {
			changes = []schema.PriceChange{}
		}
		return writeIndentedJSON(w, changes)
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
