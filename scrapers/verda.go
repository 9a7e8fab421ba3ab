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

// Verda (formerly DataCrunch) defaults (docs/providers.md §8.2, §8.6).
const (
	// VerdaName is the provider name Verda offers are recorded under.
	VerdaName = "verda"
	// DefaultVerdaAPIURL is the base of the Verda Cloud REST API (the legacy host is
	// https://api.datacrunch.io/v1).
	DefaultVerdaAPIURL = "https://api.verda.com/v1"
	// DefaultVerdaPageURL is Verda's public pricing page, read when no API credentials are set.
	DefaultVerdaPageURL = "https://verda.com/pricing"
)

// The API paths the keyed source asks, under the base URL (docs/providers.md §8.2).
const (
	verdaTokenPath        = "/oauth2/token"
	verdaTypesPath        = "/instance-types?currency=usd"
	verdaAvailabilityPath = "/instance-availability"
)

// ParseVerda parses an answer of the Verda API's GET /instance-types?currency=usd into offers,
// sorted by instance type: per GPU instance type, an on-demand offer where price_per_hour is
// set and a spot offer where spot_price is (docs/providers.md §8.3–8.4).
//
//   - Prices are USD per hour for the whole instance, as a string ("3.95") or a JSON number,
//     read as the decimal their text says; the per-GPU price is that divided by
//     gpu.number_of_gpus. A zero, empty or null price means not offered; a negative or
//     malformed one, a currency other than usd, or no price at all makes the type a problem.
//   - The GPU count is gpu.number_of_gpus; 0 is a CPU type, skipped. Without it the count comes
//     from gpu.description ("8x …") or the instance type ("8B200.240V"), flagged
//     schema.FlagCountParsed.
//   - gpu_memory is the instance's total VRAM: the per-GPU figure is it divided by the count,
//     read as GB as the field's name says. A figure that fits no catalog model as GB is tried as
//     GiB: the B300 reports 262 per GPU, 281 GB of its 288 as GiB, as skypilot's catalog reads
//     it. Without gpu_memory the label in the name ("80GB") is the VRAM. RAM and disk
//     (memory, storage size_in_gigabytes) are GB; a "dynamic" storage has no size.
//   - The GPU is resolved from name ("H100 SXM5 80GB"), else gpu.description without its
//     count; a "CC" (confidential computing) variant is the same GPU, kept in the raw name.
//
// Offers carry no region and stock unknown: the answer has no locations. The source places
// them in the locations /instance-availability lists (Verda.Fetch). offer_id is the instance
// type. A type listed twice is a problem the second time; the error is set when the body is
// not a whole instance-types answer (ErrIncomplete when cut short, ErrLayoutChanged when it is
// something else, an API error object included), yields no offer (ErrNoOffers) or more than
// MaxOffers types.
func ParseVerda(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	defer func() { problems, err = sourceErrors(VerdaName, capProblems(problems)), sourceError(VerdaName, err) }()
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '{' {
		var apiErr struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		}
		if json.Unmarshal(b, &apiErr) == nil && (apiErr.Code != "" || apiErr.Message != "") {
			return nil, nil, fmt.Errorf("%w: api error %q: %s", ErrLayoutChanged, clip(apiErr.Code, 80), clip(apiErr.Message, 200))
		}
	}
	types := &verdaTypes{run: run, sourceURL: sourceURL, seen: map[string]bool{}}
	if err := decodeJSON(body, "instance types", types); err != nil {
		return nil, nil, err
	}
	if types.n > 0 && types.keyed == 0 {
		return nil, nil, fmt.Errorf("%w: %d instance types, none with instance_type and price_per_hour or spot_price", ErrLayoutChanged, types.n)
	}
	offers, problems = types.offers, types.problems
	if len(offers) == 0 {
		return nil, problems, fmt.Errorf("%w: %d instance types, no priced GPU type", ErrNoOffers, types.n)
	}
	sortOffers(offers)
	return offers, problems, nil
}

// verdaTypes decodes the instance-types array one element at a time.
type verdaTypes struct {
	run       schema.Run
	sourceURL string
	n         int // elements
	keyed     int // elements with instance_type and a price key: the layout is the known one
	seen      map[string]bool
	offers    []schema.Offer
	problems  []error
}

func (t *verdaTypes) UnmarshalJSON(data []byte) error {
	if err := t.each(data); err != nil {
		return fmt.Errorf("instance types: %w", err)
	}
	return nil
}

func (t *verdaTypes) each(data []byte) error {
	return eachElement(data, func(i int, raw []byte) error {
		if t.n++; t.n > MaxOffers {
			return fmt.Errorf("%w: more than %d instance types", ErrTooManyOffers, MaxOffers)
		}
		var it verdaInstanceType
		if err := json.Unmarshal(raw, &it); err != nil {
			t.problems = append(t.problems, fmt.Errorf("instance type #%d: %w", i, decodeProblem(err)))
			return nil
		}
		if it.InstanceType != "" && (it.PricePerHour != nil || it.SpotPrice != nil || it.SpotPricePerHour != nil) {
			t.keyed++
		}
		id := strings.TrimSpace(it.InstanceType)
		if id != "" && t.seen[id] {
			t.problems = append(t.problems, fmt.Errorf("instance type %q: listed twice", clip(id, 60)))
			return nil
		}
		t.seen[id] = true
		offers, err := verdaTypeOffers(it, t.run, t.sourceURL)
		if err != nil {
			t.problems = append(t.problems, err)
		}
		t.offers = append(t.offers, offers...)
		return nil
	})
}

