package scrapers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"regexp"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Oracle Cloud Infrastructure defaults (docs/providers.md §9.1). Both documents answer without
// credentials.
const (
	// OCIName is the provider name OCI offers are recorded under.
	OCIName = "oci"
	// DefaultOCIProductsURL is Oracle's public price list, in US dollars only (without
	// currencyCode the answer is about fifteen times larger and holds every currency).
	DefaultOCIProductsURL = "https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/?currencyCode=USD"
	// DefaultOCIShapesURL is the shapes catalog behind Oracle's Cost Estimator: each shape's
	// GPU count and memory, and the part numbers it is billed under.
	DefaultOCIShapesURL = "https://www.oracle.com/a/ocom/docs/cloudestimator2/data/shapes.json"
)

// OCIConfig configures the OCI source. Zero fields take the defaults.
type OCIConfig struct {
	ProductsURL string // default DefaultOCIProductsURL
	ShapesURL   string // default DefaultOCIShapesURL
}

// OCI is the Oracle Cloud source: the public price list joined with the estimator's shapes.
type OCI struct {
	cfg    OCIConfig
	client *Client
	logger *slog.Logger
}

// NewOCI returns the OCI source fetching through client. A nil logger discards.
func NewOCI(client *Client, cfg OCIConfig, logger *slog.Logger) *OCI {
	if cfg.ProductsURL == "" {
		cfg.ProductsURL = DefaultOCIProductsURL
	}
	if cfg.ShapesURL == "" {
		cfg.ShapesURL = DefaultOCIShapesURL
	}
	return &OCI{cfg: cfg, client: client, logger: orDiscard(logger)}
}

// Name returns "oci".
func (o *OCI) Name() string { return OCIName }

// ParserVersion names the parser of its offers (ParserVersion).
func (o *OCI) ParserVersion() string { return ParserVersion(OCIName) }

// Fetch gets the price list, then the shapes, and joins them (ParseOCI). Either failing fails
// the fetch: prices without their shapes say neither GPU count nor model, and shapes without
// prices say no price.
func (o *OCI) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	ctx, attempts := WithAttemptCounter(ctx)
	ctx = o.client.withBudget(ctx)
	var res schema.Extract
	var bodies [2][]byte
	var productsURL string
	for i, doc := range []struct{ what, url string }{{"the price list", o.cfg.ProductsURL}, {"the shapes", o.cfg.ShapesURL}} {
		resp, err := o.client.Do(ctx, Request{Source: OCIName, URL: doc.url, Header: http.Header{"Accept": {"application/json"}}})
		res.Attempts = attempts.Count()
		if resp != nil {
			res.Payloads = append(res.Payloads, resp.Payload())
		}
		if err != nil {
			return res, sourceError(OCIName, fmt.Errorf("fetching %s: %w", doc.what, err))
		}
		if !ociJSONType(resp.ContentType) {
			return res, sourceError(OCIName, fmt.Errorf("%w: %s: content type %q, want application/json", ErrLayoutChanged, doc.what, clipLine(resp.ContentType, 80)))
		}
		bodies[i] = resp.Body
		if i == 0 {
			productsURL = resp.URL
		}
	}
	offers, problems, err := ParseOCI(bodies[0], bodies[1], run, productsURL)
	if err == nil {
		err = sourceError(OCIName, o.client.offerCap(len(offers))) // http.max_source_offers
	}
	res.Offers, res.Problems = offers, problems
	if err != nil {
		return res, err
	}
	o.logger.Debug("OCI parsed", "offers", len(offers), "problems", len(problems))
	return res, nil
}

// ociJSONType accepts the content types a JSON document is served with; a static file host may
// call it text/plain or octet-stream. Anything else (an HTML login or error page) is refused.
func ociJSONType(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	switch mt {
	case "application/json", "text/json", "text/plain", "application/octet-stream":
		return true
	}
	return strings.HasSuffix(mt, "+json")
}

// ociMaxItems bounds the items of either document: the USD price list has about 630, the
// shapes catalog a few hundred.
const ociMaxItems = 50_000

// ociGPUMetric is the metric of a price-list item priced per GPU-hour.
const ociGPUMetric = "GPU Per Hour"

// ociPayAsYouGo is the price model of the on-demand price, the only one the list publishes.
const ociPayAsYouGo = "PAY_AS_YOU_GO"

