package scrapers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/shopspring/decimal"
	"golang.org/x/net/html"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Hyperstack (NexGen Cloud) defaults (docs/providers.md §14.1).
const (
	// HyperstackName is the provider name Hyperstack offers are recorded under.
	HyperstackName = "hyperstack"
	// DefaultHyperstackAPIURL is the base of the Infrahub API, read with an API key.
	DefaultHyperstackAPIURL = "https://infrahub-api.nexgencloud.com/v1"
	// DefaultHyperstackPageURL is Hyperstack's public rate card, read without a key.
	DefaultHyperstackPageURL = "https://www.hyperstack.cloud/gpu-pricing"
)

// The API paths the keyed source asks, under the base URL (docs/providers.md §14.2).
const (
	hyperstackPricebookPath = "/pricebook"
	hyperstackFlavorsPath   = "/core/flavors"
)

// hyperstackSpot is the suffix of a pricebook name that prices the spot variant of a GPU.
const hyperstackSpot = "-spot"

// hyperstackMaxItems bounds the pricebook entries and the flavors of one answer: the real ones
// have a few dozen of each.
const hyperstackMaxItems = 50_000

// hyperstackSection is one part of the rate card, from its heading to the next one's: the
// table's price type, the header labels it must show and the cell holding the price. The CPU
// heading ends the GPU tables; its rows are not read.
type hyperstackSection struct {
	anchor    string
	priceType schema.PriceType // "" for the CPU section
	headers   []string
	priceCol  int
}

var hyperstackSections = []hyperstackSection{
	{"On-Demand GPU Pricing", schema.OnDemand, []string{"GPU Model", "VRAM (GB)", "Max pCPUs per GPU", "Max RAM (GB) per GPU", "Pricing Per Hour"}, 5},
	{"Reservation Pricing", schema.Reserved, []string{"GPU Model", "Starting from", "Reserve"}, 2},
	{"Spot VM Pricing", schema.Spot, []string{"GPU Model", "Spot VM"}, 2},
	{"On-Demand CPU Pricing", "", nil, 0},
}

// The rate card's row markup (docs/providers.md §14.3): a row and its numbered cells.
const (
	hyperstackRowClass  = "page-price_card_row_item"
	hyperstackCellClass = "page-price_card_row_item_col"
)

