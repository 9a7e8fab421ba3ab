package scrapers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// CoreWeave defaults (docs/providers.md §4.1).
const (
	// CoreWeaveName is the provider name CoreWeave offers are recorded under.
	CoreWeaveName = "coreweave"
	// DefaultCoreWeaveURL is CoreWeave's public pricing page; there is no pricing API.
	DefaultCoreWeaveURL = "https://www.coreweave.com/pricing"
)

// Section anchors and the table header labels the parser relies on (docs/providers.md §4.2–4.3).
const (
	coreweaveGPUAnchor = "On-demand GPU instances"
	coreweaveCPUAnchor = "On-demand CPU instances"
)

// coreweaveHeaders must all appear (as substrings, case-insensitive) in every region's table
// header. The parser reads the labelled spans, not columns, but a renamed header means the page
// changed under us and its numbers can no longer be trusted blindly.
var coreweaveHeaders = []string{"GPU Model", "GPU Count", "VRAM", "On-Demand Price", "Spot Price"}

// ParseCoreWeave parses CoreWeave's pricing page (https://www.coreweave.com/pricing) into
// offers: for each region table (NORTH AMERICA, EUROPE) and each GPU row, an on-demand and a
// spot offer where the page lists a price. It follows the recipe of docs/providers.md §4.3:
//
//   - Only the part between the "On-demand GPU instances" and "On-demand CPU instances"
//     headings is read (the CPU section reuses the row markup and the region heading); each must
//     appear exactly once.
//   - Rows are every <div role="listitem" class="table-row-v2 w-dyn-item …">, whatever the third
//     class (the HGX H100 row's is gpu-pricing-and-kubernetes-gpu-pricing, §4.6 trap 1).
//   - Prices come only from the labelled spans (instance-price, spot-price); the unlabelled
//     desktop cells and the inference-price span (a per-GPU price for the inference platform
//     only, §4.6 trap 6) are ignored. "", "N/A" and "Contact sales" mean not offered.
//   - Specs come from the labelled meta cells. The GPU count "4^1" (GB200/GB300: a count and a
//     footnote) is its leading integer, also when the footnote is rendered as <sup>.
//   - Prices are per instance ("$1,234.56", thousands separators allowed); the per-GPU price is
//     price / GPU count. VRAM is per GPU in GB. System RAM and Local Storage are binary units on
//     this page (1 GB = 2^30 B, 1 TB = 2^40 B) and are recorded as decimal GB.
//
// Interconnect is inferred from the product name: HGX boards (H100, H200, B200, B300) are SXM
// GPUs on NVSwitch with InfiniBand between nodes (their instance ids carry "ib"); NVL72 racks
// (GB200, GB300) are NVSwitch racks on InfiniBand; the bare "A100" is HGX A100 (NVSwitch, no
// InfiniBand in its id: inter-node unknown); PCIe cards without NVLink (L40, L40S, RTX PRO 6000)
// are PCIe only; anything else is unknown.
//
// The offer id is "<data-product>/<region>", e.g. "hgx-h100/north-america"; the price type
// tells the on-demand and spot offers apart. A row that cannot be parsed is skipped and reported
// in problems. The page must be whole (checkPage: it ends with </html>), else the error wraps
// ErrIncomplete. A page whose structure changed (anchors, region headings, header labels or row
// markup missing) or that yields no priced offer returns an error wrapping ErrLayoutChanged or
// ErrNoOffers, never an empty success.
func ParseCoreWeave(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	defer func() {
		problems, err = sourceErrors(CoreWeaveName, capProblems(problems)), sourceError(CoreWeaveName, err)
	}()
	if err := checkPage(body); err != nil {
		return nil, nil, err
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("parse html: %w", err)
	}

	type region struct {
		name    string
		headers []string
		rows    []*goquery.Selection
	}
	var (
		gpuAnchors, cpuAnchors int
		regions                []*region
		cur                    *region
		strays                 int // rows in the GPU section before any region heading
	)
	doc.Find("h1, h2, h4, h5, h6, .eyebrow, .table-header-text, [role=listitem]").Each(func(_ int, s *goquery.Selection) {
		if s.AttrOr("role", "") == "listitem" {
			switch {
			case gpuAnchors == 0 || cpuAnchors > 0 || !coreweaveIsRow(s):
			case cur == nil:
				strays++
			default:
				cur.rows = append(cur.rows, s)
			}
			return
		}
		text := normalizeSpace(s.Text())
		switch node := goquery.NodeName(s); {
		case node == "h2" && strings.EqualFold(text, coreweaveGPUAnchor):
			gpuAnchors++
			return
		case node == "h2" && strings.EqualFold(text, coreweaveCPUAnchor):
			cpuAnchors++
			return
		case gpuAnchors == 0 || cpuAnchors > 0:
			return // outside the GPU section
		case s.HasClass("table-header-text"):
			if cur != nil {
				cur.headers = append(cur.headers, text)
			}
		case coreweaveRegionRe.MatchString(text):
			name := clip(coreweaveRegionRe.FindStringSubmatch(text)[1], 40)
			// <h5><strong class="eyebrow">REGION: …</strong></h5> matches twice: keep one.
			if cur != nil && cur.name == name && len(cur.rows) == 0 && len(cur.headers) == 0 {
				return
			}
			cur = &region{name: name}
			regions = append(regions, cur)
		}
	})
	switch {
	case gpuAnchors != 1:
		return nil, nil, fmt.Errorf("%w: heading %q found %d times, want 1", ErrLayoutChanged, coreweaveGPUAnchor, gpuAnchors)
	case cpuAnchors != 1:
		return nil, nil, fmt.Errorf("%w: heading %q found %d times, want 1", ErrLayoutChanged, coreweaveCPUAnchor, cpuAnchors)
	case strays > 0:
		return nil, nil, fmt.Errorf("%w: %d GPU rows before any \"REGION:\" heading", ErrLayoutChanged, strays)
	case len(regions) == 0:
		return nil, nil, fmt.Errorf("%w: no \"REGION:\" heading in the GPU section", ErrLayoutChanged)
	}
	seen := map[string]bool{}
	for _, r := range regions {
		if missing := coreweaveMissingHeaders(r.headers); len(missing) > 0 {
			return nil, nil, fmt.Errorf("%w: region %q table header lacks %q (has %d cells)", ErrLayoutChanged, r.name, missing, len(r.headers))
		}
		if len(r.rows) == 0 {
			return nil, nil, fmt.Errorf("%w: region %q has no <div role=\"listitem\" class=\"table-row-v2 w-dyn-item\"> rows", ErrLayoutChanged, r.name)
		}
		slug := coreweaveSlug(r.name)
		for _, row := range r.rows {
			got, err := coreweaveRowOffers(row, slug, run, sourceURL)
			if err != nil {
				problems = append(problems, err)
				continue
			}
			for _, o := range got {
				k := o.OfferID + "|" + string(o.PriceType)
				if seen[k] {
					problems = append(problems, fmt.Errorf("region %s: duplicate row %q", slug, clip(o.OfferID, 80)))
					continue
				}
				seen[k] = true
				offers = append(offers, o)
			}
		}
	}
	if err := offerCap(len(offers), MaxOffers); err != nil {
		return nil, nil, err
	}
	if len(offers) == 0 {
		return nil, problems, fmt.Errorf("%w: %d regions, no priced GPU row", ErrNoOffers, len(regions))
	}
	return offers, problems, nil
}