// ParseOCI joins OCI's price list (products, the answer of DefaultOCIProductsURL) with the
// shapes catalog (shapes, of DefaultOCIShapesURL) into offers, sorted by shape: one on-demand
// offer per listed GPU shape (docs/providers.md §9.2–9.5).
//
//   - A GPU shape is a shape with a gpuQty above 0; shapes without one (CPU, dense I/O) are
//     skipped, and so are hidden shapes and those whose status is not ACTIVE. gpuQty is the GPU
//     count and must be a whole number. offer_id is the shape name without a trailing " (…)"
//     ("BM.GPU.GB200.4 (NVL72)" is BM.GPU.GB200.4); the raw GPU name is the name as listed,
//     resolved by the catalog's OCI shape rules (BM.GPU4 is the A100 40 GB, A100-v2 the 80 GB).
//   - The price: the shape's product whose type is "ocpu" names, for a GPU shape, its GPU part;
//     that part's USD PAY_AS_YOU_GO value in the price list is USD per GPU-hour (metricName
//     "GPU Per Hour", which is checked), and the shape's price is it times gpuQty, rounded once
//     (SetPricePerGPU). Parts are matched by partNumber, never by displayName, whose spelling
//     drifts; price-list items no shape bills under (NVIDIA AI Enterprise licences,
//     Cloud@Customer, VMware nodes, CPU and storage parts) make no offer.
//   - Spot: none. The list publishes only PAY_AS_YOU_GO. OCI's documentation sets preemptible
//     capacity at half the on-demand price where a shape's allowPreemptible is true, but that is
//     a rule of a documentation page, not a price in these documents, so no preemptible price is
//     recorded.
//   - VRAM: gpuMemoryQty is the shape's total for most shapes and per GPU for a few
//     (BM.GPU.MI355X.8, BM.GPU.GB300.4). It is read as the total divided by gpuQty in GB, then
//     in GiB (B300: 2100 for 8 is 262.5, 281.9 GB as GiB, the 288 GB part), then as a per-GPU
//     figure, the first that fits the shape's GPU; none fitting makes the GPU unknown with that
//     total's share. RAM is bundleMemoryQty (GB). vCPUs are not read: the "ocpu" product of a GPU
//     shape is the GPU part, so its qty does not say the cores.
//   - Interconnect: bare-metal (BM.) shapes of a GPU whose fabric comes on its board (HGX SXM
//     boards, NVL72 superchips: NVSwitch; AMD OAM boards: Infinity Fabric) have that fabric, PCIe
//     cards PCIe; a VM shape, a part of a host, says nothing of the board's links and is unknown
//     unless its GPUs are PCIe cards. Inter-node is unknown: neither document mentions cluster
//     networking.
//   - No region: OCI prices every commercial region the same and the documents name none, so
//     offers carry no region, and stock unknown (availability is not published).
//
// A shape that cannot be priced (its part missing from the list, another metric, no USD
// pay-as-you-go price, a price of 0 or less, a fractional or oversized gpuQty, listed twice) is
// a problem naming the shape and the field. The error is set when either body is not a whole
// document of its kind (ErrIncomplete when cut short, ErrLayoutChanged when it is something
// else), when nothing is priced (ErrNoOffers), or when a document has more than ociMaxItems
// items (ErrTooManyOffers). Errors and problems name the provider.
func ParseOCI(products, shapes []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	defer func() { problems, err = sourceErrors(OCIName, capProblems(problems)), sourceError(OCIName, err) }()
	parts, err := parseOCIPriceList(products)
	if err != nil {
		return nil, nil, fmt.Errorf("price list: %w", err)
	}
	list := &ociShapes{parts: parts, run: run, sourceURL: sourceURL, seen: map[string]bool{}}
	var doc struct {
		Items *ociShapes `json:"items"`
	}
	doc.Items = list
	if err := decodeJSON(shapes, "shapes", &doc); err != nil {
		return nil, nil, fmt.Errorf("shapes: %w", err)
	}
	switch {
	case doc.Items == nil || !list.found:
		return nil, nil, fmt.Errorf("shapes: %w: no items array", ErrLayoutChanged)
	case list.n > 0 && list.keyed == 0:
		return nil, nil, fmt.Errorf("shapes: %w: %d items, none with a name and products", ErrLayoutChanged, list.n)
	}
	offers, problems = list.offers, list.problems
	if len(offers) == 0 {
		return nil, problems, fmt.Errorf("%w: %d shapes, %d of them GPU shapes, none priced", ErrNoOffers, list.n, list.gpu)
	}
	sortOffers(offers)
	return offers, problems, nil
}