// verdaInstanceType is one element of the instance-types answer (the fields read; the union of
// the SDKs' InstanceType). Numbers are decoded per field (jsonNumberOrString): a string or a number.
type verdaInstanceType struct {
	InstanceType     string          `json:"instance_type"`
	PricePerHour     json.RawMessage `json:"price_per_hour"`
	SpotPrice        json.RawMessage `json:"spot_price"`
	SpotPricePerHour json.RawMessage `json:"spot_price_per_hour"` // the Python SDK's name for spot_price
	Currency         *string         `json:"currency"`
	CPU              verdaSpec       `json:"cpu"`
	Memory           verdaSpec       `json:"memory"`
	GPU              struct {
		Description  string          `json:"description"`
		NumberOfGPUs json.RawMessage `json:"number_of_gpus"`
	} `json:"gpu"`
	GPUMemory verdaSpec `json:"gpu_memory"`
	Storage   verdaSpec `json:"storage"`
	Model     string    `json:"model"`
	Name      string    `json:"name"`
}

// verdaSpec is the {description, number_of_cores | size_in_gigabytes} object of a spec.
type verdaSpec struct {
	NumberOfCores   json.RawMessage `json:"number_of_cores"`
	SizeInGigabytes json.RawMessage `json:"size_in_gigabytes"`
}