// ParseHyperstackPage parses Hyperstack's public rate card (https://www.hyperstack.cloud/gpu-pricing,
// docs/providers.md §14.3) into offers of one GPU each: an on-demand offer per row of the
// on-demand table, a reserved offer per row of the reservation table and a spot offer per row
// of the spot table. Prices are USD per GPU-hour, so the offer price is the row's price
// (SetPricePerGPU, GPU count 1).
//
//   - The page is read between four headings, each of which must appear exactly once and in
//     this order: "On-Demand GPU Pricing", "Reservation Pricing", "Spot VM Pricing" and
//     "On-Demand CPU Pricing". Rows outside the three GPU tables (the navigation and footer
//     menus, whose look-alike labels such as "NVIDIA HGX B200" have no price, and the CPU
//     table) are never read. Each table must show its header labels ("Pricing Per Hour",
//     "Starting from", "Spot VM") and have rows; otherwise the page changed, ErrLayoutChanged.
//   - A row is a <div class="page-price_card_row_item"> with cells page-price_card_row_item_col1
//     … col5. On-demand rows are GPU Model | VRAM (GB) | Max pCPUs per GPU | Max RAM (GB) per
//     GPU | Pricing Per Hour; reservation rows GPU Model | Starting from | "Reserve here"; spot
//     rows GPU Model | price. A price cell may start with a non-breaking space. A row whose
//     first cell is "GPU Model" is the table's header. An unpriced cell ("—", empty) is a GPU
//     the table does not sell: no offer, no problem.
//   - The reservation price is a "Starting from" floor for a term the page does not state: a
//     reserved offer (schema.Reserved), never on-demand.
//   - The GPU is the model label, resolved by the catalog's Hyperstack rules: a bare
//     "NVIDIA H100" or "NVIDIA A100", and one named NVLink, is the PCIe card (NVLink: with
//     bridges, not SXM); "A6000" and "A4000" are the RTX cards; B200's 192 GB is the 180 GB
//     B200 (vram_snapped). On-demand rows give VRAM, vCPUs and RAM (GB, per GPU); the other
//     tables name the GPU only (the catalog's VRAM, vram_missing).
//
// The offer id is "1x <model label>", e.g. "1x NVIDIA H100 SXM"; the price type tells the
// tables apart. No region (the page has none), stock unknown, inter-node unknown. A row that
// cannot be read is a problem naming the table, the row and the cell; a row listed twice in a
// table counts once. The page must be whole (checkPage), else the error wraps ErrIncomplete; a
// page without a priced row is ErrNoOffers, never an empty success.
func ParseHyperstackPage(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	defer func() {
		problems, err = sourceErrors(HyperstackName, capProblems(problems)), sourceError(HyperstackName, err)
	}()
	if err := checkPage(body); err != nil {
		return nil, nil, fmt.Errorf("pricing page: %w", err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("pricing page: parse html: %w", err)
	}
	var (
		found   = make([]int, len(hyperstackSections))
		text    = make([]strings.Builder, len(hyperstackSections)) // what a table shows outside its rows
		rows    = make([][]*goquery.Selection, len(hyperstackSections))
		cur     = -1
		ordered = true
	)
	// One walk over the tree, in document order, never into a heading or a row: linear in the
	// page, however deep it nests.
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			inTable := cur >= 0 && hyperstackSections[cur].priceType != ""
			switch {
			case c.Type == html.TextNode && inTable:
				text[cur].WriteString(" " + c.Data)
			case c.Type != html.ElementNode:
			case hyperstackIsHeading(c.Data):
				heading := normalizeSpace(goquery.NewDocumentFromNode(c).Text())
				for i, sec := range hyperstackSections {
					if strings.EqualFold(heading, sec.anchor) {
						found[i]++
						ordered = ordered && i == cur+1
						cur = i
					}
				}
			case inTable && goquery.NewDocumentFromNode(c).HasClass(hyperstackRowClass):
				row := goquery.NewDocumentFromNode(c).Selection
				if strings.EqualFold(hyperstackCell(row, 1), "GPU Model") {
					text[cur].WriteString(" " + row.Text()) // the header, in row markup
					continue
				}
				rows[cur] = append(rows[cur], row)
			default:
				walk(c)
			}
		}
	}
	walk(doc.Get(0))
	for i, sec := range hyperstackSections {
		if found[i] != 1 {
			return nil, nil, fmt.Errorf("pricing page: %w: heading %q found %d times, want 1", ErrLayoutChanged, sec.anchor, found[i])
		}
	}
	if !ordered {
		return nil, nil, fmt.Errorf("pricing page: %w: the headings are not in the order %q, %q, %q, %q", ErrLayoutChanged,
			hyperstackSections[0].anchor, hyperstackSections[1].anchor, hyperstackSections[2].anchor, hyperstackSections[3].anchor)
	}
	seen := map[schema.Key]bool{}
	vram := map[string]float64{} // by model label, from the on-demand table, read first
	for i, sec := range hyperstackSections {
		if sec.priceType == "" {
			continue
		}
		shown := strings.ToLower(normalizeSpace(text[i].String()))
		for _, h := range sec.headers {
			if !strings.Contains(shown, strings.ToLower(h)) {
				return nil, nil, fmt.Errorf("pricing page: %w: the %q table has no %q header", ErrLayoutChanged, sec.anchor, h)
			}
		}
		if len(rows[i]) == 0 {
			return nil, nil, fmt.Errorf("pricing page: %w: the %q table has no <div class=%q> rows", ErrLayoutChanged, sec.anchor, hyperstackRowClass)
		}
		for _, row := range rows[i] {
			o, ok, err := hyperstackRowOffer(row, sec, vram, run, sourceURL)
			switch {
			case err != nil:
				problems = append(problems, err)
				continue
			case !ok:
				continue
			case seen[o.Key()]:
				problems = append(problems, fmt.Errorf("pricing page: %s table: row %q listed twice", sec.anchor, clip(o.GPUNameRaw, 60)))
				continue
			}
			seen[o.Key()] = true
			offers = append(offers, o)
		}
	}
	if err := offerCap(len(offers), MaxOffers); err != nil {
		return nil, nil, fmt.Errorf("pricing page: %w", err)
	}
	if len(offers) == 0 {
		return nil, problems, fmt.Errorf("pricing page: %w: %d, %d and %d rows in the three GPU tables, none priced",
			ErrNoOffers, len(rows[0]), len(rows[1]), len(rows[2]))
	}
	sortOffers(offers)
	return offers, problems, nil
}

