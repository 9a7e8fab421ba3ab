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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Lambda defaults (docs/providers.md §3.2, §3.6).
const (
	// LambdaName is the provider name Lambda offers are recorded under.
	LambdaName = "lambda"
	// DefaultLambdaAPIURL is the instance-types endpoint of the Lambda Cloud API.
	DefaultLambdaAPIURL = "https://cloud.lambda.ai/api/v1/instance-types"
	// DefaultLambdaPageURL is Lambda's public pricing page, used when no API key is set.
	DefaultLambdaPageURL = "https://lambda.ai/pricing"
)

// ParseLambda parses a response of the Lambda Cloud API's GET /api/v1/instance-types into offers:
// on-demand offers of every GPU instance type, one per region with capacity, sorted by offer id.
//
// Units (docs/providers.md §3.3–3.4, §5): price_cents_per_hour is US cents per instance, so
// the offer price is cents/100 and the per-GPU price that divided by specs.gpus. The GPU count
// is specs.gpus; records in the older 1.5.3 format have no specs.gpus and carry the price as a
// numeric string, so the count then comes from the description ("8x …") or the name
// ("gpu_8x_…") and the offer is flagged schema.FlagCountParsed. VRAM per GPU comes only from the
// description text ("(80 GB SXM5)"), and the form factor from its suffix. memory_gib and
// storage_gib are GiB and are recorded as decimal GB.
//
// Regions: regions_with_capacity_available names the regions where the type can be launched
// right now, at the one price Lambda charges everywhere. Each of them gets an offer of its own,
// with Region the region's name and offer id "<instance type>/<region>" (the identity,
// schema.Key, has no region, so one id per region keeps them apart), and Stock
// schema.StockUnknown: available, the amount not published. A type with capacity nowhere (an
// empty list, often) is still priced: one offer with the instance type as its id, an empty
// Region and Stock schema.StockNone. Country is left empty: the API names no country code, and
// schema derives the continent from the region name (Offer.Continent). A region entry whose
// name is empty or not a region id is a problem and left out; a region listed twice counts once.
//
// CPU-only types (no GPU) are skipped. A GPU record that cannot be priced is left out and
// reported in problems, and so is a second record under the same key or offer id; the returned
// error is set only when the body as a whole is unusable (cut short: ErrIncomplete; not JSON,
// trailing data, an API error object or no data: ErrLayoutChanged; no GPU offer at all:
// ErrNoOffers; more than MaxOffers instance types or offers).
func ParseLambda(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	defer func() { problems, err = sourceErrors(LambdaName, capProblems(problems)), sourceError(LambdaName, err) }()
	types := &lambdaTypes{run: run, sourceURL: sourceURL, seen: map[string]bool{}}
	resp := lambdaResponse{Data: types}
	if err := decodeJSON(body, "instance types", &resp); err != nil {
		return nil, nil, err
	}
	if resp.Error != nil && (resp.Error.Code != "" || resp.Error.Message != "") {
		return nil, nil, fmt.Errorf("api error %q: %s", clip(resp.Error.Code, 80), clip(resp.Error.Message, 200))
	}
	if resp.Data == nil || !types.found {
		return nil, nil, fmt.Errorf("%w: no \"data\" object in the instance types response", ErrLayoutChanged)
	}
	// The data object is a map: its order is not stable, so records are taken in key order.
	slices.SortStableFunc(types.records, func(a, b lambdaRecord) int { return strings.Compare(a.key, b.key) })
	ids := map[string]bool{}
	for _, r := range types.records {
		problems = append(problems, r.problems...)
		for _, o := range r.offers {
			if ids[o.OfferID] {
				problems = append(problems, fmt.Errorf("offer id %q: listed twice", clip(o.OfferID, 80)))
				continue
			}
			ids[o.OfferID] = true
			offers = append(offers, o)
		}
	}
	sortOffers(offers) // by offer id: a type's regions together, in name order
	if len(offers) == 0 {
		return nil, problems, fmt.Errorf("%w: %d instance types, no priced GPU instance type", ErrNoOffers, types.n)
	}
	return offers, problems, nil
}

