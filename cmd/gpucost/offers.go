package main

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/market"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/textcell"
)

const offersHelp = `List the current market from the store: the newest observation of every offer seen within
--max-age, or imported with a valid_until still ahead (gpucost import), cheapest $/GPU-hour
first; a price whose valid_until has passed is left out. Filters combine. Offers of GPUs outside
the catalog are left out unless --unknown; a footer says how many.

GPU specs (--gpu, repeated or comma-separated), in the shapes of dstack's --gpu:
  H100             every H100: its SXM, PCIe and NVL parts (a family, in any case)
  H100-SXM         narrower: a form (SXM, PCIe, NVL) or memory in the name (A100-80GB)
  H100-SXM-80GB    one catalog model (gpucost gpus lists them)
  H100:8           eight GPUs in the offer; A100:1..4 one to four; :2.. two or more
  24GB..80GB       VRAM per GPU (48GB.., ..80GB); A100:80GB the A100s of 80 GB
  amd, nvidia      a vendor's GPUs (amd:MI300X:8)
  A100,H100:8      an A100 or an H100, eight of them: names share the vendor, count and memory
                   after them, as in dstack (--gpu A100 --gpu H100:8 are two specs)

Columns (a terminal shows those that fit its width, the most needed first; --wide shows all):
  N           GPUs in the offer; VRAM: GB per GPU
  CPUS, RAM   the host's vCPUs and GB of RAM ("-": the provider does not say)
  PRICE TYPE  on_demand, spot (can be taken back), serverless (busy time only), reserved or
              term_1w … term_3y (a commitment)
  $/GPU-H     dollars per GPU-hour; $/H: the whole offer per hour
  INTRA       GPU to GPU in the node: nvswitch, nvlink, inf_fabric (AMD), pcie; ?: unknown
  INTER       between nodes: ib (InfiniBand), roce, eth (Ethernet), none (a single host); ?: unknown
  TIER        the provider's class of host: secure, community, datacenter, verified, unverified
  ? NAME      a GPU outside the catalog, by the provider's name for it (with --unknown)
Rows beyond --limit and columns left out are named under the table ("shown 50 of 548 offers
(--gpu H100); --limit 0 for all").

--group-by gpu, provider or count, or several (gpu,provider), writes a row per group: PROVIDERS
and OFFERS count its offers, $/GPU-H is the range of their prices, and ON-DEMAND, SPOT,
COMMITMENT and SERVERLESS the cheapest of each ("-": none; a commitment's term: 1w, 1m, 3m, 6m,
1y, 3y, or res: reserved, term not stated). --cheapest-per-gpu is its older name for gpu.

--sort price: the cheapest $/GPU-hour first (the default); gpu: by name; vram: the most per GPU
first; provider: by name; ties the cheapest first. Groups come in the order of their keys
unless --sort says otherwise.

Scraped text is untrusted: the table turns control characters (escape sequences, line breaks,
tabs, bidi overrides) into spaces and cuts every cell to 40 characters; in CSV a cell that a
spreadsheet would run as a formula (starting with = + - @) gets a leading apostrophe, and
numbers stay numbers. JSON keeps the text as stored. CSV and JSON carry every column of the
offers table, under its names, with exact prices (docs/analysts.md); with --group-by, every
field of a group. JSON is an envelope: of /api/v1/offers (gpucost.offers/v2), or of the groups
(gpucost.offer_groups/v1), with the query as understood and "truncated": true when --limit left
rows out.`

// offersQuery is what gpucost offers --output json echoes: the query of /api/v1/offers (its gpu
// the specs as given), and the filters and shapes the API does not have.
type offersQuery struct {
	export.OffersQuery
	MaxPrice     decimal.Decimal `json:"max_price"` // 0: no cap
	Region       []string        `json:"region"`
	Country      []string        `json:"country"`
	MinVCPUs     float64         `json:"min_vcpus"`
	MinRAM       float64         `json:"min_ram"`
	Interconnect string          `json:"interconnect"` // the least intra-node interconnect; "" for any
	Unknown      bool            `json:"unknown"`      // GPUs outside the catalog too
	Sort         string          `json:"sort"`
	GroupBy      []string        `json:"group_by"` // [] lists offers
}