var (
	verdaCountRe    = regexp.MustCompile(`(?i)^\s*(\d+)\s*x\s+`)    // "8x H200 SXM5 141GB"
	verdaTypeCount  = regexp.MustCompile(`^(\d+)[A-Za-z]`)          // "8B200.240V"
	verdaCCRe       = regexp.MustCompile(`(?i)(^|\s)CC(\s|$)`)      // "B200 CC SXM6 180GB"
	verdaCPUOnlyRe  = regexp.MustCompile(`(?i)^CPU\b|\bCPU Node\b`) // "CPU.8V.32G", model "CPU Node"
	verdaLocationRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$`)
)

// verdaTypeOffers turns one instance type into its offers (none for a CPU type).
func verdaTypeOffers(it verdaInstanceType, run schema.Run, sourceURL string) ([]schema.Offer, error) {
	id := strings.TrimSpace(it.InstanceType)
	if id == "" {
		return nil, errors.New("an instance type without instance_type")
	}
	id = clip(id, 100)
	where := fmt.Sprintf("instance type %q", clip(id, 60))
	desc := normalizeSpace(it.GPU.Description)

	flags := []schema.DQFlag{}
	count, present, err := verdaCount(it.GPU.NumberOfGPUs)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: gpu.number_of_gpus: %w", where, err)
	case present && count == 0:
		return nil, nil // a CPU type
	case !present && desc == "" && verdaCPUOnlyRe.MatchString(id+" "+it.Model):
		return nil, nil
	case !present:
		if m := verdaCountRe.FindStringSubmatch(desc); m != nil {
			count, _ = strconv.Atoi(m[1])
		} else if m := verdaTypeCount.FindStringSubmatch(id); m != nil {
			count, _ = strconv.Atoi(m[1])
		}
		if count <= 0 || count > 1<<15 {
			return nil, fmt.Errorf("%s: no GPU count in gpu.number_of_gpus, gpu.description or instance_type", where)
		}
		flags = append(flags, schema.FlagCountParsed)
	}
	if it.Currency != nil && !strings.EqualFold(strings.TrimSpace(*it.Currency), "usd") {
		return nil, fmt.Errorf("%s: currency %q, want usd", where, clip(*it.Currency, 20))
	}
	onDemand, hasOnDemand, err := jsonPrice(it.PricePerHour)
	if err != nil {
		return nil, fmt.Errorf("%s: price_per_hour: %w", where, err)
	}
	spotField, spotRaw := "spot_price", it.SpotPrice
	if spotRaw == nil {
		spotField, spotRaw = "spot_price_per_hour", it.SpotPricePerHour
	}
	spot, hasSpot, err := jsonPrice(spotRaw)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", where, spotField, err)
	}
	if !hasOnDemand && !hasSpot {
		return nil, fmt.Errorf("%s: neither price_per_hour nor spot_price is set", where)
	}

	var vram float64 // per GPU, as the API says it
	if total, ok, err := jsonNumberOrString(it.GPUMemory.SizeInGigabytes); err == nil && ok && total.IsPositive() {
		f, _ := total.Float64()
		vram = round(f/float64(count), 2)
	}
	bare := strings.TrimSpace(verdaCountRe.ReplaceAllString(desc, "")) // "H100 SXM5 80GB"
	raw := normalizeSpace(it.Name)
	for _, s := range []string{bare, normalizeSpace(it.Model)} {
		if raw == "" {
			raw = s
		}
	}
	raw = clip(raw, 100)
	if vram == 0 {
		vram = verdaLabel(raw) // no gpu_memory: the label in the name ("80GB") is per GPU
	}

	base := schema.Offer{
		SourceURL: sourceURL,
		Provider:  VerdaName,
		OfferID:   id,
		Tier:      schema.TierDatacenter,
		GPUCount:  uint16(count),
		VCPUs:     verdaSpecFigure(it.CPU.NumberOfCores),
		RAMGB:     verdaSpecFigure(it.Memory.SizeInGigabytes),
		DiskGB:    verdaSpecFigure(it.Storage.SizeInGigabytes),
		InterNode: schema.InterUnknown,
		Stock:     schema.StockUnknown,
		DQFlags:   flags,
	}
	run.Stamp(&base)
	alt := verdaSpellings(raw, bare)
	m := resolveGPU(VerdaName, raw, vram, alt...)
	if !m.Known && vram > 0 {
		// The B300's gpu_memory is 262 per GPU: 281 GB if it is GiB, which fits its 288 GB; as
		// GB it fits nothing. A figure that fits no model as GB is tried as GiB.
		if g := resolveGPU(VerdaName, raw, vram*gpus.GiB, alt...); g.Known {
			m, vram = g, vram*gpus.GiB
		}
	}
	match := setGPU(&base, raw, vram, m)
	base.IntraNode = verdaIntraNode(match, count)
	var out []schema.Offer
	if hasOnDemand {
		out = append(out, priced(base, schema.OnDemand, onDemand))
	}
	if hasSpot {
		out = append(out, priced(base, schema.Spot, spot))
	}
	return out, nil
}

// verdaSpellings are the other spellings a Verda GPU is resolved by when raw stays unknown:
// the description without its count, and both without "CC", which marks the confidential
// computing variant of the same GPU.
func verdaSpellings(raw, bare string) []string {
	var out []string
	for _, s := range []string{bare, verdaNoCC(raw), verdaNoCC(bare)} {
		if s != "" && s != raw && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// verdaNoCC removes the "CC" token of a confidential-computing GPU name.
func verdaNoCC(s string) string { return normalizeSpace(verdaCCRe.ReplaceAllString(s, " ")) }

// verdaIntraNode is the GPU-to-GPU link inside a Verda instance, as far as the GPU name proves
// it: a model whose fabric comes with it (the catalog's BoardFabric: the SXM4/5/6 modules Verda
// names, on their HGX boards) has that fabric, NVSwitch; a PCIe card without NVLink, or a single
// PCIe card, is PCIe; a bridgeable PCIe card in a multi-GPU instance (2x RTX A6000, whose p2p
// says "50GB/s") is unknown, as the API's p2p figure does not say which link it measures; an
// unknown GPU is unknown.
func verdaIntraNode(m gpus.Match, count int) schema.IntraNode {
	switch {
	case !m.Known:
		return schema.IntraUnknown
	case m.Model.BoardFabric:
		return m.Model.BoardIntraNode()
	case (m.Model.FormFactor == gpus.PCIe || m.Model.FormFactor == gpus.Consumer) && (!m.Model.Linkable() || count == 1):
		return schema.IntraPCIe
	}
	return schema.IntraUnknown
}

// verdaCount reads an optional whole count of at most 2^15.
func verdaCount(raw json.RawMessage) (n int, present bool, err error) {
	d, present, err := jsonNumberOrString(raw)
	if err != nil || !present {
		return 0, present, err
	}
	if !d.IsInteger() || d.IsNegative() || d.GreaterThan(decimal.NewFromInt(1<<15)) {
		return 0, true, fmt.Errorf("%s is not a GPU count", d)
	}
	return int(d.IntPart()), true, nil
}

// verdaSpecFigure is an optional spec figure rounded to two decimals; nil when absent,
// malformed or negative (specs are informative, not worth dropping an offer for).
func verdaSpecFigure(raw json.RawMessage) *float64 {
	d, present, err := jsonNumberOrString(raw)
	if err != nil || !present || d.IsNegative() {
		return nil
	}
	f, _ := d.Float64()
	return ptr(round(f, 2))
}

// VerdaAvailability is an answer of GET /instance-availability: for each instance type, the
// locations (FIN-01, ICE-01, ...) where it can be deployed now, sorted.
type VerdaAvailability map[string][]string

// ParseVerdaAvailability parses an answer of GET /instance-availability, an array of
// {"location_code": "FIN-01", "availabilities": ["1H100.80S.30V", ...]}. An empty array is a
// valid answer (nothing deployable). The answer is read whole or not at all: a body cut short is
// ErrIncomplete; anything else than such an array, an element without a location code, or a
// location code that is not one (letters, digits, '-', '_'; 40 at most) is ErrLayoutChanged; more
// than MaxOffers entries ErrTooManyOffers. Errors name the provider.
func ParseVerdaAvailability(body []byte) (VerdaAvailability, error) {
	a := &verdaAvailability{out: VerdaAvailability{}}
	if err := decodeJSON(body, "instance availability", a); err != nil {
		return nil, sourceError(VerdaName, err)
	}
	for t, locs := range a.out {
		slices.Sort(locs)
		a.out[t] = slices.Compact(locs)
	}
	return a.out, nil
}

type verdaAvailability struct {
	out     VerdaAvailability
	entries int
}

func (a *verdaAvailability) UnmarshalJSON(data []byte) error {
	if err := a.each(data); err != nil {
		return fmt.Errorf("instance availability: %w", err)
	}
	return nil
}

func (a *verdaAvailability) each(data []byte) error {
	return eachElement(data, func(i int, raw []byte) error {
		var loc struct {
			Code           *string  `json:"location_code"`
			Availabilities []string `json:"availabilities"`
		}
		if err := json.Unmarshal(raw, &loc); err != nil {
			return fmt.Errorf("%w: location #%d: %w", ErrLayoutChanged, i, decodeProblem(err))
		}
		if loc.Code == nil {
			return fmt.Errorf("%w: location #%d has no location_code", ErrLayoutChanged, i)
		}
		code := strings.TrimSpace(*loc.Code)
		if !verdaLocationRe.MatchString(code) {
			return fmt.Errorf("%w: location #%d: %q is not a location code", ErrLayoutChanged, i, clip(code, 40))
		}
		for _, t := range loc.Availabilities {
			if a.entries++; a.entries > MaxOffers {
				return fmt.Errorf("%w: more than %d available instance types", ErrTooManyOffers, MaxOffers)
			}
			if t = strings.TrimSpace(t); t != "" {
				a.out[t] = append(a.out[t], code)
			}
		}
		return nil
	})
}

// verdaCountries are the countries of Verda's location code prefixes (FIN-01 is "Finland 1").
var verdaCountries = map[string]string{"FIN": "FI", "ICE": "IS"}

// verdaPlace puts each offer of ParseVerda in the locations where its instance type is
// deployable at its price type (avail): one offer per location, with the location as region
// and offer_id "<instance type>/<location>". An offer deployable nowhere is kept, once, without
// a region and with stock none: its price holds, and a type is never dropped for lack of
// capacity. The result is sorted.
func verdaPlace(offers []schema.Offer, avail map[schema.PriceType]VerdaAvailability) ([]schema.Offer, error) {
	var out []schema.Offer
	for _, o := range offers {
		locs := avail[o.PriceType][o.OfferID]
		if len(locs) == 0 {
			o.Stock = schema.StockNone
			out = append(out, o)
			continue
		}
		for _, loc := range locs {
			p := o
			p.OfferID = o.OfferID + "/" + loc
			p.Region = loc
			prefix, _, _ := strings.Cut(strings.ToUpper(loc), "-")
			p.Country = verdaCountries[prefix]
			p.DQFlags = slices.Clone(o.DQFlags)
			out = append(out, p)
		}
		if len(out) > MaxOffers {
			return nil, fmt.Errorf("%w: more than %d offers placed in their locations", ErrTooManyOffers, MaxOffers)
		}
	}
	sortOffers(out)
	return out, nil
}

// Offer kinds of the pricing page's JSON-LD, by the name's suffix and by the description
// (docs/providers.md §8.6); the two must agree.
const (
	verdaOnDemand   = "on-demand"
	verdaSpot       = "spot"
	verdaCluster    = "instant cluster"
	verdaServerless = "serverless continuous"
	verdaServerSpot = "serverless spot"
	verdaStorage    = "storage"
)

// verdaSuffixes are the name suffixes, longest first ("serverless spot" before "spot").
var verdaSuffixes = []string{verdaServerSpot, verdaServerless, verdaCluster, verdaOnDemand, verdaSpot}

// verdaDescriptions are the fixed descriptions of each kind, lower case.
var verdaDescriptions = map[string]string{
	"hourly on-demand instance price":        verdaOnDemand,
	"hourly spot instance price":             verdaSpot,
	"hourly instant cluster price":           verdaCluster,
	"hourly serverless container price":      verdaServerless,
	"hourly serverless spot container price": verdaServerSpot,
	"monthly storage price per gib":          verdaStorage,
}

// ParseVerdaPage parses Verda's public pricing page (https://verda.com/pricing,
// docs/providers.md §8.6) into offers: an on-demand and a spot offer per instance GPU and a
// serverless offer per serverless container, read from the schema.org JSON-LD the page embeds,
// never from its rendered tables.
//
// Every <script type="application/ld+json"> is read; the offers are the top-level nodes of its
// "@graph" whose @type is Offer. Each has a name ("1x H100 SXM5 80GB on-demand"), a fixed
// description, a price (a JSON number) with its currency, and a UnitPriceSpecification with the
// same price, currency and unitText "hour". The kind is read twice, from the name's suffix and
// from the description, and the two must agree. Only instance rows become offers:
//
//   - " on-demand" and " spot" rows price one GPU ("1x …"): USD per GPU-hour, which for one GPU
//     is the offer price. An "Nx" instance row of more GPUs is a problem: no page seen has one,
//     and whether its price would be per GPU or per instance is unknown.
//   - " serverless continuous" rows price a serverless container of N GPUs ("8x …"), billed only
//     while it works: an offer of N GPUs at that N-GPU total, price type serverless.
//   - Instant clusters (multi-node, N-GPU totals), serverless spot containers (interruptible
//     and billed by busy time: neither a spot nor a serverless price as gpucost plans them) and
//     storage (per GiB and month) are left out; so are the CPU rows, whose model is blank
//     (" on-demand").
//   - A price must be positive, in USD (the page has a EUR toggle) and equal to its
//     specification's; an offer listed twice verbatim (the H100 rows) counts once, a second
//     listing with another price is a problem.
//
// The offer id is the name without its kind, e.g. "1x H100 SXM5 80GB"; the price type tells the
// on-demand and spot offers apart. The page names no region. VRAM is the label in the name
// ("80GB"), per GPU; a "CC" (confidential computing) row is the same GPU at its own price and
// offer id. The page must be whole (checkPage), else the error wraps ErrIncomplete; a page
// without JSON-LD Offer nodes is ErrLayoutChanged, one without a priced instance offer
// ErrNoOffers, never an empty success.
func ParseVerdaPage(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	defer func() { problems, err = sourceErrors(VerdaName, capProblems(problems)), sourceError(VerdaName, err) }()
	if err := checkPage(body); err != nil {
		return nil, nil, fmt.Errorf("pricing page: %w", err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("pricing page: parse html: %w", err)
	}
	scripts := doc.Find("script[type]").FilterFunction(func(_ int, s *goquery.Selection) bool {
		mt, _, _ := mime.ParseMediaType(s.AttrOr("type", ""))
		return mt == "application/ld+json"
	})
	if scripts.Length() == 0 {
		return nil, nil, fmt.Errorf("pricing page: %w: no <script type=\"application/ld+json\">", ErrLayoutChanged)
	}
	graph := &verdaGraph{}
	scripts.Each(func(i int, s *goquery.Selection) {
		if graph.err != nil {
			return
		}
		var ld struct {
			Graph *verdaGraph `json:"@graph"`
		}
		ld.Graph = graph
		if err := decodeJSON([]byte(s.Text()), "JSON-LD", &ld); err != nil {
			if errors.Is(err, ErrTooManyOffers) {
				graph.err = err
				return
			}
			problems = append(problems, fmt.Errorf("pricing page: JSON-LD script #%d: %w", i+1, err))
		}
	})
	if graph.err != nil {
		return nil, nil, fmt.Errorf("pricing page: %w", graph.err)
	}
	if len(graph.nodes) == 0 {
		return nil, problems, fmt.Errorf("pricing page: %w: no schema.org Offer node in the @graph of %d JSON-LD scripts", ErrLayoutChanged, scripts.Length())
	}

	skipped := map[string]int{}
	seen := map[string]verdaLDOffer{}
	for _, n := range graph.nodes {
		o, kind, err := verdaPageOffer(n, run, sourceURL)
		switch {
		case err != nil:
			problems = append(problems, err)
			continue
		case kind != "":
			skipped[kind]++
			continue
		}
		k := o.OfferID + "|" + string(o.PriceType)
		if prev, ok := seen[k]; ok {
			if !prev.same(n) {
				problems = append(problems, fmt.Errorf("pricing page: offer %q listed twice with different prices", clip(n.Name, 80)))
			}
			continue
		}
		seen[k] = n
		offers = append(offers, o)
	}
	if err := offerCap(len(offers), MaxOffers); err != nil {
		return nil, nil, fmt.Errorf("pricing page: %w", err)
	}
	if len(offers) == 0 {
		return nil, problems, fmt.Errorf("pricing page: %w: %d Offer nodes (%d CPU, %d cluster, %d serverless spot, %d storage), no priced instance offer in USD",
			ErrNoOffers, len(graph.nodes), skipped["cpu"], skipped[verdaCluster], skipped[verdaServerSpot], skipped[verdaStorage])
	}
	sortOffers(offers)
	return offers, problems, nil
}

// verdaGraph decodes a JSON-LD @graph one node at a time, keeping the Offer nodes.
type verdaGraph struct {
	nodes []verdaLDOffer
	err   error // fatal (too many nodes)
}

func (g *verdaGraph) UnmarshalJSON(data []byte) error {
	return eachElement(data, func(i int, raw []byte) error {
		var head struct {
			Type json.RawMessage `json:"@type"`
		}
		if json.Unmarshal(raw, &head) != nil || !ldIsType(head.Type, "Offer") {
			return nil // a node of another type (Organization, ItemList, …) or no object at all
		}
		if len(g.nodes) >= MaxOffers {
			g.err = fmt.Errorf("%w: more than %d Offer nodes", ErrTooManyOffers, MaxOffers)
			return g.err
		}
		var o verdaLDOffer
		if err := json.Unmarshal(raw, &o); err != nil {
			o = verdaLDOffer{bad: fmt.Errorf("offer node #%d: %w", i, decodeProblem(err))}
		}
		g.nodes = append(g.nodes, o)
		return nil
	})
}

// ldIsType reports whether a JSON-LD @type (a string or an array of them) is want.
func ldIsType(raw json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return one == want
	}
	var many []string
	return json.Unmarshal(raw, &many) == nil && slices.Contains(many, want)
}

// verdaLDOffer is a schema.org Offer node of the pricing page.
type verdaLDOffer struct {
	Name               string          `json:"name"`
	Description        string          `json:"description"`
	Price              json.RawMessage `json:"price"`
	PriceCurrency      string          `json:"priceCurrency"`
	PriceSpecification *struct {
		Price         json.RawMessage `json:"price"`
		PriceCurrency string          `json:"priceCurrency"`
		UnitText      string          `json:"unitText"`
	} `json:"priceSpecification"`
	bad error // the node did not decode
}

// same reports whether n repeats o verbatim as far as its price goes.
func (o verdaLDOffer) same(n verdaLDOffer) bool {
	a, _, errA := jsonNumberOrString(o.Price)
	b, _, errB := jsonNumberOrString(n.Price)
	return errA == nil && errB == nil && a.Equal(b) && strings.EqualFold(o.PriceCurrency, n.PriceCurrency)
}

var verdaLabelRe = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*GB\b`)