// lambdaResponse is the body of GET /api/v1/instance-types (lambda-spec 1.10.0), or an error.
type lambdaResponse struct {
	Data  *lambdaTypes `json:"data"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// lambdaTypes decodes the data object one instance type at a time.
type lambdaTypes struct {
	run       schema.Run
	sourceURL string
	found     bool
	n         int // members
	offers    int // offers in records
	seen      map[string]bool
	records   []lambdaRecord // the offers and problems of each member, CPU-only types left out
}

type lambdaRecord struct {
	key      string
	offers   []schema.Offer // one per region with capacity, or one without a region
	problems []error
}

func (t *lambdaTypes) UnmarshalJSON(data []byte) error {
	t.found = true
	return eachMember(data, func(key string, raw []byte) error {
		if t.n++; t.n > MaxOffers {
			return fmt.Errorf("%w: more than %d instance types", ErrTooManyOffers, MaxOffers)
		}
		if t.seen[key] {
			t.records = append(t.records, lambdaRecord{key: key, problems: []error{fmt.Errorf("instance type %q: listed twice", clip(key, 60))}})
			return nil
		}
		t.seen[key] = true
		var it lambdaItem
		if err := json.Unmarshal(raw, &it); err != nil {
			return fmt.Errorf("%w: instance type %q: %w", ErrLayoutChanged, clip(key, 60), err)
		}
		o, ok, err := lambdaOffer(key, it, t.run, t.sourceURL)
		switch {
		case err != nil:
			t.records = append(t.records, lambdaRecord{key: key, problems: []error{err}})
		case ok:
			offers, problems := lambdaRegionOffers(o, it.Regions)
			if t.offers += len(offers); t.offers > MaxOffers {
				return fmt.Errorf("%w: more than %d offers", ErrTooManyOffers, MaxOffers)
			}
			t.records = append(t.records, lambdaRecord{key: key, offers: offers, problems: problems})
		}
		return nil
	})
}

type lambdaItem struct {
	InstanceType *struct {
		Name           string          `json:"name"`
		Description    string          `json:"description"`
		GPUDescription string          `json:"gpu_description"`
		PriceCents     json.RawMessage `json:"price_cents_per_hour"` // integer; a numeric string in spec 1.5.3
		Specs          struct {
			// Numbers are decoded per record (lambdaNumber), so one malformed record is a
			// problem of its own, not a failure of the whole response.
			VCPUs      json.RawMessage `json:"vcpus"`
			MemoryGiB  json.RawMessage `json:"memory_gib"`
			StorageGiB json.RawMessage `json:"storage_gib"`
			GPUs       json.RawMessage `json:"gpus"` // absent in spec 1.5.3
		} `json:"specs"`
	} `json:"instance_type"`
	Regions []lambdaRegion `json:"regions_with_capacity_available"`
}

// lambdaRegion is an entry of regions_with_capacity_available: {"name": "us-east-1",
// "description": "Virginia, USA"}.
type lambdaRegion struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

var (
	lambdaCountRe   = regexp.MustCompile(`^\s*(\d+)\s*x\s`)        // "8x H100 (80 GB SXM5)"
	lambdaNameRe    = regexp.MustCompile(`^gpu_(\d+)x_`)           // "gpu_8x_h100_sxm5"
	lambdaMemRe     = regexp.MustCompile(`\((\d+(?:\.\d+)?)\s*GB`) // "(80 GB SXM5)"
	lambdaFormRe    = regexp.MustCompile(`(?i)\b(SXM\d*|PCIe)\b`)
	lambdaCPUOnlyRe = regexp.MustCompile(`(?i)\bCPU\b`)
)

// lambdaOffer turns one instance type into its offer, before regions (lambdaRegionOffers): id
// the instance type, no region, Stock unknown. ok is false for CPU-only types.
func lambdaOffer(key string, it lambdaItem, run schema.Run, sourceURL string) (o schema.Offer, ok bool, err error) {
	t := it.InstanceType
	if t == nil {
		return o, false, fmt.Errorf("instance type %q: no instance_type object", clip(key, 60))
	}
	id := strings.TrimSpace(t.Name)
	if id == "" {
		id = strings.TrimSpace(key)
	}
	if id == "" {
		return o, false, errors.New("an instance type with neither a name nor a key")
	}
	where := clip(id, 60) // for messages: the id is untrusted text
	desc := strings.TrimSpace(t.Description)
	gpuDesc := strings.TrimSpace(t.GPUDescription)

	flags := []schema.DQFlag{}
	count := -1
	if gpusN, present, err := lambdaNumber(t.Specs.GPUs); err != nil {
		return o, false, fmt.Errorf("instance type %q: specs.gpus: %w", where, err)
	} else if present {
		if !gpusN.IsInteger() || gpusN.IsNegative() || gpusN.GreaterThan(decimal.NewFromInt(1<<15)) {
			return o, false, fmt.Errorf("instance type %q: specs.gpus %s is not a GPU count", where, gpusN)
		}
		count = int(gpusN.IntPart())
	}
	if count == 0 || (count < 0 && gpuDesc == "" && lambdaCPUOnlyRe.MatchString(desc)) {
		return o, false, nil // a CPU-only instance type
	}
	if count < 0 {
		if m := lambdaCountRe.FindStringSubmatch(desc); m != nil {
			count, _ = strconv.Atoi(m[1])
		} else if m := lambdaNameRe.FindStringSubmatch(id); m != nil {
			count, _ = strconv.Atoi(m[1])
		}
		if count <= 0 {
			return o, false, fmt.Errorf("instance type %q: no GPU count in specs, description or name", where)
		}
		flags = append(flags, schema.FlagCountParsed)
	}
	if count > 1<<15 {
		return o, false, fmt.Errorf("instance type %q: implausible GPU count %d", where, count)
	}

	cents, present, err := lambdaNumber(t.PriceCents)
	switch {
	case err != nil:
		return o, false, fmt.Errorf("instance type %q: price_cents_per_hour: %w", where, err)
	case !present:
		return o, false, fmt.Errorf("instance type %q: no price_cents_per_hour", where)
	case !cents.IsPositive():
		return o, false, fmt.Errorf("instance type %q: price_cents_per_hour %s is not positive", where, cents)
	}

	raw := gpuDesc
	if raw == "" {
		raw = desc
	}
	var vram float64
	if m := lambdaMemRe.FindStringSubmatch(raw); m != nil {
		vram, _ = strconv.ParseFloat(m[1], 64)
	} else if m := lambdaMemRe.FindStringSubmatch(desc); m != nil {
		vram, _ = strconv.ParseFloat(m[1], 64)
	}
	form := ""
	if m := lambdaFormRe.FindStringSubmatch(raw); m != nil {
		form = strings.ToLower(m[1])
	} else if m := lambdaFormRe.FindStringSubmatch(strings.ReplaceAll(id, "_", " ")); m != nil {
		form = strings.ToLower(m[1])
	}

	o = schema.Offer{
		SourceURL:  sourceURL,
		Provider:   LambdaName,
		OfferID:    id,
		Tier:       schema.TierDatacenter,
		GPUNameRaw: raw,
		GPUCount:   uint16(count),
		VCPUs:      lambdaSpec(t.Specs.VCPUs, 1),
		RAMGB:      lambdaSpec(t.Specs.MemoryGiB, gpus.GiB),
		DiskGB:     lambdaSpec(t.Specs.StorageGiB, gpus.GiB),
		PriceType:  schema.OnDemand,
		InterNode:  schema.InterUnknown,
		Stock:      schema.StockUnknown,
		DQFlags:    flags,
	}
	run.Stamp(&o)
	o.SetPrice(cents.Shift(-2)) // cents per instance, exact
	// The instance type name can carry what the description lacks (gpu_8x_a100_80gb_sxm4).
	match := applyGPU(&o, LambdaName, raw, vram, id)
	o.IntraNode = lambdaIntraNode(form, match, count)
	return o, true, nil
}

// lambdaRegionRe is what a region name looks like ("us-east-1", "europe-central-1", the 1.5.3
// examples' "us-tx-1"); anything else is kept out of offer ids and the region column.
var lambdaRegionRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// lambdaRegionOffers returns o once per region of its regions_with_capacity_available, in the
// order of region names: id "<instance type>/<region>", Region the region's name, Stock unknown
// (available, amount not published). Without capacity anywhere it is o alone, with Stock none.
// An entry without a usable name is a problem; if no entry has one, o is returned alone with
// its Stock unknown (capacity somewhere, but not where).
func lambdaRegionOffers(o schema.Offer, regions []lambdaRegion) (offers []schema.Offer, problems []error) {
	if len(regions) == 0 {
		o.Stock = schema.StockNone
		return []schema.Offer{o}, nil
	}
	var names []string
	for _, r := range regions {
		name := strings.TrimSpace(r.Name)
		switch {
		case name == "":
			problems = append(problems, fmt.Errorf("instance type %q: a region with capacity has no name", clip(o.OfferID, 60)))
		case !lambdaRegionRe.MatchString(name):
			problems = append(problems, fmt.Errorf("instance type %q: region %q is not a region name", clip(o.OfferID, 60), clip(name, 40)))
		case !slices.Contains(names, name):
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return []schema.Offer{o}, problems
	}
	slices.Sort(names)
	for _, name := range names {
		ro := o
		ro.OfferID = o.OfferID + "/" + name
		ro.Region = name
		ro.DQFlags = slices.Clone(o.DQFlags) // each offer its own flags
		offers = append(offers, ro)
	}
	return offers, problems
}

// lambdaIntraNode infers the GPU-to-GPU link inside a Lambda instance. Lambda's SXM instance
// types (SXM4/5/6, any count) are whole or partial HGX boards, whose GPUs are linked through
// NVSwitch; "PCIe" in the description means PCIe only. Without a form in the text, a catalog
// PCIe card without NVLink is PCIe only, and anything else is unknown (an NVLink bridge may or
// may not be fitted). Lambda publishes nothing about the network between instances, so their
// inter-node class is left unknown; a 1-Click Cluster's is InfiniBand (lambdaClusterOffer).
func lambdaIntraNode(form string, m gpus.Match, count int) schema.IntraNode {
	switch {
	case strings.HasPrefix(form, "sxm"):
		return schema.IntraNVSwitch
	case form == "pcie":
		return schema.IntraPCIe
	case m.Known && m.Model.FormFactor == gpus.PCIe && (!m.Model.Linkable() || count == 1):
		return schema.IntraPCIe
	}
	return schema.IntraUnknown
}

var lambdaNumberRe = regexp.MustCompile(`^\d{1,12}(\.\d{1,12})?$`)

// lambdaNumber decodes an optional JSON number that may also come as a numeric string ("80", as
// in spec 1.5.3). present is false for an absent or null value. Only plain non-negative decimals
// are accepted: no exponents (1e999999 would make the decimal arithmetic explode), at most 12
// digits either side of the point.
func lambdaNumber(raw json.RawMessage) (d decimal.Decimal, present bool, err error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return decimal.Zero, false, nil
	}
	if strings.HasPrefix(s, `"`) {
		if err := json.Unmarshal(raw, &s); err != nil {
			return decimal.Zero, true, fmt.Errorf("%q is not a number", clip(string(raw), 40))
		}
		s = strings.TrimSpace(s)
	}
	if !lambdaNumberRe.MatchString(s) {
		if strings.HasPrefix(s, "-") && lambdaNumberRe.MatchString(s[1:]) {
			d, _ = decimal.NewFromString(s)
			return d, true, nil // negative: the caller says why that is wrong
		}
		return decimal.Zero, true, fmt.Errorf("%q is not a number", clip(s, 40))
	}
	d, err = decimal.NewFromString(s)
	if err != nil {
		return decimal.Zero, true, fmt.Errorf("%q: %w", clip(s, 40), err)
	}
	return d, true, nil
}