// ociPart is one price-list item as a shape reads it: the decoded item, or why it is not.
type ociPart struct {
	item ociItem
	err  error
	dup  bool // listed more than once, differently
}

// ociItem is one item of the price list (the fields read).
type ociItem struct {
	PartNumber                string `json:"partNumber"`
	DisplayName               string `json:"displayName"`
	MetricName                string `json:"metricName"`
	ServiceCategory           string `json:"serviceCategory"`
	CurrencyCodeLocalizations []struct {
		CurrencyCode string `json:"currencyCode"`
		Prices       []struct {
			Model string       `json:"model"`
			Value *exactNumber `json:"value"`
		} `json:"prices"`
	} `json:"currencyCodeLocalizations"`
}

// parseOCIPriceList decodes the price list into its items by part number. An item that does
// not decode is kept as an error of its part, a problem only for a shape billed under it.
func parseOCIPriceList(body []byte) (map[string]*ociPart, error) {
	items := &ociItems{parts: map[string]*ociPart{}}
	var doc struct {
		Items *ociItems `json:"items"`
	}
	doc.Items = items
	if err := decodeJSON(body, "price list", &doc); err != nil {
		return nil, err
	}
	switch {
	case doc.Items == nil || !items.found:
		return nil, fmt.Errorf("%w: no items array", ErrLayoutChanged)
	case items.n == 0:
		return nil, fmt.Errorf("%w: the list has no items", ErrNoOffers)
	case items.keyed == 0:
		return nil, fmt.Errorf("%w: %d items, none with partNumber and currencyCodeLocalizations", ErrLayoutChanged, items.n)
	}
	return items.parts, nil
}

// ociItems decodes the price list's items one at a time.
type ociItems struct {
	found    bool
	n, keyed int
	parts    map[string]*ociPart
}

func (t *ociItems) UnmarshalJSON(data []byte) error {
	t.found = true
	return eachElement(data, func(i int, raw []byte) error {
		if t.n++; t.n > ociMaxItems {
			return fmt.Errorf("%w: more than %d price-list items", ErrTooManyOffers, ociMaxItems)
		}
		var it ociItem
		err := json.Unmarshal(raw, &it)
		if err != nil {
			var id struct {
				PartNumber string `json:"partNumber"`
			}
			_ = json.Unmarshal(raw, &id) // the part the broken item is, if that much reads
			it.PartNumber = id.PartNumber
		}
		pn := strings.TrimSpace(it.PartNumber)
		if pn == "" {
			return nil // nothing refers to an item without a part number
		}
		if err == nil && it.CurrencyCodeLocalizations != nil {
			t.keyed++
		}
		p := &ociPart{item: it}
		if err != nil {
			p.err = ociDecodeError(err)
		}
		if prev, ok := t.parts[pn]; ok {
			// The same part twice: harmless when it says the same, a problem of its shapes when not.
			if prev.err != nil || p.err != nil || !ociSameItem(prev.item, it) {
				prev.dup = true
			}
			return nil
		}
		t.parts[pn] = p
		return nil
	})
}

// ociSameItem reports whether two items of one part carry the same metric and USD price.
func ociSameItem(a, b ociItem) bool {
	pa, errA := ociUSDPrice(a)
	pb, errB := ociUSDPrice(b)
	return errA == nil && errB == nil && pa.Equal(pb) && ociMetric(a.MetricName) == ociMetric(b.MetricName)
}

// ociMetric normalises a metric name for comparison: case and runs of white space.
func ociMetric(s string) string { return strings.ToLower(normalizeSpace(s)) }

// ociUSDPrice returns the item's USD pay-as-you-go value, exactly as written: an error when
// there is none, when two of them differ, or when it is not above 0.
func ociUSDPrice(it ociItem) (decimal.Decimal, error) {
	var price *decimal.Decimal
	usd := false
	for _, l := range it.CurrencyCodeLocalizations {
		if !strings.EqualFold(strings.TrimSpace(l.CurrencyCode), "USD") {
			continue
		}
		usd = true
		for _, p := range l.Prices {
			if !strings.EqualFold(strings.TrimSpace(p.Model), ociPayAsYouGo) {
				continue
			}
			if p.Value == nil {
				return decimal.Zero, errors.New("a PAY_AS_YOU_GO price without value")
			}
			if price != nil && !price.Equal(p.Value.Decimal) {
				return decimal.Zero, fmt.Errorf("two PAY_AS_YOU_GO prices, %s and %s", price, p.Value.Decimal)
			}
			price = &p.Value.Decimal
		}
	}
	switch {
	case !usd:
		return decimal.Zero, errors.New("no USD price")
	case price == nil:
		return decimal.Zero, errors.New("no PAY_AS_YOU_GO price in USD")
	case !price.IsPositive():
		return decimal.Zero, fmt.Errorf("price %s is not above 0", price)
	case price.GreaterThan(maxPrice):
		return decimal.Zero, fmt.Errorf("price %s is beyond any GPU-hour", price)
	}
	return *price, nil
}