var coreweaveRegionRe = regexp.MustCompile(`(?i)^REGION:\s*(\S.*)$`)

// coreweaveIsRow reports whether a listitem is a pricing row: class "table-row-v2 w-dyn-item …".
func coreweaveIsRow(s *goquery.Selection) bool {
	return s.HasClass("table-row-v2") && s.HasClass("w-dyn-item")
}

// coreweaveSlug lower-cases name and joins its words with dashes: "NORTH AMERICA" becomes
// "north-america" (regions), "NVIDIA HGX H100" "nvidia-hgx-h100" (products without data-product).
func coreweaveSlug(name string) string {
	return strings.ToLower(strings.Join(strings.Fields(name), "-"))
}

func coreweaveMissingHeaders(have []string) []string {
	var missing []string
	for _, want := range coreweaveHeaders {
		found := false
		for _, h := range have {
			if strings.Contains(strings.ToLower(h), strings.ToLower(want)) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, want)
		}
	}
	return missing
}

var coreweaveCountRe = regexp.MustCompile(`^(\d+)`)

// coreweaveRowOffers turns one GPU row into its on-demand and spot offers (none when neither is
// priced).
func coreweaveRowOffers(row *goquery.Selection, region string, run schema.Run, sourceURL string) ([]schema.Offer, error) {
	h3 := row.Find("h3.table-model-name").First()
	name := normalizeSpace(h3.Text())
	product := normalizeSpace(h3.AttrOr("data-product", ""))
	where := fmt.Sprintf("region %s: row %q", region, clip(name, 60))
	if h3.Length() == 0 || name == "" {
		return nil, fmt.Errorf("region %s: %w: row without <h3 class=\"table-model-name\">", region, ErrLayoutChanged)
	}
	if product == "" {
		product = coreweaveSlug(name)
	}
	product = clip(product, 100)

	// Labelled spec cells: <div class="table-meta-value">VALUE</div><div>LABEL</div>.
	specs := map[string]string{}
	row.Find(".table-meta-value").Each(func(_ int, v *goquery.Selection) {
		label := v.Next()
		if label.Length() == 0 || goquery.NodeName(label) != "div" {
			return
		}
		specs[strings.ToLower(normalizeSpace(label.Text()))] = coreweaveCellText(v)
	})
	countText, ok := specs["gpu count"]
	if !ok {
		return nil, fmt.Errorf("%s: %w: no labelled \"GPU Count\" cell", where, ErrLayoutChanged)
	}
	m := coreweaveCountRe.FindStringSubmatch(countText)
	if m == nil {
		return nil, fmt.Errorf("%s: GPU count %q is not a number", where, clip(countText, 40))
	}
	count, err := strconv.Atoi(m[1])
	if err != nil || count <= 0 || count > 1<<15 {
		return nil, fmt.Errorf("%s: GPU count %q is not a positive count", where, clip(countText, 40))
	}
	var vram float64
	if v, ok := specs["vram"]; ok && v != "" {
		if vram, err = parseNumber(v); err != nil {
			return nil, fmt.Errorf("%s: VRAM: %w", where, err)
		}
	}

	// Labelled prices: <span class="instance-price">On-Demand Price: <span class="item-value">$X</span>.
	type labelled struct {
		kind  schema.PriceType
		class string
	}
	var (
		found  int
		prices = map[schema.PriceType]decimal.Decimal{}
	)
	for _, p := range []labelled{{schema.OnDemand, "instance-price"}, {schema.Spot, "spot-price"}} {
		v := row.Find("span." + p.class + " span.item-value").First()
		if v.Length() == 0 {
			continue
		}
		found++
		d, offered, err := parseUSD(v.Text())
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", where, p.class, err)
		}
		if offered {
			prices[p.kind] = d // exact: priced rounds it once
		}
	}
	if found == 0 {
		return nil, fmt.Errorf("%s: %w: no labelled instance-price or spot-price span", where, ErrLayoutChanged)
	}
	if len(prices) == 0 {
		return nil, nil // "Contact sales", "N/A" or empty everywhere: not sold at a list price
	}

	base := schema.Offer{
		SourceURL:  sourceURL,
		Provider:   CoreWeaveName,
		OfferID:    product + "/" + region,
		Tier:       schema.TierDatacenter,
		Region:     region,
		GPUNameRaw: name,
		GPUCount:   uint16(count),
		VCPUs:      optNumber(specs["vcpus"], 1),
		RAMGB:      optNumber(specs["system ram"], gpus.GiB),
		DiskGB:     optNumber(specs["local storage (tb)"], tibToGB),
		Stock:      schema.StockUnknown,
		DQFlags:    []schema.DQFlag{},
	}
	run.Stamp(&base)
	match := applyGPU(&base, CoreWeaveName, name, vram)
	base.IntraNode, base.InterNode = coreweaveInterconnect(name, match, count)
	var out []schema.Offer
	for _, kind := range []schema.PriceType{schema.OnDemand, schema.Spot} {
		if price, ok := prices[kind]; ok {
			out = append(out, priced(base, kind, price))
		}
	}
	return out, nil
}