// lambdaSpec converts an optional spec number, scaled by f, to a pointer rounded to two
// decimals; nil when absent, malformed or negative (specs are informative, not worth dropping
// an offer for).
func lambdaSpec(raw json.RawMessage, f float64) *float64 {
	d, present, err := lambdaNumber(raw)
	if !present || err != nil || d.IsNegative() {
		return nil
	}
	v, _ := d.Float64()
	return ptr(round(v*f, 2))
}

// ParseLambdaPage parses Lambda's public pricing page (https://lambda.ai/pricing,
// docs/providers.md §3.6) into offers of two kinds.
//
// On-demand offers: one per row of the instance tables, which come after the "Instances
// pricing" heading, one tab per GPU count (8x, 4x, 2x, 1x) whose tabpanel holds rows
// <tr data-plan="NVIDIA B200 SXM6"> with <td data-label="…"> cells. The page prices per GPU
// (PRICE/GPU/HR*, before sales tax), so the offer price is that times the tab's GPU count. RAM
// and STORAGE are GiB/TiB and are recorded as decimal GB. The offer id is
// "<count>x <data-plan> (<VRAM/GPU>)", e.g. "8x NVIDIA B200 SXM6 (180 GB)": the page carries no
// instance type name, and guessing the API's would silently merge two sources.
//
// Committed offers: one per priced row of the 1-Click Cluster tables (lambdaClusterOffer),
// whose cells are DURATION, GPU COUNT and PRICE/GPU/HR*, e.g. 1 week – 3 months, 16 – 2048 GPUs,
// $4.99 per GPU-hour for B200. The offer is the smallest cluster sold, GPU COUNT's lower bound,
// priced at the per-GPU price times that count; its price type is the commitment DURATION says
// (lambdaTerm: reserved, or term_1y / term_3y for a fixed year or three), never on-demand; the
// id is "1-Click Cluster <count>x <data-plan> (<duration>)". The tables give no VRAM or host
// figures, so VRAM is the catalog's (flagged vram_missing). A 1-Click Cluster is Lambda's
// multi-node product: HGX nodes (intra-node from the form in data-plan, as for instances)
// joined by InfiniBand, so the inter-node class is InfiniBand.
//
// The unicode-escaped copies of the tables inside window.__islands scripts are not read, and
// neither are hash-suffixed class names. An unpriced cell ("—") means the size is not sold.
//
// The page must be whole (checkPage: it ends with </html>, its tables are closed) before it is
// read, else the error wraps ErrIncomplete: a cut page would otherwise lose its last tabs'
// rows. A page without the instances heading, the tabs, a tab panel without rows, or no priced
// row at all is a layout change and returns an error wrapping ErrLayoutChanged, never an empty
// success. The cluster tables are a part of their own: when they cannot be read (rows without
// their heading, a heading without rows) that is a problem next to the instance offers.
func ParseLambdaPage(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	defer func() { problems, err = sourceErrors(LambdaName, capProblems(problems)), sourceError(LambdaName, err) }()
	if err := checkPage(body); err != nil {
		return nil, nil, fmt.Errorf("pricing page: %w", err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("pricing page: parse html: %w", err)
	}
	// Walk headings and tabs in document order: the instance tabs are those after the instances
	// heading, up to a 1-Click Clusters heading if one follows.
	var (
		anchors, clusterHeadings int
		inInstances              bool
		tabs                     []*goquery.Selection
	)
	doc.Find("h2, button[role=tab]").Each(func(_ int, s *goquery.Selection) {
		if goquery.NodeName(s) == "h2" {
			switch text := normalizeSpace(s.Text()); {
			case strings.EqualFold(text, "Instances pricing"):
				anchors++
				inInstances = true
			case lambdaClustersRe.MatchString(text):
				clusterHeadings++
				inInstances = false
			}
			return
		}
		if inInstances {
			tabs = append(tabs, s)
		}
	})
	switch {
	case anchors == 0:
		return nil, nil, fmt.Errorf("pricing page: %w: no \"Instances pricing\" heading", ErrLayoutChanged)
	case anchors > 1:
		return nil, nil, fmt.Errorf("pricing page: %w: %d \"Instances pricing\" headings", ErrLayoutChanged, anchors)
	case len(tabs) == 0:
		return nil, nil, fmt.Errorf("pricing page: %w: no GPU-count tabs after \"Instances pricing\"", ErrLayoutChanged)
	}

	rows, unpriced := 0, 0
	seen := map[string]bool{}
	add := func(o schema.Offer, ok bool, err error) {
		rows++
		switch {
		case err != nil:
			problems = append(problems, err)
		case !ok:
			unpriced++
		case seen[o.OfferID]:
			problems = append(problems, fmt.Errorf("pricing page: duplicate row %q", clip(o.OfferID, 80)))
		default:
			seen[o.OfferID] = true
			offers = append(offers, o)
		}
	}
	labels := map[string]bool{}
	var panels []*goquery.Selection // the instance tabs' panels
	for _, tab := range tabs {
		label := normalizeSpace(tab.Text())
		m := lambdaTabRe.FindStringSubmatch(label)
		if m == nil {
			return nil, nil, fmt.Errorf("pricing page: %w: tab %q is not a GPU count like \"8x\"", ErrLayoutChanged, clip(label, 40))
		}
		count, err := strconv.Atoi(m[1])
		if err != nil || count <= 0 || count > 1<<15 {
			return nil, nil, fmt.Errorf("pricing page: %w: tab %q is not a GPU count like \"8x\"", ErrLayoutChanged, clip(label, 40))
		}
		panelID, _ := tab.Attr("aria-controls")
		panel := doc.Find("[role=tabpanel]").FilterFunction(func(_ int, s *goquery.Selection) bool {
			id, _ := s.Attr("id")
			return panelID != "" && id == panelID
		})
		if panel.Length() != 1 {
			return nil, nil, fmt.Errorf("pricing page: %w: tab %q controls no single tabpanel (id %q)", ErrLayoutChanged, clip(label, 40), clip(panelID, 40))
		}
		if labels[label] {
			return nil, nil, fmt.Errorf("pricing page: %w: tab %q twice", ErrLayoutChanged, clip(label, 40))
		}
		labels[label] = true
		panels = append(panels, panel)
		trs := panel.Find("tr[data-plan]")
		if trs.Length() == 0 {
			return nil, nil, fmt.Errorf("pricing page: %w: the panel of tab %q has no <tr data-plan> rows", ErrLayoutChanged, clip(label, 40))
		}
		trs.Each(func(_ int, tr *goquery.Selection) {
			add(lambdaPageOffer(tr, lambdaCells(tr), count, run, sourceURL))
		})
	}

	// The cluster rows: rows with a DURATION cell, wherever they are outside the instance panels.
	var clusterRows []*goquery.Selection
	doc.Find("tr[data-plan]").Each(func(_ int, tr *goquery.Selection) {
		if _, term := lambdaCells(tr)["DURATION"]; !term {
			return
		}
		for _, p := range panels {
			if p.Contains(tr.Get(0)) {
				return // lambdaPageOffer reported it
			}
		}
		clusterRows = append(clusterRows, tr)
	})
	switch {
	case clusterHeadings == 0 && len(clusterRows) > 0:
		problems = append(problems, fmt.Errorf("pricing page: %w: %d rows with a DURATION cell but no \"1-Click Clusters\" heading: not read", ErrLayoutChanged, len(clusterRows)))
	case clusterHeadings > 0 && len(clusterRows) == 0:
		problems = append(problems, fmt.Errorf("pricing page: %w: a \"1-Click Clusters\" heading but no <tr data-plan> row with a DURATION cell", ErrLayoutChanged))
	default:
		for _, tr := range clusterRows {
			add(lambdaClusterOffer(tr, lambdaCells(tr), run, sourceURL))
		}
	}

	if err := offerCap(len(offers), MaxOffers); err != nil {
		return nil, nil, fmt.Errorf("pricing page: %w", err)
	}
	if len(offers) == 0 {
		return nil, problems, fmt.Errorf("pricing page: %w: %d rows (%d unpriced), no priced offer", ErrNoOffers, rows, unpriced)
	}
	sortOffers(offers) // one offer per id (seen): by offer id
	return offers, problems, nil
}

var (
	lambdaTabRe      = regexp.MustCompile(`^(\d+)\s*[xX×]$`)
	lambdaClustersRe = regexp.MustCompile(`(?i)\b1[-‑]?\s*Click\s+Clusters?\b`)
)

// lambdaCells maps a row's cells by their data-label, upper case, a trailing "*" dropped
// ("PRICE/GPU/HR*" is PRICE/GPU/HR), to their text.
func lambdaCells(tr *goquery.Selection) map[string]string {
	cells := map[string]string{}
	tr.Find("td[data-label]").Each(func(_ int, td *goquery.Selection) {
		l, _ := td.Attr("data-label")
		cells[strings.ToUpper(strings.TrimRight(normalizeSpace(l), "*"))] = normalizeSpace(td.Text())
	})
	return cells
}

// lambdaPageOffer turns one instance row into an on-demand offer; ok is false for an unpriced
// row.
func lambdaPageOffer(tr *goquery.Selection, cells map[string]string, count int, run schema.Run, sourceURL string) (o schema.Offer, ok bool, err error) {
	plan, _ := tr.Attr("data-plan")
	plan = normalizeSpace(plan)
	where := fmt.Sprintf("pricing page: %dx %q", count, clip(plan, 60))
	if plan == "" {
		return o, false, fmt.Errorf("%s: empty data-plan", where)
	}
	if _, term := cells["DURATION"]; term {
		// A committed price among the on-demand ones: never recorded as on-demand.
		return o, false, fmt.Errorf("%s: %w: a row with a DURATION cell in an instance tab", where, ErrLayoutChanged)
	}
	perGPU, offered, err := lambdaPagePrice(cells, where)
	if err != nil || !offered {
		return o, false, err
	}
	vramText := cells["VRAM/GPU"]
	vram, _, err := parseSize(vramText)
	if err != nil {
		return o, false, fmt.Errorf("%s: VRAM/GPU: %w", where, err)
	}
	form := ""
	if m := lambdaFormRe.FindStringSubmatch(plan); m != nil {
		form = strings.ToLower(m[1])
	}
	id := fmt.Sprintf("%dx %s", count, plan)
	if vramText != "" {
		id += " (" + vramText + ")"
	}
	o = schema.Offer{
		SourceURL:  sourceURL,
		Provider:   LambdaName,
		OfferID:    id,
		Tier:       schema.TierDatacenter,
		GPUNameRaw: plan,
		GPUCount:   uint16(count),
		VCPUs:      optNumber(cells["VCPUS"], 1),
		RAMGB:      optSize(cells["RAM"]),
		DiskGB:     optSize(cells["STORAGE"]),
		PriceType:  schema.OnDemand,
		InterNode:  schema.InterUnknown,
		Stock:      schema.StockUnknown,
		DQFlags:    []schema.DQFlag{},
	}
	run.Stamp(&o)
	o.SetPricePerGPU(perGPU) // the page prices per GPU
	match := applyGPU(&o, LambdaName, plan, vram)
	o.IntraNode = lambdaIntraNode(form, match, count)
	return o, true, nil
}

// lambdaClusterOffer turns one 1-Click Cluster row (cells DURATION, GPU COUNT, PRICE/GPU/HR)
// into a committed offer for the smallest cluster it sells; ok is false for an unpriced row.
// A row whose duration or count cannot be read is an error: its price type or size would be
// a guess.
func lambdaClusterOffer(tr *goquery.Selection, cells map[string]string, run schema.Run, sourceURL string) (o schema.Offer, ok bool, err error) {
	plan, _ := tr.Attr("data-plan")
	plan = normalizeSpace(plan)
	where := fmt.Sprintf("pricing page: 1-Click Cluster %q, %q", clip(plan, 60), clip(cells["DURATION"], 40))
	if plan == "" {
		return o, false, fmt.Errorf("%s: empty data-plan", where)
	}
	perGPU, offered, err := lambdaPagePrice(cells, where)
	if err != nil || !offered {
		return o, false, err
	}
	priceType, term, err := lambdaTerm(cells["DURATION"])
	if err != nil {
		return o, false, fmt.Errorf("%s: DURATION: %w", where, err)
	}
	countText, has := cells["GPU COUNT"]
	if !has {
		return o, false, fmt.Errorf("%s: %w: no GPU COUNT cell", where, ErrLayoutChanged)
	}
	count, err := lambdaClusterCount(countText)
	if err != nil {
		return o, false, fmt.Errorf("%s: GPU COUNT: %w", where, err)
	}
	form := ""
	if m := lambdaFormRe.FindStringSubmatch(plan); m != nil {
		form = strings.ToLower(m[1])
	}
	o = schema.Offer{
		SourceURL:  sourceURL,
		Provider:   LambdaName,
		OfferID:    fmt.Sprintf("1-Click Cluster %dx %s (%s)", count, plan, term),
		Tier:       schema.TierDatacenter,
		GPUNameRaw: plan,
		GPUCount:   uint16(count),
		PriceType:  priceType,
		InterNode:  schema.InterInfiniBand, // a 1-Click Cluster's nodes are joined by InfiniBand
		Stock:      schema.StockUnknown,
		DQFlags:    []schema.DQFlag{},
	}
	run.Stamp(&o)
	o.SetPricePerGPU(perGPU) // per GPU-hour, for every GPU of the cluster
	// The cluster tables have no VRAM column: the catalog's, flagged vram_missing.
	match := applyGPU(&o, LambdaName, plan, 0)
	o.IntraNode = lambdaIntraNode(form, match, count)
	return o, true, nil
}

var lambdaClusterCountRe = regexp.MustCompile(`(?i)^(\d{1,3}(?:,\d{3})+|\d{1,6})\s*(?:\+|(?:-|–|—|to)\s*(\d{1,3}(?:,\d{3})+|\d{1,6}))?(?:\s*GPUs?)?$`)

// lambdaClusterCount reads a GPU COUNT cell ("16 – 2048", "16", "16+", "16 – 2,048 GPUs") and
// returns its lower bound: the smallest cluster the row's per-GPU price buys.
func lambdaClusterCount(s string) (int, error) {
	m := lambdaClusterCountRe.FindStringSubmatch(normalizeSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a GPU count like \"16 – 2048\"", clip(s, 40))
	}
	low, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	if low <= 0 || low > 1<<15 {
		return 0, fmt.Errorf("%q: implausible GPU count", clip(s, 40))
	}
	if m[2] != "" {
		if high, _ := strconv.Atoi(strings.ReplaceAll(m[2], ",", "")); high < low {
			return 0, fmt.Errorf("%q: the range ends below its start", clip(s, 40))
		}
	}
	return low, nil
}