// ociShape is one item of the shapes catalog (the fields read). Quantities other than the GPU
// count are not decoded as integers: the catalog writes fractions where one would expect
// whole numbers (a disk qty of 81.6).
type ociShape struct {
	Name            string   `json:"name"`
	Hidden          *bool    `json:"hidden"`
	Status          *string  `json:"status"`
	BundleMemoryQty *float64 `json:"bundleMemoryQty"`
	GPUQty          *float64 `json:"gpuQty"`
	GPUMemoryQty    *float64 `json:"gpuMemoryQty"`
	ShapeType       *struct {
		Value string `json:"value"`
	} `json:"shapeType"`
	Products []struct {
		PartNumber string `json:"partNumber"`
		Type       *struct {
			Value string `json:"value"`
		} `json:"type"`
	} `json:"products"`
}

// ociShapes decodes the shapes catalog's items one at a time into offers.
type ociShapes struct {
	parts     map[string]*ociPart
	run       schema.Run
	sourceURL string
	found     bool
	n, keyed  int // items; items with a name and products (the known layout)
	gpu       int // GPU shapes among them
	seen      map[string]bool
	offers    []schema.Offer
	problems  []error
}

func (t *ociShapes) UnmarshalJSON(data []byte) error {
	t.found = true
	return eachElement(data, func(i int, raw []byte) error {
		if t.n++; t.n > ociMaxItems {
			return fmt.Errorf("%w: more than %d shapes", ErrTooManyOffers, ociMaxItems)
		}
		var s ociShape
		if err := json.Unmarshal(raw, &s); err != nil {
			t.problems = append(t.problems, fmt.Errorf("shape #%d: %w", i, ociDecodeError(err)))
			return nil
		}
		if s.Name != "" && s.Products != nil {
			t.keyed++
		}
		if s.GPUQty == nil || *s.GPUQty == 0 {
			return nil // not a GPU shape
		}
		t.gpu++
		o, err := t.offer(i, s)
		if err != nil {
			t.problems = append(t.problems, err)
			return nil
		}
		if o != nil {
			t.offers = append(t.offers, *o)
		}
		return nil
	})
}

// ociSuffix is the remark a shape name may carry after it: "BM.GPU.GB200.4 (NVL72)".
var ociSuffix = regexp.MustCompile(`\s*\([^()]*\)\s*$`)

// offer prices one GPU shape; nil without an error for a shape not on offer (hidden, inactive).
func (t *ociShapes) offer(i int, s ociShape) (*schema.Offer, error) {
	raw := clip(normalizeSpace(s.Name), 100)
	id := strings.TrimSpace(ociSuffix.ReplaceAllString(raw, ""))
	if id == "" {
		return nil, fmt.Errorf("GPU shape #%d: no name", i)
	}
	where := fmt.Sprintf("shape %q", clip(id, 60))
	if (s.Hidden != nil && *s.Hidden) || (s.Status != nil && !strings.EqualFold(strings.TrimSpace(*s.Status), "ACTIVE")) {
		return nil, nil // not listed in the estimator
	}
	if t.seen[id] {
		return nil, fmt.Errorf("%s: listed twice", where)
	}
	t.seen[id] = true
	q := *s.GPUQty
	if q < 0 || q != math.Trunc(q) || q > 1<<15 {
		return nil, fmt.Errorf("%s: gpuQty %v is not a GPU count", where, q)
	}
	count := int(q)

	var part string
	for _, p := range s.Products {
		if p.Type == nil || !strings.EqualFold(strings.TrimSpace(p.Type.Value), "ocpu") {
			continue
		}
		pn := strings.TrimSpace(p.PartNumber)
		if part != "" && pn != part {
			return nil, fmt.Errorf("%s: products: two ocpu parts, %s and %s", where, clip(part, 20), clip(pn, 20))
		}
		part = pn
	}
	if part == "" {
		return nil, fmt.Errorf("%s: products: no ocpu part, the part its GPUs are billed under", where)
	}
	where = fmt.Sprintf("%s: part %s", where, clip(part, 20))
	p, ok := t.parts[part]
	switch {
	case !ok:
		return nil, fmt.Errorf("%s: not in the price list", where)
	case p.err != nil:
		return nil, fmt.Errorf("%s: price-list item: %w", where, p.err)
	case p.dup:
		return nil, fmt.Errorf("%s: listed twice in the price list, differently", where)
	case ociMetric(p.item.MetricName) != ociMetric(ociGPUMetric):
		return nil, fmt.Errorf("%s: metricName %q, want %q", where, clip(p.item.MetricName, 40), ociGPUMetric)
	}
	price, err := ociUSDPrice(p.item)
	if err != nil {
		return nil, fmt.Errorf("%s: currencyCodeLocalizations: %w", where, err)
	}

	o := schema.Offer{
		SourceURL: t.sourceURL,
		Provider:  OCIName,
		OfferID:   clip(id, 100),
		Tier:      schema.TierDatacenter,
		GPUCount:  uint16(count),
		InterNode: schema.InterUnknown,
		Stock:     schema.StockUnknown,
		DQFlags:   []schema.DQFlag{},
	}
	if positive(s.BundleMemoryQty) {
		o.RAMGB = ptr(*s.BundleMemoryQty)
	}
	t.run.Stamp(&o)
	vram, m := ociResolve(raw, s.GPUMemoryQty, count)
	setGPU(&o, raw, vram, m)
	o.IntraNode = ociIntraNode(m, strings.HasPrefix(strings.ToUpper(id), "BM."))
	o = pricedPerGPU(o, schema.OnDemand, price)
	return &o, nil
}