// coreweaveCellText is the text of a cell without footnote markers rendered as <sup> (so "4<sup>1</sup>"
// reads "4", not "41").
func coreweaveCellText(s *goquery.Selection) string {
	c := s.Clone()
	c.Find("sup").Remove()
	return normalizeSpace(c.Text())
}

var coreweaveRackRe = regexp.MustCompile(`(?i)\bNVL\d+\b`)

// coreweaveInterconnect infers the intra- and inter-node interconnect of a CoreWeave product
// from its name (see ParseCoreWeave).
func coreweaveInterconnect(name string, m gpus.Match, count int) (schema.IntraNode, schema.InterNode) {
	words := strings.Fields(strings.ToUpper(name))
	hgx := false
	for _, w := range words {
		if w == "HGX" || w == "DGX" {
			hgx = true
		}
	}
	switch {
	case coreweaveRackRe.MatchString(name):
		return schema.IntraNVSwitch, schema.InterInfiniBand
	case hgx:
		return schema.IntraNVSwitch, schema.InterInfiniBand
	case m.Known && m.Model.BoardFabric && count >= 2:
		return m.Model.BoardIntraNode(), schema.InterUnknown // the fabric the board carries (HGX A100: NVSwitch)
	case m.Known && m.Model.FormFactor == gpus.PCIe && !m.Model.Linkable():
		return schema.IntraPCIe, schema.InterUnknown
	}
	return schema.IntraUnknown, schema.InterUnknown
}

