package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
)

const offersHelp = `List the current market from the store: the newest observation of every offer seen within
--max-age, or imported with a valid_until still ahead (gpucost import), cheapest $/GPU-hour
first; a price whose valid_until has passed is left out. Filters combine.

Scraped text is untrusted: the table turns control characters (escape sequences, line breaks,
tabs, bidi overrides) into spaces and cuts every cell to 40 characters; in CSV a cell that a
spreadsheet would run as a formula (starting with = + - @) gets a leading apostrophe, and
numbers stay numbers. JSON keeps the text as stored. CSV and JSON carry every column of the
offers table, under its names, with exact prices (docs/analysts.md). JSON is the envelope of
/api/v1/offers (gpucost.offers/v2): the query as understood, and "truncated": true when
--limit left offers out.`

// offersQuery is what gpucost offers --output json echoes: the query of /api/v1/offers, and
// the flags the API does not have.
type offersQuery struct {
	export.OffersQuery
	Interconnect   string `json:"interconnect"` // the least intra-node interconnect; "" for any
	CheapestPerGPU bool   `json:"cheapest_per_gpu"`
}

func offersCommand(e env) *cobra.Command {
	var (
		cf                   configFlag
		req                  selection.Request
		interconnect, output string
		perGPU               bool
		limit                int
	)
	cmd := &cobra.Command{
		Use:   "offers [flags]",
		Short: "list the current market from the store, cheapest first",
		Long:  offersHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := checkOutput(output, "table", "json", "csv"); err != nil {
				return err
			}
			f, err := req.Offers(time.Now(), selection.Bounds{})
			if err != nil {
				return err
			}
			if interconnect != "" {
				if f.MinIntraNode, err = schema.ParseIntraNode(interconnect); err != nil || f.MinIntraNode == schema.IntraUnknown {
					return badUsage("--interconnect %s: want nvswitch, nvlink or pcie", selection.Quote(interconnect))
				}
			}
			query := offersQuery{OffersQuery: export.NewOffersQuery(f), Interconnect: string(f.MinIntraNode), CheapestPerGPU: perGPU}
			query.Limit = limit
			if !perGPU && limit > 0 {
				f.Limit = limit + 1 // the store returns the rows shown, and one to say whether more matched
			}
			s, err := cf.openStore(ctx, e)
			if err != nil {
				return err
			}
			defer s.Close()
			var offers []schema.Offer
			if perGPU {
				models, err := s.LatestPerGPU(ctx, f)
				if err != nil {
					return err
				}
				offers = make([]schema.Offer, len(models))
				for i, m := range models {
					offers[i] = m.Cheapest[0]
				}
			} else if offers, err = s.LatestOffers(ctx, f); err != nil {
				return err
			}
			truncated := limit > 0 && len(offers) > limit
			if truncated {
				offers = offers[:limit]
			}
			if output == "json" {
				return export.WriteJSON(e.stdout, export.Envelope[schema.Offer]{Schema: export.OffersSchema, Query: query, Items: offers, Truncated: truncated})
			}
			return export.Offers(e.stdout, export.Format(output), offers)
		},
	}
	cf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&req.GPU, "gpu", "", "comma-separated canonical GPU models, e.g. H100-SXM-80GB (see the GPU catalog)")
	fl.StringVar(&req.MinVRAM, "min-vram", "0", "minimum VRAM per GPU, GB")
	fl.StringVar(&req.Provider, "provider", "", "comma-separated providers")
	fl.StringVar(&req.PriceType, "price-type", "", "comma-separated price types: "+schema.List(schema.PriceTypes))
	fl.StringVar(&interconnect, "interconnect", "", "minimum intra-node interconnect: nvswitch, nvlink, pcie")
	completeFlag(cmd, "interconnect", "nvswitch", "nvlink", "pcie")
	fl.StringVar(&req.MaxAge, "max-age", "6h", "drop offers not seen for this long, unless their valid_until is ahead (0 keeps all)")
	fl.BoolVar(&perGPU, "cheapest-per-gpu", false, "only the cheapest offer of each GPU model, in model order")
	fl.IntVar(&limit, "limit", 50, "at most this many rows (0: all)")
	outputFlag(cmd, &output, "table", "json", "csv")
	completeSelection(cmd)
	return cmd
}