// hyperstackIsHeading reports whether an element of this name is a heading, where the section
// anchors are.
func hyperstackIsHeading(name string) bool {
	switch name {
	case "h1", "h2", "h3", "h4", "h5", "h6":
		return true
	}
	return false
}

// hyperstackCell is the text of a row's cell n (page-price_card_row_item_col<n>), "" when the
// row has none.
func hyperstackCell(row *goquery.Selection, n int) string {
	return normalizeSpace(row.Find("." + hyperstackCellClass + strconv.Itoa(n)).First().Text())
}

// hyperstackRowOffer turns one row of a GPU table into its offer; ok is false for an unpriced
// row. An on-demand row records its model's VRAM in vram, the VRAM of that model's rows in the
// reservation and spot tables, which have no VRAM column.
func hyperstackRowOffer(row *goquery.Selection, sec hyperstackSection, vram map[string]float64, run schema.Run, sourceURL string) (o schema.Offer, ok bool, err error) {
	label := hyperstackCell(row, 1)
	where := fmt.Sprintf("pricing page: %s table: row %q", sec.anchor, clip(label, 60))
	for n := 1; n <= sec.priceCol; n++ {
		if row.Find("."+hyperstackCellClass+strconv.Itoa(n)).Length() == 0 {
			return o, false, fmt.Errorf("%s: %w: no %s%d cell", where, ErrLayoutChanged, hyperstackCellClass, n)
		}
	}
	if label == "" {
		return o, false, fmt.Errorf("%s: no GPU model", where)
	}
	price, offered, err := parseUSD(hyperstackCell(row, sec.priceCol))
	if err != nil {
		return o, false, fmt.Errorf("%s: %w", where, err)
	}
	if !offered {
		return o, false, nil
	}
	label = clip(label, 100)
	o = schema.Offer{
		SourceURL: sourceURL,
		Provider:  HyperstackName,
		OfferID:   "1x " + label,
		Tier:      schema.TierDatacenter,
		GPUCount:  1,
		InterNode: schema.InterUnknown,
		Stock:     schema.StockUnknown,
		DQFlags:   []schema.DQFlag{},
	}
	if sec.priceType == schema.OnDemand {
		gb, err := parseNumber(hyperstackCell(row, 2))
		if err != nil {
			return o, false, fmt.Errorf("%s: VRAM (GB): %w", where, err)
		}
		vram[strings.ToLower(label)] = gb
		o.VCPUs = optNumber(hyperstackCell(row, 3), 1)
		o.RAMGB = optNumber(hyperstackCell(row, 4), 1)
	}
	run.Stamp(&o)
	o = pricedPerGPU(o, sec.priceType, price)
	match := applyGPU(&o, HyperstackName, label, vram[strings.ToLower(label)])
	o.IntraNode = hyperstackIntraNode(label, match)
	return o, true, nil
}

var hyperstackNVLinkRe = regexp.MustCompile(`(?i)(^|[^a-z])nvlink([^a-z]|$)`)

// hyperstackIntraNode is the GPU-to-GPU link of a Hyperstack GPU: an SXM module's board fabric
// (NVSwitch on the HGX boards), NVLink for the PCIe cards Hyperstack sells with bridges (names
// with NVLink: "H100-80G-PCIe-NVLink", "NVIDIA A100 NVLink"), PCIe for its other PCIe cards,
// which it names apart from the bridged ones; unknown for an unknown GPU.
func hyperstackIntraNode(name string, m gpus.Match) schema.IntraNode {
	if m.Known && !m.Model.BoardFabric && m.Model.Linkable() && hyperstackNVLinkRe.MatchString(name) {
		return schema.IntraNVLink
	}
	return intraFromForm(m)
}

