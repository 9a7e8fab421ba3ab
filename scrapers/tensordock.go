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
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// TensorDock defaults (docs/providers.md §11).
const (
	// TensorDockName is the provider name TensorDock offers are recorded under.
	TensorDockName = "tensordock"
	// DefaultTensorDockURL is the base of TensorDock's v2 API; every call needs a token.
	DefaultTensorDockURL = "https://dashboard.tensordock.com/api/v2"
)

// The all-in price recipe (docs/providers.md §11.3): TensorDock's price_per_hr is the GPU
// alone, and vCPUs, RAM and disk are billed by the unit at the host's rates. Each GPU of an
// offer is priced with this share of the host, so that its price compares with the all-in
// prices of the other providers. 100 GB is TensorDock's smallest disk.
const (
	tensorDockVCPUsPerGPU  = 8
	tensorDockRAMGBPerGPU  = 24
	tensorDockDiskGBPerGPU = 100
)

// TensorDockConfig configures the TensorDock source. Zero fields take the defaults.
type TensorDockConfig struct {
	URL string // API base (default DefaultTensorDockURL); /hostnodes and /locations are under it
	// APIKey is the API token, required: it is sent as "Authorization: Bearer <token>", never in
	// a URL, a log line, an error or a payload.
	APIKey  string
	Timeout time.Duration // bound on the whole fetch (0 = the run's ctx only)
}

// TensorDock is the TensorDock source: the hostnode list of its v2 API (ParseTensorDock), or
// the location list where the hostnode list is not found.
type TensorDock struct {
	client *Client
	cfg    TensorDockConfig
	cfgErr error
	logger *slog.Logger
}

// NewTensorDock returns the TensorDock source fetching through client. A nil logger discards.
// An invalid URL or a missing token makes every Fetch fail with a clear error.
func NewTensorDock(client *Client, cfg TensorDockConfig, logger *slog.Logger) *TensorDock {
	cfg.APIKey = strings.TrimSpace(cfg.APIKey)
	if cfg.URL == "" {
		cfg.URL = DefaultTensorDockURL
	}
	cfg.URL = strings.TrimRight(cfg.URL, "/")
	t := &TensorDock{client: client, cfg: cfg, logger: orDiscard(logger)}
	if _, err := httpURL("API URL", cfg.URL, false); err != nil {
		t.cfgErr = err
	}
	if cfg.APIKey == "" {
		t.cfgErr = errors.New("no API token: TensorDock publishes its prices only to an account's token")
	}
	if client == nil {
		t.cfgErr = errors.New("no HTTP client")
	}
	return t
}

// Name returns "tensordock".
func (t *TensorDock) Name() string { return TensorDockName }

// ParserVersion names the parser of its offers (ParserVersion).
func (t *TensorDock) ParserVersion() string { return ParserVersion(TensorDockName) }