// newOffersQuery is the query of gpucost offers as understood.
func newOffersQuery(req selection.Request, f schema.OfferFilter, by []market.Dimension, limit int) offersQuery {
	q := offersQuery{OffersQuery: export.NewOffersQuery(f), MaxPrice: f.MaxUSDPerGPUHour, Region: f.Regions, Country: f.Countries,
		MinVCPUs: f.MinVCPUs, MinRAM: f.MinRAMGB, Interconnect: string(f.MinIntraNode), Unknown: !f.KnownGPUs, Sort: string(f.Sort), GroupBy: []string{}}
	q.GPU, q.Limit = req.GPUSpecs, limit
	if q.GPU == nil {
		q.GPU = []string{}
	}
	if q.Region == nil {
		q.Region = []string{}
	}
	if q.Country == nil {
		q.Country = []string{}
	}
	if q.Sort == "" {
		q.Sort = string(schema.SortPrice)
	}
	for _, d := range by {
		q.GroupBy = append(q.GroupBy, string(d))
	}
	return q
}

func offersCommand(e env) *cobra.Command {
	var (
		cf                            configFlag
		req                           selection.Request
		interconnect, output, groupBy string
		perGPU, unknown, wide         bool
		spot, onDemand, commitment    bool
		limit                         int
		outputCheck                   func() error
	)
	cmd := &cobra.Command{
		Use:   "offers [flags]",
		Short: "list the current market from the store, cheapest first, or summarise it by GPU, provider or count",
		Long:  offersHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			if err := outputCheck(); err != nil {
				return err
			}
			if perGPU {
				if groupBy != "" && groupBy != string(market.ByGPU) {
					return badUsage("--cheapest-per-gpu is --group-by gpu: give one of them")
				}
				groupBy = string(market.ByGPU)
			}
			by, err := selection.GroupBy(groupBy)
			if err != nil {
				return err
			}
			req.PriceType = withPriceTypes(req.PriceType, spot, onDemand, commitment)
			f, err := req.Offers(time.Now(), selection.Bounds{})
			if err != nil {
				return err
			}
			if interconnect != "" {
				if f.MinIntraNode, err = schema.ParseIntraNode(interconnect); err != nil || f.MinIntraNode == schema.IntraUnknown {
					return badUsage("--interconnect %s: want nvswitch, nvlink or pcie", selection.Quote(interconnect))
				}
			}
			f.KnownGPUs = !unknown
			query := newOffersQuery(req, f, by, limit)
			s, err := cf.openStore(ctx, e)
			if err != nil {
				return err
			}
			defer s.Close()
			view := export.View{Width: tableWidth(e, wide), Filters: givenFilters(cmd), Filter: f}
			if len(by) > 0 {
				groups, err := s.LatestSummaries(ctx, f, by)
				if err != nil {
					return err
				}
				market.SortSummaries(groups, by, f.Sort)
				view.Matched = len(groups)
				truncated := limit > 0 && len(groups) > limit
				if truncated {
					groups = groups[:limit]
				}
				switch output {
				case "json":
					return export.WriteJSON(e.stdout, export.Envelope[market.Summary]{Schema: export.OfferGroupsSchema, Query: query, Items: groups, Truncated: truncated})
				case "csv":
					// stdout holds the CSV alone; what --limit cut is said on stderr
					if err := export.Summaries(e.stdout, export.CSV, by, groups, view); err != nil || !truncated {
						return err
					}
					return export.WriteShown(e.stderr, len(groups), view.Matched, "groups")
				}
				if f.KnownGPUs {
					if _, view.Unknown, err = s.CountLatest(ctx, f); err != nil {
						return err
					}
				}
				return export.Summaries(e.stdout, export.Table, by, groups, view)
			}
			if limit > 0 {
				f.Limit = limit + 1 // the rows shown, and one to say whether more matched
			}
			offers, err := s.LatestOffers(ctx, f)
			if err != nil {
				return err
			}
			truncated := limit > 0 && len(offers) > limit
			if truncated {
				offers = offers[:limit]
			}
			switch output {
			case "json":
				return export.WriteJSON(e.stdout, export.Envelope[schema.Offer]{Schema: export.OffersSchema, Query: query, Items: offers, Truncated: truncated})
			case "csv":
				if err := export.Offers(e.stdout, export.CSV, offers); err != nil || !truncated {
					return err
				}
				matched, _, err := s.CountLatest(ctx, f)
				if err != nil {
					return err
				}
				return export.WriteShown(e.stderr, len(offers), matched, "offers")
			}
			view.Matched = len(offers)
			if f.KnownGPUs || truncated {
				if view.Matched, view.Unknown, err = s.CountLatest(ctx, f); err != nil {
					return err
				}
			}
			return export.OfferTable(e.stdout, offers, view)
		},
	}
	cf.add(cmd)
	fl := cmd.Flags()
	fl.StringArrayVar(&req.GPUSpecs, "gpu", nil, "GPU specs (above): H100, H100-SXM, H100:8, A100:1..4, 24GB..80GB")
	fl.StringVar(&req.MinVRAM, "min-vram", "0", "minimum VRAM per GPU, GB")
	fl.StringVar(&req.Provider, "provider", "", "comma-separated providers")
	fl.StringVar(&req.PriceType, "price-type", "", "comma-separated price types (on_demand, spot, serverless, reserved, …)")
	fl.BoolVar(&spot, "spot", false, "spot prices (with --on-demand, --commitment, --price-type: and those)")
	fl.BoolVar(&onDemand, "on-demand", false, "on-demand prices (with --spot, --commitment, --price-type: and those)")
	fl.BoolVar(&commitment, "commitment", false, "reserved and term prices, any term (with the others: and those)")
	fl.StringVar(&req.MaxPrice, "max-price", "", "the most per GPU-hour, USD, e.g. 2.50")
	fl.StringVar(&req.Region, "region", "", "comma-separated regions, and those inside them (us: us-texas)")
	fl.StringVar(&req.Country, "country", "", "comma-separated ISO country codes, e.g. US,DE")
	fl.StringVar(&req.MinVCPUs, "min-vcpus", "", "the least vCPUs of the host (an offer that does not say is left out)")
	fl.StringVar(&req.MinRAM, "min-ram", "", "the least RAM of the host, GB (an offer that does not say is left out)")
	fl.StringVar(&interconnect, "interconnect", "", "minimum intra-node interconnect: nvswitch, nvlink, pcie")
	completeFlag(cmd, "interconnect", "nvswitch", "nvlink", "pcie")
	fl.BoolVar(&unknown, "unknown", false, "offers of GPUs outside the catalog too (\"? NAME\")")
	fl.StringVar(&req.MaxAge, "max-age", "6h", "age limit, unless valid_until is ahead (0: none)")
	fl.StringVar(&req.Sort, "sort", "", "price, gpu, vram or provider (above)")
	completeFlag(cmd, "sort", "price", "gpu", "vram", "provider")
	fl.StringVar(&groupBy, "group-by", "", "a row per group of gpu, provider, count (comma-separated; above)")
	completeList(cmd, "group-by", "gpu", "provider", "count")
	fl.BoolVar(&perGPU, "cheapest-per-gpu", false, "the older name of --group-by gpu (it printed offers, now groups)")
	fl.IntVar(&limit, "limit", 50, "at most this many rows (0: all)")
	fl.BoolVar(&wide, "wide", false, "every column, however wide the terminal")
	outputCheck = outputFlag(cmd, &output, "table", "json", "csv")
	completeSelection(cmd)
	return cmd
}