// CoreWeaveConfig configures the CoreWeave source. Zero fields take the defaults.
type CoreWeaveConfig struct {
	URL       string        // pricing page (default DefaultCoreWeaveURL); AllowedDomains derive from it
	UserAgent string        // default BrowserUserAgent: the host answers 403 to library user agents
	Timeout   time.Duration // bound on the whole fetch, retries included, within the run's ctx (default 2m)
	Delay     time.Duration // colly LimitRule delay after each request to the host (default 1s; negative = none)
}

// CoreWeave is the CoreWeave source: the public pricing page through colly (there is no pricing
// API), parsed by ParseCoreWeave.
type CoreWeave struct {
	client *Client
	page   pageFetch
	cfgErr error // an invalid URL, reported by Fetch
	logger *slog.Logger
}

// NewCoreWeave returns the CoreWeave source fetching through client. A nil logger discards. An
// invalid URL makes every Fetch fail with a clear error.
func NewCoreWeave(client *Client, cfg CoreWeaveConfig, logger *slog.Logger) *CoreWeave {
	p, err := newPageFetch(CoreWeaveName, cfg.URL, DefaultCoreWeaveURL, cfg.UserAgent, cfg.Timeout, cfg.Delay)
	if client == nil {
		err = errors.New("no HTTP client")
	}
	return &CoreWeave{client: client, page: p, cfgErr: err, logger: orDiscard(logger)}
}

// Name returns "coreweave".
func (c *CoreWeave) Name() string { return CoreWeaveName }

// ParserVersion names the parser of its offers (ParserVersion).
func (c *CoreWeave) ParserVersion() string { return ParserVersion(CoreWeaveName) }

// Fetch fetches the pricing page and parses it (see ParseCoreWeave). Rows that failed to parse
// are in Extract.Problems; a page whose layout changed is an error wrapping ErrLayoutChanged.
func (c *CoreWeave) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	if c.cfgErr != nil {
		return schema.Extract{}, sourceError(CoreWeaveName, c.cfgErr)
	}
	return c.page.offers(ctx, c.client, CoreWeaveName, run, ParseCoreWeave, c.logger)
}