// verdaLabel is the VRAM label of a GPU name ("H100 SXM5 80GB": 80), its last one; 0 when none.
func verdaLabel(name string) float64 {
	l := verdaLabelRe.FindAllStringSubmatch(name, -1)
	if l == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(l[len(l)-1][1], 64)
	return v
}

// verdaPageOffer turns one Offer node into an instance or serverless offer, or says which kind
// of row it skipped ("cpu", or a kind other than on-demand, spot and serverless continuous).
func verdaPageOffer(n verdaLDOffer, run schema.Run, sourceURL string) (o schema.Offer, skipped string, err error) {
	if n.bad != nil {
		return o, "", fmt.Errorf("pricing page: %w", n.bad)
	}
	name := normalizeSpace(n.Name)
	where := fmt.Sprintf("pricing page: offer %q", clip(name, 80))
	byDesc, knownDesc := verdaDescriptions[strings.ToLower(normalizeSpace(n.Description))]
	if byDesc == verdaStorage {
		return o, verdaStorage, nil
	}
	lower, byName, model := strings.ToLower(name), "", ""
	for _, s := range verdaSuffixes {
		if lower == s {
			byName = s // a blank model: " on-demand"
			break
		}
		if strings.HasSuffix(lower, " "+s) {
			byName, model = s, strings.TrimSpace(name[:len(name)-len(s)-1])
			break
		}
	}
	switch {
	case byName == "" && !knownDesc:
		return o, "", fmt.Errorf("%s: an offer of an unknown kind (description %q)", where, clip(n.Description, 60))
	case byName == "":
		return o, "", fmt.Errorf("%s: the name has no kind suffix, the description says %s", where, byDesc)
	case !knownDesc:
		return o, "", fmt.Errorf("%s: description %q is not the one of a %s offer", where, clip(n.Description, 60), byName)
	case byName != byDesc:
		return o, "", fmt.Errorf("%s: the name says %s, the description %s", where, byName, byDesc)
	case model == "":
		return o, "cpu", nil // the CPU rows have a blank model
	case byName != verdaOnDemand && byName != verdaSpot && byName != verdaServerless:
		return o, byName, nil
	}
	m := verdaCountRe.FindStringSubmatch(model)
	if m == nil {
		return o, "", fmt.Errorf("%s: no GPU count (\"1x …\") in the name", where)
	}
	count, err := strconv.Atoi(m[1])
	switch {
	case err != nil || count < 1 || count > 1<<15:
		return o, "", fmt.Errorf("%s: GPU count %q", where, clip(m[1], 10))
	case count != 1 && byName != verdaServerless:
		return o, "", fmt.Errorf("%s: an instance row of %d GPUs: per-GPU or per-instance price is unknown", where, count)
	}
	gpu := strings.TrimSpace(model[len(m[0]):])
	if gpu == "" {
		return o, "", fmt.Errorf("%s: no GPU after the count", where)
	}

	price, ok, err := jsonPrice(n.Price)
	switch {
	case err != nil:
		return o, "", fmt.Errorf("%s: price: %w", where, err)
	case !ok:
		return o, "", fmt.Errorf("%s: no positive price", where)
	}
	currencies := []string{n.PriceCurrency}
	if spec := n.PriceSpecification; spec != nil {
		specPrice, present, err := jsonNumberOrString(spec.Price)
		switch {
		case err != nil:
			return o, "", fmt.Errorf("%s: priceSpecification.price: %w", where, err)
		case !present || !specPrice.Equal(price):
			return o, "", fmt.Errorf("%s: price %s and priceSpecification.price %s differ", where, price, clip(string(spec.Price), 20))
		case spec.UnitText != "" && !strings.EqualFold(strings.TrimSpace(spec.UnitText), "hour"):
			return o, "", fmt.Errorf("%s: priceSpecification.unitText %q, want hour", where, clip(spec.UnitText, 20))
		}
		currencies = append(currencies, spec.PriceCurrency)
	}
	for _, c := range currencies {
		if c = strings.TrimSpace(c); c != "" && !strings.EqualFold(c, "USD") {
			return o, "", fmt.Errorf("%s: priceCurrency %q, want USD", where, clip(c, 20))
		}
	}
	if strings.TrimSpace(n.PriceCurrency) == "" && (n.PriceSpecification == nil || strings.TrimSpace(n.PriceSpecification.PriceCurrency) == "") {
		return o, "", fmt.Errorf("%s: no priceCurrency", where)
	}

	vram := verdaLabel(gpu)
	o = schema.Offer{
		SourceURL: sourceURL,
		Provider:  VerdaName,
		OfferID:   clip(model, 100),
		Tier:      schema.TierDatacenter,
		GPUCount:  uint16(count),
		PriceType: schema.OnDemand,
		InterNode: schema.InterUnknown,
		Stock:     schema.StockUnknown,
		DQFlags:   []schema.DQFlag{},
	}
	switch byName {
	case verdaSpot:
		o.PriceType = schema.Spot
	case verdaServerless:
		o.PriceType = schema.Serverless
	}
	run.Stamp(&o)
	o.SetPrice(price) // the row's total: one GPU's price, or a container's of N
	gpu = clip(gpu, 100)
	match := setGPU(&o, gpu, vram, resolveGPU(VerdaName, gpu, vram, verdaSpellings(gpu, "")...))
	o.IntraNode = verdaIntraNode(match, count)
	return o, "", nil
}