var lambdaTermRe = regexp.MustCompile(`(?i)^(\d{1,3})(\+)?\s*(days?|weeks?|months?|years?)?(\+)?(?:\s*(?:-|–|—|to)\s*(\d{1,3})\s*(days?|weeks?|months?|years?))?$`)

// lambdaTermDays is the length of each unit a DURATION cell uses, for comparing the two ends.
var lambdaTermDays = map[string]int{"day": 1, "week": 7, "month": 30, "year": 365}

// lambdaTerm reads the commitment a 1-Click Cluster row's DURATION cell names ("1 week – 3
// months", "3 – 12 months", "1 year", "12+ months") into its price type and its text in one
// spelling, for the offer id. Exactly one year (or 12 months) is schema.Term1Y, exactly three
// years (36 months) schema.Term3Y; any other commitment, a range included, is schema.Reserved.
// A cell that names no commitment is an error, never an on-demand price.
func lambdaTerm(s string) (schema.PriceType, string, error) {
	s = normalizeSpace(s)
	m := lambdaTermRe.FindStringSubmatch(s)
	if m == nil {
		return "", "", fmt.Errorf("%q is not a duration like \"1 week – 3 months\"", clip(s, 40))
	}
	unit := func(u string) string { return strings.TrimSuffix(strings.ToLower(u), "s") }
	low, _ := strconv.Atoi(m[1])
	lowUnit, plus, ranged := unit(m[3]), m[2] != "" || m[4] != "", m[5] != ""
	spell := func(n int, u string) string {
		if n == 1 {
			return fmt.Sprintf("%d %s", n, u)
		}
		return fmt.Sprintf("%d %ss", n, u)
	}
	switch {
	case low == 0:
		return "", "", fmt.Errorf("%q: a commitment of zero", clip(s, 40))
	case plus && ranged:
		return "", "", fmt.Errorf("%q is not a duration like \"1 week – 3 months\"", clip(s, 40))
	case !ranged && lowUnit == "":
		return "", "", fmt.Errorf("%q: a duration without a unit", clip(s, 40))
	case plus:
		return schema.Reserved, fmt.Sprintf("%d+ %ss", low, lowUnit), nil
	case !ranged:
		switch {
		case lowUnit == "year" && low == 1, lowUnit == "month" && low == 12:
			return schema.Term1Y, spell(low, lowUnit), nil
		case lowUnit == "year" && low == 3, lowUnit == "month" && low == 36:
			return schema.Term3Y, spell(low, lowUnit), nil
		}
		return schema.Reserved, spell(low, lowUnit), nil
	}
	high, _ := strconv.Atoi(m[5])
	highUnit := unit(m[6])
	if lowUnit == "" {
		lowUnit = highUnit // "3 – 12 months"
	}
	if low*lambdaTermDays[lowUnit] >= high*lambdaTermDays[highUnit] {
		return "", "", fmt.Errorf("%q: the range does not end after its start", clip(s, 40))
	}
	if lowUnit == highUnit {
		return schema.Reserved, fmt.Sprintf("%d – %s", low, spell(high, highUnit)), nil
	}
	return schema.Reserved, spell(low, lowUnit) + " – " + spell(high, highUnit), nil
}