// ParseHyperstack joins the Infrahub API's GET /pricebook (pricebook) with its GET
// /core/flavors (flavors) into offers, sorted by offer id (docs/providers.md §14.2): for each
// flavor in each region, an on-demand offer at its GPU's list price and a spot offer where the
// pricebook has one.
//
//   - The pricebook is a bare JSON array of {id, name, value, original_value, discount_applied,
//     start_time, end_time}. name is a flavor's gpu string ("H100-80G-PCIe"), or it with
//     "-spot" for the spot rate; value is USD per GPU-hour, a number or a numeric string read
//     as the decimal it says. Only list prices count: discount_applied false, no start_time or
//     end_time, and value equal to original_value; other entries (an account's discounts, a
//     promotion) are left out. Two list prices of one name that differ make it unpriced, a
//     problem of the flavors billed under it.
//   - The flavors answer is {"status": true, "message", "data": [{gpu, region_name, flavors:
//     [{name, region_name, cpu, ram, disk, gpu, gpu_count, stock_available, …}]}]}; status
//     false is an API error, ErrLayoutChanged with its message. A flavor without a GPU (gpu ""
//     or gpu_count 0) is a CPU flavor, skipped.
//   - Price: pricebook[gpu].value × gpu_count for the instance (SetPricePerGPU: the per-GPU
//     rate exact, the instance price its product rounded once); vCPU, RAM and disk are
//     included. A spot offer at pricebook[gpu + "-spot"] where that exists; a flavor whose gpu
//     itself ends in "-spot" is priced as spot only. A flavor whose GPU has no list price in
//     the pricebook is skipped and counted (the catalog lists GPUs it does not sell yet), not a
//     problem.
//   - Offer id "<flavor name>/<region>" (n3-H100x8-NVLink/CANADA-1), Region the region_name
//     (the flavor's, else its group's), Country from the region's prefix (CANADA, NORWAY, US).
//     Stock none where stock_available is false, else unknown. cpu is vCPUs, ram and disk GB.
//   - The GPU is the flavor's gpu, resolved by the catalog's Hyperstack rules (A100-80G-PCIe,
//     H100-80G-PCIe-NVLink, H100-80G-SXM5, H200-141G-SXM5, B200-SXM, RTX-A6000,
//     RTX-PRO6000-SE, …); the answer reports no VRAM (the catalog's, vram_missing). Intra-node
//     from the name (hyperstackIntraNode); inter-node unknown.
//
// A flavor that cannot be read is a problem naming it and the field; listed twice, a problem
// the second time. The error is set when either body is not a whole answer of its kind
// (ErrIncomplete when cut short, ErrLayoutChanged when it is something else), when nothing is
// priced (ErrNoOffers) or when an answer holds more than hyperstackMaxItems items
// (ErrTooManyOffers). Errors and problems name the provider.
func ParseHyperstack(pricebook, flavors []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	offers, problems, _, err = parseHyperstack(pricebook, flavors, run, sourceURL)
	return offers, problems, err
}

// parseHyperstack is ParseHyperstack, with the number of flavors left out for want of a list
// price.
func parseHyperstack(pricebook, flavors []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, unpriced int, err error) {
	defer func() {
		problems, err = sourceErrors(HyperstackName, capProblems(problems)), sourceError(HyperstackName, err)
	}()
	prices, err := parseHyperstackPricebook(pricebook)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("pricebook: %w", err)
	}
	list := &hyperstackGroups{prices: prices, run: run, sourceURL: sourceURL, seen: map[schema.Key]bool{}}
	var doc struct {
		Status  *bool             `json:"status"`
		Message string            `json:"message"`
		Data    *hyperstackGroups `json:"data"`
	}
	doc.Data = list
	if err := decodeJSON(flavors, "flavors", &doc); err != nil {
		return nil, nil, 0, fmt.Errorf("flavors: %w", err)
	}
	switch {
	case doc.Status != nil && !*doc.Status:
		return nil, nil, 0, fmt.Errorf("flavors: %w: api error: %s", ErrLayoutChanged, clipLine(doc.Message, 200))
	case doc.Status == nil || doc.Data == nil || !list.found:
		return nil, nil, 0, fmt.Errorf("flavors: %w: no status and data array", ErrLayoutChanged)
	}
	if len(list.offers) == 0 {
		return nil, list.problems, list.unpriced, fmt.Errorf("%w: %d flavors, %d of them without a list price in the pricebook's %d names",
			ErrNoOffers, list.n, list.unpriced, len(prices))
	}
	if err := offerCap(len(list.offers), MaxOffers); err != nil {
		return nil, nil, 0, err
	}
	sortOffers(list.offers)
	return list.offers, list.problems, list.unpriced, nil
}

// hyperstackRate is a pricebook name's list price per GPU-hour, or why it has none.
type hyperstackRate struct {
	price decimal.Decimal
	err   error
}