// VerdaConfig configures the Verda source. Zero fields take the defaults.
type VerdaConfig struct {
	// ClientID and ClientSecret are the OAuth2 client credentials of the Verda Cloud API. Both
	// are secrets: never logged, never put in a URL, an error, a payload or a recording. With
	// neither, the public pricing page is read instead; with only one, Fetch fails.
	ClientID, ClientSecret string
	APIURL                 string        // API base (default DefaultVerdaAPIURL)
	PageURL                string        // public pricing page, read without credentials (default DefaultVerdaPageURL)
	UserAgent              string        // for the pricing page (default BrowserUserAgent); the API gets the client's
	Timeout                time.Duration // bound on the whole fetch, every request and retry included, within the run's ctx (default 2m)
	Delay                  time.Duration // colly LimitRule delay after each page request (default 1s; negative = none)
}

// Verda is the Verda (formerly DataCrunch) source. With API credentials it reads the instance
// types API (ParseVerda) after the OAuth2 token step, and places each offer in the locations
// /instance-availability lists; without them it reads the JSON-LD of the public pricing page
// through colly (ParseVerdaPage). The two give different offer ids (the instance type and its
// location, or the page's "1x H100 SXM5 80GB"): the page names no instance types, and guessing
// them would splice two sources into one price history.
type Verda struct {
	client       *Client
	id, secret   string
	apiURL       string
	page         pageFetch
	cfgErr       error // an invalid URL or half the credentials, reported by Fetch
	logger       *slog.Logger
	fetchTimeout time.Duration
}

