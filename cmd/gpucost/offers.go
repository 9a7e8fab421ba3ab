package main

import (
	"context"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/textcell"
)

const offersHelp = `List the current market from the store: the newest observation of every offer seen within
--max-age, or imported with a valid_until still ahead (gpucost import), cheapest $/GPU-hour
first; a price whose valid_until has passed is left out. Filters combine.

Scraped text is untrusted: the table turns control characters (escape sequences, line breaks,
tabs, bidi overrides) into spaces and cuts every cell to 40 characters; in CSV a cell that a
spreadsheet would run as a formula (starting with = + - @) gets a leading apostrophe, and
numbers stay numbers. JSON keeps the text as stored.`

func runOffers(ctx context.Context, e env, args []string) error {
	fs := newFlags("offers", "[flags]", offersHelp)
	fs.withConfig()
	var req selection.Request
	fs.StringVar(&req.GPU, "gpu", "", "comma-separated canonical GPU models, e.g. H100-SXM-80GB (see the GPU catalog)")
	fs.StringVar(&req.MinVRAM, "min-vram", "0", "minimum VRAM per GPU, GB")
	fs.StringVar(&req.Provider, "provider", "", "comma-separated providers")
	fs.StringVar(&req.PriceType, "price-type", "", "comma-separated price types: on_demand, spot, reserved, term_1y, term_3y")
	interconnect := fs.String("interconnect", "", "minimum intra-node interconnect: nvswitch, nvlink, pcie")
	fs.StringVar(&req.MaxAge, "max-age", "6h", "drop offers not seen for this long, unless their valid_until is ahead (0 keeps all)")
	perGPU := fs.Bool("cheapest-per-gpu", false, "only the cheapest offer of each GPU model")
	limit := fs.Int("limit", 50, "at most this many rows (0: all)")
	output := fs.String("output", "table", "table, json or csv")
	if err := fs.parse(e, args, 0); err != nil {
		return err
	}
	if err := checkOutput(*output); err != nil {
		return err
	}
	f, err := req.Offers(time.Now(), selection.Bounds{})
	if err != nil {
		return err
	}
	var minIntra schema.IntraNode
	if *interconnect != "" {
		if minIntra, err = schema.ParseIntraNode(*interconnect); err != nil || minIntra == schema.IntraUnknown {
			return badUsage("--interconnect %s: want nvswitch, nvlink or pcie", selection.Quote(*interconnect))
		}
	}
	s, err := fs.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	offers, err := s.LatestOffers(ctx, f)
	if err != nil {
		return err
	}
	if minIntra != "" {
		offers = filterIntra(offers, minIntra)
	}
	if *perGPU {
		offers = cheapestPerGPU(offers)
	}
	if *limit > 0 && len(offers) > *limit {
		offers = offers[:*limit]
	}
	switch *output {
	case "json":
		if offers == nil {
			offers = []schema.Offer{}
		}
		return export.WriteJSON(e.stdout, offers)
	case "csv":
		return writeOffersCSV(e.stdout, offers)
	}
	return writeOffersTable(e.stdout, offers)
}

// cheapestPerGPU keeps the first offer of each GPU model of a cheapest-first list, ordered by
// GPU model.
func cheapestPerGPU(offers []schema.Offer) []schema.Offer {
	seen := map[string]bool{}
	var out []schema.Offer
	for _, o := range offers {
		if o.GPUModel == "" || seen[o.GPUModel] {
			continue
		}
		seen[o.GPUModel] = true
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GPUModel < out[j].GPUModel })
	return out
}

// intraRank orders intra-node classes: a filter for nvlink keeps nvswitch (and AMD's Infinity
// Fabric, a GPU fabric of its own) too.
var intraRank = map[schema.IntraNode]int{schema.IntraUnknown: 0, schema.IntraPCIe: 1, schema.IntraNVLink: 2, schema.IntraInfinityFabric: 2, schema.IntraNVSwitch: 3}

func filterIntra(offers []schema.Offer, min schema.IntraNode) []schema.Offer {
	var out []schema.Offer
	for _, o := range offers {
		if intraRank[o.IntraNode] >= intraRank[min] {
			out = append(out, o)
		}
	}
	return out
}

var offerTableHeader = []string{"provider", "gpu_model", "gpus", "vram_gb", "price_type", "usd_per_gpu_hour", "usd_per_hour", "intra_node", "inter_node", "region", "tier", "offer_id", "observed_at"}

func offerRow(o schema.Offer) []string {
	model := o.GPUModel
	if model == "" {
		model = "? " + o.GPUNameRaw
	}
	return []string{o.Provider, model, strconv.Itoa(int(o.GPUCount)), strconv.FormatFloat(o.VRAMGB, 'f', -1, 64), string(o.PriceType),
		o.PriceUSDPerGPUHour.StringFixed(4), o.PriceUSDPerHour.StringFixed(4), string(o.IntraNode), string(o.InterNode),
		o.Region, string(o.Tier), o.OfferID, o.ObservedAt.UTC().Format(time.RFC3339)}
}

// offerCellWidth caps every cell of the offers table: a scraped name never pads every row.
const offerCellWidth = 40

// writeOffersTable writes the offers as a terminal table; scraped text passes textcell.
func writeOffersTable(w io.Writer, offers []schema.Offer) error {
	t := textcell.NewTable(w, offerCellWidth)
	t.Row("PROVIDER", "GPU", "N", "VRAM", "PRICE TYPE", "$/GPU-H", "$/H", "INTRA", "INTER", "REGION")
	for _, o := range offers {
		r := offerRow(o)
		t.Row(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], textcell.Clean(r[9], 28))
	}
	return t.Flush()
}

// writeOffersCSV writes the offers under offerTableHeader; every cell passes textcell.CSV.
func writeOffersCSV(w io.Writer, offers []schema.Offer) error {
	cw := textcell.NewCSVWriter(w)
	if err := cw.Write(offerTableHeader); err != nil {
		return err
	}
	for _, o := range offers {
		if err := cw.Write(offerRow(o)); err != nil {
			return err
		}
	}
	return cw.Flush()
}