// withPriceTypes adds to a --price-type list the price types of --spot, --on-demand and
// --commitment, each once.
func withPriceTypes(list string, spot, onDemand, commitment bool) string {
	types := selection.List(list)
	if spot {
		types = append(types, string(schema.Spot))
	}
	if onDemand {
		types = append(types, string(schema.OnDemand))
	}
	if commitment {
		for _, pt := range market.Commitment.PriceTypes() {
			types = append(types, string(pt))
		}
	}
	slices.Sort(types)
	return strings.Join(slices.Compact(types), ",")
}

// tableWidth is the width the offers table fits: the terminal's, when stdout is one that says,
// else textcell.TerminalWidth; 0 with --wide (every column).
func tableWidth(e env, wide bool) int {
	if wide {
		return 0
	}
	if e.stdoutTTY {
		if w, _, err := term.GetSize(int(os.Stdout.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return textcell.TerminalWidth
}

// givenFilters writes the flags of cmd that filter the market as the user gave them, for the
// footer of the table: --gpu H100 --spot.
func givenFilters(cmd *cobra.Command) string {
	shaping := map[string]bool{"config": true, "output": true, "limit": true, "wide": true, "sort": true, "group-by": true, "cheapest-per-gpu": true}
	var out []string
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if shaping[f.Name] {
			return
		}
		values := []string{f.Value.String()}
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			values = sv.GetSlice()
		}
		for _, v := range values {
			switch {
			case f.Value.Type() == "bool" && v == "true":
				out = append(out, "--"+f.Name)
			case v == "" || strings.ContainsAny(v, " \"'\\"):
				out = append(out, "--"+f.Name+" "+strconv.Quote(v))
			default:
				out = append(out, "--"+f.Name+" "+v)
			}
		}
	})
	return strings.Join(out, " ")
}