// NewVerda returns the Verda source fetching through client. A nil logger discards. An invalid
// URL, or a client id without a secret (or the reverse), makes every Fetch fail with a clear
// error.
func NewVerda(client *Client, cfg VerdaConfig, logger *slog.Logger) *Verda {
	v := &Verda{client: client, id: strings.TrimSpace(cfg.ClientID), secret: strings.TrimSpace(cfg.ClientSecret),
		apiURL: strings.TrimRight(cfg.APIURL, "/"), logger: orDiscard(logger)}
	if v.apiURL == "" {
		v.apiURL = DefaultVerdaAPIURL
	}
	v.page, v.cfgErr = newPageFetch(VerdaName, cfg.PageURL, DefaultVerdaPageURL, cfg.UserAgent, cfg.Timeout, cfg.Delay)
	v.fetchTimeout = v.page.timeout
	if _, err := httpURL("API URL", v.apiURL, true); err != nil {
		v.cfgErr = err
	}
	if (v.id == "") != (v.secret == "") {
		// Worded so that no redaction shape ("secret: …") takes it for a credential.
		v.cfgErr = errors.New("the API needs a client id and a client secret, and only one of them is set")
	}
	if client == nil {
		v.cfgErr = errors.New("no HTTP client")
	}
	return v
}