// LambdaConfig configures the Lambda source. Zero fields take the defaults.
type LambdaConfig struct {
	// APIKey is the Lambda Cloud API key, sent as "Authorization: Bearer <key>". It is a secret:
	// never logged, never put in a URL, an error or a payload. Empty means the public pricing
	// page is scraped instead.
	APIKey    string
	APIURL    string        // instance-types endpoint (default DefaultLambdaAPIURL)
	PageURL   string        // public pricing page, used without a key (default DefaultLambdaPageURL)
	UserAgent string        // for the pricing page (default BrowserUserAgent); the API gets the client's
	Timeout   time.Duration // bound on the whole fetch, retries included, within the run's ctx (default 2m)
	Delay     time.Duration // colly LimitRule delay after each page request (default 1s; negative = none)
}

// Lambda is the Lambda source. With an API key it reads the instance-types API (ParseLambda);
// without one it scrapes the public pricing page through colly (ParseLambdaPage), so Lambda
// still has prices. The two give different offer ids (the instance type and its region,
// "gpu_8x_b200_sxm6/us-east-1", or "8x NVIDIA B200 SXM6 (180 GB)"): the page carries no
// instance type names, and guessing them would silently splice two sources into one price
// history. Only the API says where there is capacity; only the page has the committed
// 1-Click Cluster prices.
type Lambda struct {
	client *Client
	key    string
	apiURL string
	page   pageFetch
	cfgErr error // an invalid URL, reported by Fetch
	logger *slog.Logger
}