// Fetch reads GET /hostnodes and parses it. When that endpoint is not found (HTTP 404) it
// reads GET /locations instead, the older list of the same prices by location. A refused token
// (401, 403) is an authentication error; an empty list is the source unavailable
// (ErrNoOffers), never an empty market.
func (t *TensorDock) Fetch(ctx context.Context, run schema.Run) (res schema.Extract, err error) {
	if t.cfgErr != nil {
		return res, sourceError(TensorDockName, t.cfgErr)
	}
	if t.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t.cfg.Timeout)
		defer cancel()
	}
	ctx, attempts := WithAttemptCounter(ctx)
	ctx = t.client.withBudget(ctx)
	defer func() { res.Attempts = attempts.Count() }()
	h := http.Header{"Accept": {"application/json"}, "Authorization": {"Bearer " + t.cfg.APIKey}}
	var resp *Response
	for _, list := range []string{"hostnodes", "locations"} {
		resp, err = t.client.Do(ctx, Request{Source: TensorDockName, URL: t.cfg.URL + "/" + list, Header: h})
		if resp != nil {
			res.Payloads = append(res.Payloads, resp.Payload())
		}
		var se *StatusError
		switch {
		case err == nil:
		case credentialsRefused(err):
			return res, sourceError(TensorDockName, fmt.Errorf("listing %s: the API token was refused: %w", list, err))
		case errors.As(err, &se) && se.StatusCode == http.StatusNotFound && list == "hostnodes":
			t.logger.Debug("TensorDock hostnodes not found: reading the locations")
			continue
		default:
			return res, sourceError(TensorDockName, fmt.Errorf("listing %s: %w", list, err))
		}
		break
	}
	if mt, _, _ := mime.ParseMediaType(resp.ContentType); mt != "application/json" {
		return res, sourceError(TensorDockName, fmt.Errorf("%w: content type %q, want application/json", ErrLayoutChanged, clipLine(resp.ContentType, 80)))
	}
	offers, problems, err := ParseTensorDock(resp.Body, run, resp.URL)
	if err == nil {
		err = sourceError(TensorDockName, t.client.offerCap(len(offers))) // http.max_source_offers
	}
	res.Offers, res.Problems = offers, problems
	if err != nil {
		res.Offers = nil
		return res, err
	}
	t.logger.Debug("TensorDock parsed", "offers", len(offers), "problems", len(problems), "from", resp.URL)
	return res, nil
}

// ParseTensorDock parses GET /hostnodes ({"data": {"hostnodes": [...]}}) or GET /locations
// ({"data": {"locations": [...]}}) into on-demand offers, sorted by offer id.
//
// Units and rules (docs/providers.md §11.2–11.4):
//   - One offer per hostnode and GPU model (per location and GPU model for /locations): id
//     "<hostnode or location id>/<v0Name>". Its GPU count is the GPUs free now (availableCount,
//     also its AvailableCount) or, in /locations, the most one VM may take there (max_count,
//     a limit: AvailableCount is left unknown); 0 is not offered and skipped.
//   - price_per_hr is USD per GPU-hour for the GPU alone. The offer's per-GPU price is that
//     plus the recipe's share of the host (8 vCPUs, 24 GB RAM and 100 GB disk per GPU) at the
//     host's per-unit rates (pricing.per_vcpu_hr, per_gb_ram_hr, per_gb_storage_hr; a GPU
//     entry's own pricing first), exact, rounded once (SetPricePerGPU); the offer's host
//     figures are the recipe's. An offer a rate is missing for is left out and reported: a
//     missing rate is never taken as 0.
//   - The GPU is its v0Name ("h100-sxm5-80gb"): the model and form factor (-pcie-, -sxm4-,
//     -sxm5-) from its tokens, the VRAM from its trailing -NNgb. displayName is not read (its
//     format varies). The intra-node class follows the form (intraFromForm); nothing says how
//     hosts are networked: inter-node unknown.
//   - Region "<country>-<city>" (lower case, words joined by "-"): "usa-ashburn"; Country the
//     country when it is a two-letter code. Tier community (a marketplace of independent
//     hosts). No spot or committed price is published.
//
// An entry that cannot be read (a field of the wrong type, a negative or zero price, a missing
// rate) is left out and reported in problems, naming the hostnode, the GPU and the field. The
// error is set when the body is not a whole list (ErrIncomplete when it is cut short,
// ErrLayoutChanged for another layout, the v0 one whose gpus is an object included), when the
// list is empty (ErrNoOffers: the source is unavailable, as the keyless list has been since
// mid-2026), when it yields no offer (ErrNoOffers) or more than MaxOffers.
func ParseTensorDock(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	hosts := &tensorDockHosts{run: run, sourceURL: sourceURL, seen: map[string]bool{}}
	locations := &tensorDockHosts{run: run, sourceURL: sourceURL, seen: map[string]bool{}, locations: true}
	resp := struct {
		Data *tensorDockData `json:"data"`
	}{Data: &tensorDockData{Hostnodes: hosts, Locations: locations}}
	if err := decodeJSON(body, "hostnodes", &resp); err != nil {
		return nil, nil, sourceError(TensorDockName, err)
	}
	list := hosts
	switch {
	case hosts.found && locations.found:
		return nil, nil, sourceError(TensorDockName, fmt.Errorf("%w: both data.hostnodes and data.locations in one response", ErrLayoutChanged))
	case locations.found:
		list = locations
	case !hosts.found:
		return nil, nil, sourceError(TensorDockName, fmt.Errorf("%w: neither data.hostnodes nor data.locations in the response", ErrLayoutChanged))
	}
	problems = sourceErrors(TensorDockName, capProblems(list.problems))
	switch {
	case list.n == 0:
		return nil, problems, sourceError(TensorDockName, fmt.Errorf("%w: the source is unavailable: the %s list is empty", ErrNoOffers, list.what()))
	case len(list.offers) == 0:
		return nil, problems, sourceError(TensorDockName, fmt.Errorf("%w: %d %s, no GPU available at a price", ErrNoOffers, list.n, list.what()))
	}
	sortOffers(list.offers)
	return list.offers, problems, nil
}