// Name returns "verda".
func (v *Verda) Name() string { return VerdaName }

// ParserVersion names the parser of its offers (ParserVersion).
func (v *Verda) ParserVersion() string { return ParserVersion(VerdaName) }

// Fetch fetches Verda's prices: the API when client credentials are configured, else the public
// pricing page.
func (v *Verda) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	if v.cfgErr != nil {
		return schema.Extract{}, sourceError(VerdaName, v.cfgErr)
	}
	if v.id == "" {
		v.logger.Debug("Verda API credentials not set: reading the pricing page")
		return v.page.offers(ctx, v.client, VerdaName, run, ParseVerdaPage, v.logger)
	}
	res, err := v.fetchAPI(ctx, run)
	if err != nil {
		return res, sourceError(VerdaName, err)
	}
	v.logger.Debug("Verda parsed", "offers", len(res.Offers), "problems", len(res.Problems), "from", "api")
	return res, nil
}

// fetchAPI takes an access token, reads the instance types and both availability lists
// (on-demand and spot), and places the offers. Every request must succeed: prices without
// their locations would be other offers. The token answer is never a payload.
func (v *Verda) fetchAPI(ctx context.Context, run schema.Run) (res schema.Extract, err error) {
	ctx, attempts := WithAttemptCounter(ctx)
	ctx = v.client.withBudget(ctx)
	ctx, cancel := context.WithTimeout(ctx, v.fetchTimeout)
	defer cancel()
	defer func() { res.Attempts = attempts.Count() }()
	// The credentials are secrets from now on, in data too: an answer may echo them.
	v.client.red.AddSent(v.id, v.secret)

	token, err := v.token(ctx)
	if err != nil {
		// Not "token: …": the redaction shapes would take what follows for a credential.
		return res, fmt.Errorf("the OAuth2 token step: %w", err)
	}
	header := http.Header{"Authorization": {"Bearer " + token}, "Accept": {"application/json"}}
	get := func(path, what string) (*Response, error) {
		resp, err := v.client.Do(ctx, Request{Source: VerdaName, URL: v.apiURL + path, Header: header})
		if resp != nil {
			res.Payloads = append(res.Payloads, resp.Payload())
		}
		if err != nil {
			return nil, fmt.Errorf("querying %s: %w", what, err)
		}
		if mt, _, _ := mime.ParseMediaType(resp.ContentType); mt != "application/json" {
			return nil, fmt.Errorf("%s: %w: content type %q, want application/json", what, ErrLayoutChanged, clipLine(resp.ContentType, 80))
		}
		return resp, nil
	}
	types, err := get(verdaTypesPath, "instance types")
	if err != nil {
		return res, err
	}
	offers, problems, err := ParseVerda(types.Body, run, types.URL)
	res.Problems = problems
	if err != nil {
		return res, err
	}
	avail := map[schema.PriceType]VerdaAvailability{}
	for _, a := range []struct {
		pt   schema.PriceType
		spot string
	}{{schema.OnDemand, "false"}, {schema.Spot, "true"}} {
		// The Go SDK and skypilot send is_spot, the Python SDK isSpot: both are sent.
		what := "instance availability (is_spot=" + a.spot + ")"
		resp, err := get(verdaAvailabilityPath+"?is_spot="+a.spot+"&isSpot="+a.spot, what)
		if err != nil {
			return res, err
		}
		if avail[a.pt], err = ParseVerdaAvailability(resp.Body); err != nil {
			return res, fmt.Errorf("%s: %w", what, err)
		}
	}
	if offers, err = verdaPlace(offers, avail); err != nil {
		return res, err
	}
	if err := v.client.offerCap(len(offers)); err != nil { // http.max_source_offers
		return res, err
	}
	res.Offers = offers
	return res, nil
}