// NewLambda returns the Lambda source fetching through client. A nil logger discards. An invalid
// URL makes every Fetch fail with a clear error.
func NewLambda(client *Client, cfg LambdaConfig, logger *slog.Logger) *Lambda {
	key := strings.TrimSpace(cfg.APIKey)
	l := &Lambda{client: client, key: key, apiURL: cfg.APIURL, logger: orDiscard(logger)}
	if l.apiURL == "" {
		l.apiURL = DefaultLambdaAPIURL
	}
	l.page, l.cfgErr = newPageFetch(LambdaName, cfg.PageURL, DefaultLambdaPageURL, cfg.UserAgent, cfg.Timeout, cfg.Delay)
	if _, err := httpURL("API URL", l.apiURL, false); err != nil {
		l.cfgErr = err
	}
	if client == nil {
		l.cfgErr = errors.New("no HTTP client")
	}
	return l
}

// Name returns "lambda".
func (l *Lambda) Name() string { return LambdaName }

// ParserVersion names the parser of its offers (ParserVersion).
func (l *Lambda) ParserVersion() string { return ParserVersion(LambdaName) }

// Fetch fetches Lambda's prices: the instance-types API when a key is configured, else the
// public pricing page.
func (l *Lambda) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	if l.cfgErr != nil {
		return schema.Extract{}, sourceError(LambdaName, l.cfgErr)
	}
	if l.key == "" {
		l.logger.Debug("Lambda API key not set: scraping the pricing page")
		return l.page.offers(ctx, l.client, LambdaName, run, ParseLambdaPage, l.logger)
	}

	ctx, attempts := WithAttemptCounter(ctx)
	ctx = l.client.withBudget(ctx)
	var res schema.Extract
	resp, err := l.client.Do(ctx, Request{
		Source:  LambdaName,
		URL:     l.apiURL,
		Header:  http.Header{"Authorization": {"Bearer " + l.key}, "Accept": {"application/json"}},
		Timeout: l.page.timeout,
	})
	res.Attempts = attempts.Count()
	if resp != nil {
		// Its body is scrubbed of the key already: the client learnt it from the request.
		res.Payloads = append(res.Payloads, resp.Payload())
	}
	if err != nil {
		return res, sourceError(LambdaName, fmt.Errorf("querying instance types: %w", err))
	}
	if mt, _, _ := mime.ParseMediaType(resp.ContentType); mt != "application/json" {
		return res, sourceError(LambdaName, fmt.Errorf("%w: content type %q, want application/json", ErrLayoutChanged, clipLine(resp.ContentType, 80)))
	}
	offers, problems, err := ParseLambda(resp.Body, run, resp.URL)
	if err == nil {
		err = sourceError(LambdaName, l.client.offerCap(len(offers))) // http.max_source_offers
	}
	res.Offers, res.Problems = offers, problems
	if err != nil {
		return res, err
	}
	l.logger.Debug("Lambda parsed", "offers", len(offers), "problems", len(problems), "from", "api")
	return res, nil
}

// lambdaPagePrice reads a pricing-page row's PRICE/GPU/HR cell: USD per GPU-hour, or not
// offered ("—"). where names the row in errors.
func lambdaPagePrice(cells map[string]string, where string) (perGPU decimal.Decimal, offered bool, err error) {
	text, has := cells["PRICE/GPU/HR"]
	if !has {
		return perGPU, false, fmt.Errorf("%s: %w: no PRICE/GPU/HR cell", where, ErrLayoutChanged)
	}
	if perGPU, offered, err = parseUSD(text); err != nil {
		return perGPU, false, fmt.Errorf("%s: %w", where, err)
	}
	return perGPU, offered, nil
}