// parseHyperstackPricebook decodes the pricebook into the list price of each name. An entry
// that does not decode or whose value is no price makes its name's rate an error, a problem only
// for a flavor billed under it; an entry that is not a list price is left out.
func parseHyperstackPricebook(body []byte) (map[string]hyperstackRate, error) {
	b := &hyperstackPricebook{rates: map[string]hyperstackRate{}}
	if err := decodeJSON(body, "pricebook", b); err != nil {
		return nil, err
	}
	switch {
	case b.n == 0:
		return nil, fmt.Errorf("%w: the pricebook has no entries", ErrNoOffers)
	case b.keyed == 0:
		return nil, fmt.Errorf("%w: %d entries, none with a name and a value", ErrLayoutChanged, b.n)
	}
	return b.rates, nil
}

type hyperstackPricebook struct {
	n, keyed int
	rates    map[string]hyperstackRate
}

// hyperstackEntry is one pricebook entry (the fields read).
type hyperstackEntry struct {
	Name            string          `json:"name"`
	Value           json.RawMessage `json:"value"`
	OriginalValue   json.RawMessage `json:"original_value"`
	DiscountApplied bool            `json:"discount_applied"`
	StartTime       json.RawMessage `json:"start_time"`
	EndTime         json.RawMessage `json:"end_time"`
}

func (b *hyperstackPricebook) UnmarshalJSON(data []byte) error {
	if err := b.each(data); err != nil {
		return fmt.Errorf("pricebook: %w", err)
	}
	return nil
}

func (b *hyperstackPricebook) each(data []byte) error {
	return eachElement(data, func(i int, raw []byte) error {
		if b.n++; b.n > hyperstackMaxItems {
			return fmt.Errorf("%w: more than %d pricebook entries", ErrTooManyOffers, hyperstackMaxItems)
		}
		var e hyperstackEntry
		err := json.Unmarshal(raw, &e)
		if err != nil {
			var named struct {
				Name string `json:"name"`
			}
			_ = json.Unmarshal(raw, &named) // the name the broken entry prices, if that much reads
			e = hyperstackEntry{Name: named.Name}
		}
		name := strings.TrimSpace(e.Name)
		if name == "" {
			return nil // nothing refers to an entry without a name
		}
		if err == nil && e.Value != nil {
			b.keyed++
		}
		rate := hyperstackRate{}
		if err != nil {
			rate.err = fmt.Errorf("pricebook entry #%d: %w", i, decodeProblem(err))
		} else if rate.price, rate.err = hyperstackListPrice(e); rate.err != nil {
			rate.err = fmt.Errorf("pricebook entry #%d: %w", i, rate.err)
		}
		if errors.Is(rate.err, errNotListPrice) {
			return nil
		}
		if prev, ok := b.rates[name]; ok && (prev.err != nil || rate.err != nil || !prev.price.Equal(rate.price)) {
			if prev.err == nil {
				prev.err = fmt.Errorf("pricebook: %q has two list prices, %s and %s", clip(name, 60), prev.price, hyperstackRateText(rate))
			}
			b.rates[name] = prev
			return nil
		}
		b.rates[name] = rate
		return nil
	})
}

// errNotListPrice marks a pricebook entry that is not the list price (a discount, a promotion).
var errNotListPrice = errors.New("not a list price")

// hyperstackListPrice is the entry's value when it is a list price: errNotListPrice for a
// discount or a time-limited price, an error for a value that is no price.
func hyperstackListPrice(e hyperstackEntry) (decimal.Decimal, error) {
	value, present, err := jsonNumberOrString(e.Value) // a number or a numeric string, as Verda's
	switch {
	case err != nil:
		return decimal.Zero, fmt.Errorf("value: %w", err)
	case !present:
		return decimal.Zero, errors.New("value: none")
	}
	original, hasOriginal, err := jsonNumberOrString(e.OriginalValue)
	if err != nil {
		return decimal.Zero, fmt.Errorf("original_value: %w", err) // unreadable: reported, not taken for a discount
	}
	timed := !hyperstackNull(e.StartTime) || !hyperstackNull(e.EndTime)
	if e.DiscountApplied || timed || (hasOriginal && !original.Equal(value)) {
		return decimal.Zero, errNotListPrice
	}
	switch {
	case !value.IsPositive():
		return decimal.Zero, fmt.Errorf("value %s is not positive", value)
	case value.GreaterThanOrEqual(maxPrice):
		return decimal.Zero, fmt.Errorf("value %s is implausibly high", value)
	}
	return value, nil
}