// tensorDockData is the envelope's data object: one of the two lists.
type tensorDockData struct {
	Hostnodes *tensorDockHosts `json:"hostnodes"`
	Locations *tensorDockHosts `json:"locations"`
}

// tensorDockHosts decodes a hostnode (or location) array one element at a time.
type tensorDockHosts struct {
	run       schema.Run
	sourceURL string
	locations bool // the /locations list
	found     bool
	n         int
	seen      map[string]bool
	offers    []schema.Offer
	problems  []error
}

func (l *tensorDockHosts) what() string {
	if l.locations {
		return "locations"
	}
	return "hostnodes"
}

func (l *tensorDockHosts) UnmarshalJSON(data []byte) error {
	l.found = true
	return eachElement(data, func(i int, raw []byte) error {
		if l.n++; l.n > MaxOffers {
			return fmt.Errorf("%w: more than %d %s", ErrTooManyOffers, MaxOffers, l.what())
		}
		var h tensorDockHost
		if err := json.Unmarshal(raw, &h); err != nil {
			l.problems = append(l.problems, fmt.Errorf("%s #%d: decoding: %w", strings.TrimSuffix(l.what(), "s"), i, decodeProblem(err)))
			return nil
		}
		id := strings.TrimSpace(h.ID)
		where := fmt.Sprintf("hostnode %q", clip(id, 60))
		if l.locations {
			where = fmt.Sprintf("location %q", clip(id, 60))
		}
		switch {
		case id == "":
			l.problems = append(l.problems, fmt.Errorf("%s #%d: no id", strings.TrimSuffix(l.what(), "s"), i))
			return nil
		case l.seen[id]:
			l.problems = append(l.problems, fmt.Errorf("%s: listed twice", where))
			return nil
		}
		l.seen[id] = true
		gpusRaw, place := h.Available.GPUs, h.Location
		if l.locations {
			gpusRaw, place = h.GPUs, tensorDockPlace{City: h.City, StateProvince: h.StateProvince, Country: h.Country}
		}
		offers, problems, err := tensorDockOffers(id, where, gpusRaw, h.Pricing, place, l.locations, l.run, l.sourceURL)
		if err != nil {
			return err
		}
		l.problems = append(l.problems, problems...)
		l.offers = append(l.offers, offers...)
		return offerCap(len(l.offers), MaxOffers)
	})
}

// tensorDockHost is a hostnode of /hostnodes or a location of /locations: the fields of both,
// each list using its own. Numbers are read per field (jsonNumber), so a number of the wrong
// type is a problem of its entry, named, and a number sent as a float is read all the same.
type tensorDockHost struct {
	ID        string `json:"id"`
	Available struct {
		GPUs json.RawMessage `json:"gpus"`
	} `json:"available_resources"` // hostnodes
	Pricing  *tensorDockPricing `json:"pricing"`  // hostnodes
	Location tensorDockPlace    `json:"location"` // hostnodes
	// A location's own place and GPU list.
	City          string          `json:"city"`
	StateProvince string          `json:"stateprovince"`
	Country       string          `json:"country"`
	GPUs          json.RawMessage `json:"gpus"`
}