// ociResolve resolves a shape's GPU with the VRAM per GPU its gpuMemoryQty stands for: the
// total divided by the count, as GB, then as GiB, then the figure itself as per GPU (the few
// shapes that report it so), the first that fits the shape's GPU. When none fits, the GPU is
// unknown, with the total's share as its VRAM.
func ociResolve(raw string, memory *float64, count int) (float64, gpus.Match) {
	if !positive(memory) {
		return 0, gpus.Resolve(OCIName, raw, 0)
	}
	share := round(*memory/float64(count), 2)
	for _, v := range []float64{share, share * gpus.GiB, *memory} {
		if m := gpus.Resolve(OCIName, raw, v); m.Known {
			return v, m
		}
	}
	return share, gpus.Resolve(OCIName, raw, share)
}

// ociIntraNode is the GPU-to-GPU link inside a shape, as far as the documents prove it. A
// bare-metal shape is the whole host: a GPU whose fabric comes with it (HGX SXM boards, NVL72
// superchips, AMD OAM boards) has that fabric, a PCIe card PCIe. A VM shape is part of a host:
// PCIe cards are PCIe, and what a VM of board-fabric GPUs gets of the board is not said.
func ociIntraNode(m gpus.Match, bareMetal bool) schema.IntraNode {
	switch {
	case !m.Known:
		return schema.IntraUnknown
	case m.Model.FormFactor == gpus.PCIe || m.Model.FormFactor == gpus.Consumer:
		return intraFromForm(m)
	case bareMetal:
		return intraFromForm(m)
	}
	return schema.IntraUnknown
}

// ociDecodeError is a decoding error of one item, clipped: a hostile item does not make a long
// problem.
func ociDecodeError(err error) error { return fmt.Errorf("decoding: %s", clipLine(err.Error(), 200)) }

// ociIsShapes reports whether a stored OCI payload is the shapes catalog rather than the price
// list: only shapes carry a gpuQty.
func ociIsShapes(body []byte) bool { return bytes.Contains(body, []byte(`"gpuQty"`)) }

// parseOCIStored re-derives a stored OCI run: its last price list and last shapes catalog
// answered with a 2xx status, joined as the source joins them.
func parseOCIStored(payloads []schema.RawPayload, run schema.Run) ([]schema.Offer, []error, error) {
	var products, shapes *schema.RawPayload
	for i := range payloads {
		p := &payloads[i]
		if p.Status < 200 || p.Status > 299 {
			continue
		}
		if ociIsShapes(p.Body) {
			shapes = p
		} else {
			products = p
		}
	}
	switch {
	case products == nil:
		return nil, nil, sourceError(OCIName, fmt.Errorf("%w: no stored price list", ErrNoOffers))
	case shapes == nil:
		return nil, nil, sourceError(OCIName, fmt.Errorf("%w: no stored shapes catalog", ErrNoOffers))
	}
	return ParseOCI(products.Body, shapes.Body, run, products.URL)
}