// verdaTokenRe is what an access token may look like: a JWT or another opaque token, safe in
// an Authorization header; at most maxVerdaToken bytes.
var verdaTokenRe = regexp.MustCompile(`^[A-Za-z0-9._~+/=-]{8,}$`)

const maxVerdaToken = 8 << 10

// token runs the OAuth2 client-credentials step: POST {base}/oauth2/token with the client id
// and secret as JSON, answered by {"access_token", "token_type", "expires_in", ...}. A token is
// taken per Fetch (they last an hour; a run takes seconds). The access and refresh tokens are
// secrets from the moment they are read.
func (v *Verda) token(ctx context.Context) (string, error) {
	body, err := json.Marshal(map[string]string{"grant_type": "client_credentials", "client_id": v.id, "client_secret": v.secret})
	if err != nil {
		return "", err
	}
	resp, err := v.client.Do(ctx, Request{
		Source: VerdaName, Method: http.MethodPost, URL: v.apiURL + verdaTokenPath, Body: body, Credentials: true,
		Header: http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}},
	})
	if err != nil {
		return "", err
	}
	if mt, _, _ := mime.ParseMediaType(resp.ContentType); mt != "application/json" {
		return "", fmt.Errorf("%w: content type %q, want application/json", ErrLayoutChanged, clipLine(resp.ContentType, 80))
	}
	var t struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		TokenType    string `json:"token_type"`
	}
	if err := decodeJSON(resp.Body, "the token answer", &t); err != nil {
		return "", err
	}
	v.client.red.AddSent(t.AccessToken, t.RefreshToken)
	switch {
	case t.AccessToken == "":
		return "", fmt.Errorf("%w: the token answer has no access_token", ErrLayoutChanged)
	case len(t.AccessToken) > maxVerdaToken || !verdaTokenRe.MatchString(t.AccessToken):
		return "", fmt.Errorf("%w: the access_token is not a token (%d bytes)", ErrLayoutChanged, len(t.AccessToken))
	case t.TokenType != "" && !strings.EqualFold(t.TokenType, "bearer"):
		return "", fmt.Errorf("%w: token_type %q, want Bearer", ErrLayoutChanged, clip(t.TokenType, 20))
	}
	return t.AccessToken, nil
}