type tensorDockPlace struct {
	City          string `json:"city"`
	StateProvince string `json:"stateprovince"`
	Country       string `json:"country"`
}

// tensorDockPricing are a host's per-unit rates, USD per hour.
type tensorDockPricing struct {
	PerVCPUHr      json.RawMessage `json:"per_vcpu_hr"`
	PerGBRAMHr     json.RawMessage `json:"per_gb_ram_hr"`
	PerGBStorageHr json.RawMessage `json:"per_gb_storage_hr"`
}

// tensorDockGPU is a GPU entry: available_resources.gpus[] of a hostnode ({v0Name,
// availableCount, price_per_hr}) or gpus[] of a location ({v0Name, max_count, price_per_hr,
// pricing, ...}).
type tensorDockGPU struct {
	V0Name         string             `json:"v0Name"`
	AvailableCount json.RawMessage    `json:"availableCount"`
	MaxCount       json.RawMessage    `json:"max_count"`
	PricePerHr     json.RawMessage    `json:"price_per_hr"`
	Pricing        *tensorDockPricing `json:"pricing"`
}

var tensorDockVRAMRe = regexp.MustCompile(`-(\d+)gb$`) // h100-sxm5-80gb

// tensorDockOffers turns one hostnode's (or location's) GPU list into offers. The error is
// set only for a changed layout (gpus an object, as in the v0 API), which fails the answer.
func tensorDockOffers(id, where string, gpusRaw json.RawMessage, hostPricing *tensorDockPricing, place tensorDockPlace, locations bool, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	g := bytes.TrimSpace(gpusRaw)
	switch {
	case len(g) == 0 || string(g) == "null":
		return nil, nil, nil // a host without GPUs
	case g[0] == '{':
		return nil, nil, fmt.Errorf("%w: %s: gpus is an object (the v0 layout), not a list", ErrLayoutChanged, where)
	case g[0] != '[':
		return nil, []error{fmt.Errorf("%s: gpus is %s, not a list", where, jsonKind(g))}, nil
	}
	seen := map[string]bool{}
	err = eachElement(g, func(i int, raw []byte) error {
		var e tensorDockGPU
		if err := json.Unmarshal(raw, &e); err != nil {
			problems = append(problems, fmt.Errorf("%s: gpu #%d: decoding: %w", where, i, decodeProblem(err)))
			return nil
		}
		name := strings.TrimSpace(e.V0Name)
		if name == "" {
			problems = append(problems, fmt.Errorf("%s: gpu #%d: no v0Name", where, i))
			return nil
		}
		if seen[name] {
			problems = append(problems, fmt.Errorf("%s: gpu %q: listed twice", where, clip(name, 60)))
			return nil
		}
		seen[name] = true
		pricing := e.Pricing
		if pricing == nil {
			pricing = hostPricing
		}
		countRaw, countField := e.AvailableCount, "availableCount"
		if locations {
			countRaw, countField = e.MaxCount, "max_count"
		}
		o, ok, err := tensorDockOffer(id, name, countRaw, countField, e.PricePerHr, pricing, place, run, sourceURL)
		switch {
		case err != nil:
			problems = append(problems, fmt.Errorf("%s: gpu %q: %w", where, clip(name, 60), err))
		case ok:
			offers = append(offers, o)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("%s: gpus: %w", where, err)
	}
	return offers, problems, nil
}

// tensorDockOffer is the offer of one GPU model on one host; ok is false when none is free.
func tensorDockOffer(id, name string, countRaw json.RawMessage, countField string, priceRaw json.RawMessage, pricing *tensorDockPricing, place tensorDockPlace, run schema.Run, sourceURL string) (o schema.Offer, ok bool, err error) {
	n, present, err := jsonNumber(countRaw)
	switch {
	case err != nil:
		return o, false, fmt.Errorf("%s: %w", countField, err)
	case !present:
		return o, false, fmt.Errorf("no %s", countField)
	case n.IsZero():
		return o, false, nil // none free: not offered
	case n.IsNegative() || !n.IsInteger() || n.GreaterThan(decimal.NewFromInt(1<<10)):
		return o, false, fmt.Errorf("%s %s is not a GPU count", countField, n)
	}
	count := n.IntPart()

	gpu, present, err := jsonNumber(priceRaw)
	switch {
	case err != nil:
		return o, false, fmt.Errorf("price_per_hr: %w", err)
	case !present:
		return o, false, errors.New("no price_per_hr")
	case !gpu.IsPositive():
		return o, false, fmt.Errorf("price_per_hr %s is not a price", gpu)
	}
	if pricing == nil {
		return o, false, errors.New("no pricing: no all-in price (a missing rate is never taken as 0)")
	}
	perGPU := gpu
	for _, r := range []struct {
		field string
		raw   json.RawMessage
		units int64
	}{
		{"per_vcpu_hr", pricing.PerVCPUHr, tensorDockVCPUsPerGPU},
		{"per_gb_ram_hr", pricing.PerGBRAMHr, tensorDockRAMGBPerGPU},
		{"per_gb_storage_hr", pricing.PerGBStorageHr, tensorDockDiskGBPerGPU},
	} {
		rate, present, err := jsonNumber(r.raw)
		switch {
		case err != nil:
			return o, false, fmt.Errorf("pricing.%s: %w", r.field, err)
		case !present:
			return o, false, fmt.Errorf("no pricing.%s: no all-in price (a missing rate is never taken as 0)", r.field)
		case rate.IsNegative():
			return o, false, fmt.Errorf("pricing.%s %s is negative", r.field, rate)
		}
		perGPU = perGPU.Add(rate.Mul(decimal.NewFromInt(r.units)))
	}
	if !perGPU.Round(schema.PriceDecimals).IsPositive() {
		return o, false, fmt.Errorf("price_per_hr %s: the all-in price %s rounds to nothing", gpu, perGPU)
	}

	o = schema.Offer{
		SourceURL: sourceURL,
		Provider:  TensorDockName,
		OfferID:   clip(id, 100) + "/" + clip(name, 100),
		Tier:      schema.TierCommunity,
		Region:    tensorDockRegion(place),
		Country:   countryCode(place.Country),
		GPUCount:  uint16(count),
		VCPUs:     ptr(float64(count * tensorDockVCPUsPerGPU)),
		RAMGB:     ptr(float64(count * tensorDockRAMGBPerGPU)),
		DiskGB:    ptr(float64(count * tensorDockDiskGBPerGPU)),
		InterNode: schema.InterUnknown,
		Stock:     schema.StockUnknown,
		DQFlags:   []schema.DQFlag{},
	}
	run.Stamp(&o)
	vram := 0.0
	if m := tensorDockVRAMRe.FindStringSubmatch(strings.ToLower(name)); m != nil {
		vram, _ = strconv.ParseFloat(m[1], 64)
	}
	if countField == "availableCount" {
		o.AvailableCount = ptr(uint32(count))
	}
	m := applyGPU(&o, TensorDockName, clip(name, 100), vram)
	o.IntraNode = intraFromForm(m)
	return pricedPerGPU(o, schema.OnDemand, perGPU), true, nil
}

// tensorDockRegion is the region key "<country>-<city>" of a free-text place, lower case with
// each run of other characters than letters and digits one "-" ("usa-ashburn"); "" when
// neither is given.
func tensorDockRegion(p tensorDockPlace) string {
	var words []string
	for _, s := range []string{p.Country, p.City} {
		words = append(words, strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !unicode.IsLetter(r) && !unicode.IsDigit(r)
		})...)
	}
	return clip(strings.Join(words, "-"), 64)
}