// hyperstackRateText is a rate for a message: its price, or "an unreadable one".
func hyperstackRateText(r hyperstackRate) string {
	if r.err != nil {
		return "an unreadable one"
	}
	return r.price.String()
}

// hyperstackNull reports whether a JSON value is absent or null.
func hyperstackNull(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) == 0 || string(b) == "null"
}

// hyperstackGroups decodes the flavors answer's data array, one GPU-and-region group at a time,
// and prices each flavor.
type hyperstackGroups struct {
	prices    map[string]hyperstackRate
	run       schema.Run
	sourceURL string
	found     bool
	n         int // flavors
	unpriced  int // GPU flavors without a list price
	seen      map[schema.Key]bool
	offers    []schema.Offer
	problems  []error
}

// hyperstackFlavor is one flavor (the fields read).
type hyperstackFlavor struct {
	Name           string          `json:"name"`
	RegionName     string          `json:"region_name"`
	CPU            *float64        `json:"cpu"`
	RAM            *float64        `json:"ram"`
	Disk           *float64        `json:"disk"`
	GPU            string          `json:"gpu"`
	GPUCount       *int            `json:"gpu_count"`
	StockAvailable json.RawMessage `json:"stock_available"`
}

func (g *hyperstackGroups) UnmarshalJSON(data []byte) error {
	g.found = true
	return eachElement(data, func(i int, raw []byte) error {
		var group struct {
			RegionName string          `json:"region_name"`
			Flavors    json.RawMessage `json:"flavors"`
		}
		if err := json.Unmarshal(raw, &group); err != nil {
			g.problems = append(g.problems, fmt.Errorf("flavor group #%d: %w", i, decodeProblem(err)))
			return nil
		}
		if hyperstackNull(group.Flavors) {
			g.problems = append(g.problems, fmt.Errorf("flavor group #%d: no flavors array", i))
			return nil
		}
		return eachElement(group.Flavors, func(j int, raw []byte) error {
			if g.n++; g.n > hyperstackMaxItems {
				return fmt.Errorf("%w: more than %d flavors", ErrTooManyOffers, hyperstackMaxItems)
			}
			var f hyperstackFlavor
			if err := json.Unmarshal(raw, &f); err != nil {
				g.problems = append(g.problems, fmt.Errorf("flavor #%d of group #%d: %w", j, i, decodeProblem(err)))
				return nil
			}
			if f.RegionName == "" {
				f.RegionName = group.RegionName
			}
			g.add(f)
			return nil
		})
	})
}

var hyperstackRegionRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$`)

// hyperstackCountries are the countries of the region names' prefixes (CANADA-1, NORWAY-1, US-1).
var hyperstackCountries = map[string]string{"CANADA": "CA", "NORWAY": "NO", "US": "US"}

// add prices one flavor into its offers, or counts it unpriced, or reports why it cannot be.
func (g *hyperstackGroups) add(f hyperstackFlavor) {
	name, gpu := strings.TrimSpace(f.Name), strings.TrimSpace(f.GPU)
	where := fmt.Sprintf("flavor %q", clip(name, 60))
	switch {
	case gpu == "" || (f.GPUCount != nil && *f.GPUCount == 0):
		return // a CPU flavor
	case f.GPUCount == nil:
		g.problems = append(g.problems, fmt.Errorf("%s: gpu %q but no gpu_count", where, clip(gpu, 40)))
		return
	}
	region := strings.TrimSpace(f.RegionName)
	switch count := *f.GPUCount; {
	case name == "":
		g.problems = append(g.problems, fmt.Errorf("a flavor of %s without a name", clip(gpu, 40)))
		return
	case count < 0 || count > 1<<10:
		g.problems = append(g.problems, fmt.Errorf("%s: gpu_count %d is not a GPU count", where, count))
		return
	case !hyperstackRegionRe.MatchString(region):
		g.problems = append(g.problems, fmt.Errorf("%s: region_name %q is not a region", where, clip(region, 40)))
		return
	}
	type rate struct {
		pt   schema.PriceType
		name string
	}
	rates := []rate{{schema.OnDemand, gpu}, {schema.Spot, gpu + hyperstackSpot}}
	raw := gpu
	if base, ok := strings.CutSuffix(gpu, hyperstackSpot); ok {
		rates, raw = []rate{{schema.Spot, gpu}}, base
	}
	raw = clip(raw, 100)
	base := schema.Offer{
		SourceURL: g.sourceURL,
		Provider:  HyperstackName,
		OfferID:   clip(name, 100) + "/" + region,
		Tier:      schema.TierDatacenter,
		Region:    region,
		GPUCount:  uint16(*f.GPUCount),
		VCPUs:     specFigure(f.CPU, 1),
		RAMGB:     specFigure(f.RAM, 1),
		DiskGB:    specFigure(f.Disk, 1),
		InterNode: schema.InterUnknown,
		Stock:     schema.StockUnknown,
		DQFlags:   []schema.DQFlag{},
	}
	prefix, _, _ := strings.Cut(strings.ToUpper(region), "-")
	base.Country = hyperstackCountries[prefix]
	if string(bytes.TrimSpace(f.StockAvailable)) == "false" {
		base.Stock = schema.StockNone
	}
	g.run.Stamp(&base)
	match := applyGPU(&base, HyperstackName, raw, 0)
	base.IntraNode = hyperstackIntraNode(raw, match)
	priced := false
	for _, r := range rates {
		rt, ok := g.prices[r.name]
		if !ok {
			continue
		}
		priced = true
		if rt.err != nil {
			g.problems = append(g.problems, fmt.Errorf("%s in %s: %w", where, region, rt.err))
			continue
		}
		o := pricedPerGPU(base, r.pt, rt.price) // the pricebook's value is per GPU-hour
		if g.seen[o.Key()] {
			g.problems = append(g.problems, fmt.Errorf("%s in %s: listed twice", where, region))
			continue
		}
		g.seen[o.Key()] = true
		g.offers = append(g.offers, o)
	}
	if !priced {
		g.unpriced++
	}
}

// parseHyperstackStored re-derives a stored Hyperstack run: the API's pricebook and flavors
// joined, as the source joins them, or the rate card.
func parseHyperstackStored(payloads []schema.RawPayload, run schema.Run) ([]schema.Offer, []error, error) {
	var pricebook, flavors *schema.RawPayload
	for i, p := range payloads {
		u, err := url.Parse(p.URL)
		if err != nil {
			continue
		}
		switch {
		case strings.HasSuffix(u.Path, hyperstackPricebookPath):
			pricebook = &payloads[i]
		case strings.HasSuffix(u.Path, hyperstackFlavorsPath):
			flavors = &payloads[i]
		}
	}
	switch {
	case pricebook == nil && flavors == nil:
		return eachAnswer(ParseHyperstackPage)(payloads, run)
	case pricebook == nil:
		return nil, nil, errors.New("the run stored flavors without a pricebook")
	case flavors == nil:
		return nil, nil, errors.New("the run stored a pricebook without flavors")
	}
	return ParseHyperstack(pricebook.Body, flavors.Body, run, flavors.URL)
}

// HyperstackConfig configures the Hyperstack source. Zero fields take the defaults.
type HyperstackConfig struct {
	// APIKey is the Infrahub API key, sent as the header "api_key: <key>" (no scheme). It is a
	// secret: never logged, never put in a URL, an error, a payload or a recording. Empty means
	// the public rate card is read instead.
	APIKey    string
	APIURL    string        // API base (default DefaultHyperstackAPIURL)
	PageURL   string        // public rate card, read without a key (default DefaultHyperstackPageURL)
	UserAgent string        // for the rate card (default BrowserUserAgent); the API gets the client's
	Timeout   time.Duration // bound on the whole fetch, every request and retry included, within the run's ctx (default 2m)
	Delay     time.Duration // colly LimitRule delay after each page request (default 1s; negative = none)
}

// Hyperstack is the Hyperstack (NexGen Cloud) source. With an API key it reads the Infrahub
// pricebook and flavors (ParseHyperstack): exact prices per flavor and region, and stock.
// Without one it reads the public rate card through colly (ParseHyperstackPage): per-GPU
// prices with no region, and the reservation and spot tables. The two give different offer ids
// (n3-H100x1/CANADA-1, or the page's "1x NVIDIA H100"): the page names no flavors, and guessing
// them would splice two sources into one price history.
type Hyperstack struct {
	client       *Client
	key          string
	apiURL       string
	page         pageFetch
	cfgErr       error // an invalid URL, reported by Fetch
	logger       *slog.Logger
	fetchTimeout time.Duration
}

// NewHyperstack returns the Hyperstack source fetching through client. A nil logger discards.
// An invalid URL makes every Fetch fail with a clear error.
func NewHyperstack(client *Client, cfg HyperstackConfig, logger *slog.Logger) *Hyperstack {
	h := &Hyperstack{client: client, key: strings.TrimSpace(cfg.APIKey), apiURL: strings.TrimRight(cfg.APIURL, "/"), logger: orDiscard(logger)}
	if h.apiURL == "" {
		h.apiURL = DefaultHyperstackAPIURL
	}
	h.page, h.cfgErr = newPageFetch(HyperstackName, cfg.PageURL, DefaultHyperstackPageURL, cfg.UserAgent, cfg.Timeout, cfg.Delay)
	h.fetchTimeout = h.page.timeout
	if _, err := httpURL("API URL", h.apiURL, true); err != nil {
		h.cfgErr = err
	}
	if client == nil {
		h.cfgErr = errors.New("no HTTP client")
	}
	return h
}

// Name returns "hyperstack".
func (h *Hyperstack) Name() string { return HyperstackName }

// ParserVersion names the parser of its offers (ParserVersion).
func (h *Hyperstack) ParserVersion() string { return ParserVersion(HyperstackName) }

// Fetch fetches Hyperstack's prices: the API when a key is configured, else the public rate
// card.
func (h *Hyperstack) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	if h.cfgErr != nil {
		return schema.Extract{}, sourceError(HyperstackName, h.cfgErr)
	}
	if h.key == "" {
		h.logger.Debug("Hyperstack API key not set: reading the rate card")
		return h.page.offers(ctx, h.client, HyperstackName, run, ParseHyperstackPage, h.logger)
	}
	res, err := h.fetchAPI(ctx, run)
	if err != nil {
		return res, sourceError(HyperstackName, err)
	}
	return res, nil
}

// fetchAPI reads the pricebook, then the flavors, and joins them. Both must succeed: flavors
// without prices are no offers, and prices without flavors say no instance.
func (h *Hyperstack) fetchAPI(ctx context.Context, run schema.Run) (res schema.Extract, err error) {
	ctx, attempts := WithAttemptCounter(ctx)
	ctx = h.client.withBudget(ctx)
	ctx, cancel := context.WithTimeout(ctx, h.fetchTimeout)
	defer cancel()
	defer func() { res.Attempts = attempts.Count() }()
	// The client learns the credentials of Authorization headers by itself; this one it is told.
	h.client.red.AddSent(h.key)
	header := http.Header{"api_key": {h.key}, "Accept": {"application/json"}}
	var bodies [2][]byte
	var flavorsURL string
	for i, doc := range []struct{ what, path string }{{"the pricebook", hyperstackPricebookPath}, {"the flavors", hyperstackFlavorsPath}} {
		resp, err := h.client.Do(ctx, Request{Source: HyperstackName, URL: h.apiURL + doc.path, Header: header})
		if resp != nil {
			res.Payloads = append(res.Payloads, resp.Payload())
		}
		switch {
		case credentialsRefused(err):
			return res, fmt.Errorf("querying %s: the API refused the key: %w", doc.what, err)
		case err != nil:
			return res, fmt.Errorf("querying %s: %w", doc.what, err)
		}
		if mt, _, _ := mime.ParseMediaType(resp.ContentType); mt != "application/json" {
			return res, fmt.Errorf("%s: %w: content type %q, want application/json", doc.what, ErrLayoutChanged, clipLine(resp.ContentType, 80))
		}
		bodies[i], flavorsURL = resp.Body, resp.URL
	}
	offers, problems, unpriced, err := parseHyperstack(bodies[0], bodies[1], run, flavorsURL)
	res.Problems = problems
	if err != nil {
		return res, err
	}
	if err := h.client.offerCap(len(offers)); err != nil { // http.max_source_offers
		return res, err
	}
	res.Offers = offers
	h.logger.Debug("Hyperstack parsed", "offers", len(offers), "problems", len(problems), "unpriced_flavors", unpriced, "from", "api")
	return res, nil
}
