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
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// RunPod defaults (docs/providers.md §2.1, §2.9).
const (
	// RunPodName is the provider name RunPod offers are recorded under.
	RunPodName = "runpod"
	// DefaultRunPodURL is the GraphQL endpoint; gpuTypes answers without a key.
	DefaultRunPodURL = "https://api.runpod.io/graphql"
	// DefaultRunPodCatalogURL is the REST v2 GPU catalog, RunPod's one source of serverless
	// prices. It answers only to a key, so it is read only when one is configured.
	DefaultRunPodCatalogURL = "https://api.runpod.io/v2/catalog/gpus"
)

// runPodQuery asks for every GPU type with both clouds' on-demand and spot prices, the savings
// plans' term prices and the stock of the cheapest single-GPU pod (docs/providers.md §2.1).
const runPodQuery = `{ gpuTypes { id displayName manufacturer memoryInGb secureCloud communityCloud ` +
	`securePrice communityPrice secureSpotPrice communitySpotPrice ` +
	`oneWeekPrice oneMonthPrice threeMonthPrice sixMonthPrice maxGpuCount ` +
	`lowestPrice(input: {gpuCount: 1}) { minimumBidPrice uninterruptablePrice minVcpu minMemory stockStatus } } }`

// RunPodConfig configures the RunPod source. Zero fields take the defaults.
type RunPodConfig struct {
	URL        string // GraphQL endpoint (default DefaultRunPodURL)
	CatalogURL string // REST v2 GPU catalog, read only with APIKey (default DefaultRunPodCatalogURL)
	// APIKey is optional: GraphQL answers without one, the catalog only with one. When set it is
	// sent to both as "Authorization: Bearer", never in a URL, a log line, an error or a payload.
	APIKey string
}

// RunPod is the RunPod source: the GraphQL gpuTypes query (pods: on-demand, spot, savings
// plans) and, with a key, the REST v2 catalog (serverless).
type RunPod struct {
	cfg    RunPodConfig
	client *Client
	cfgErr error // an invalid URL, reported by Fetch
	logger *slog.Logger
}

// NewRunPod returns the RunPod source fetching through client. A nil logger discards. An invalid
// URL makes every Fetch fail with a clear error.
func NewRunPod(client *Client, cfg RunPodConfig, logger *slog.Logger) *RunPod {
	if cfg.URL == "" {
		cfg.URL = DefaultRunPodURL
	}
	if cfg.CatalogURL == "" {
		cfg.CatalogURL = DefaultRunPodCatalogURL
	}
	r := &RunPod{cfg: cfg, client: client, logger: orDiscard(logger)}
	for _, u := range []struct{ what, url string }{{"GraphQL URL", cfg.URL}, {"catalog URL", cfg.CatalogURL}} {
		if _, err := httpURL(u.what, u.url, false); err != nil {
			r.cfgErr = err
		}
	}
	return r
}

// Name returns "runpod".
func (r *RunPod) Name() string { return RunPodName }

// ParserVersion names the parser of its offers (ParserVersion).
func (r *RunPod) ParserVersion() string { return ParserVersion(RunPodName) }

// Fetch posts the gpuTypes query once and parses the answer (ParseRunPod); with a key it then
// reads the v2 catalog for the serverless prices (ParseRunPodCatalog). The GraphQL answer failing
// fails the fetch. The catalog failing (a refused key, a 5xx, a changed or cut answer) only loses
// the serverless offers: it is a problem of the run, which is then partial, and the pod offers
// are kept. Unlike the second request of the Verda, OCI, Vultr and DigitalOcean sources, the
// catalog completes nothing in the GraphQL offers (no location, GPU count or page of them): it
// adds offers of another price type, and the pod offers are whole without it.
func (r *RunPod) Fetch(ctx context.Context, run schema.Run) (res schema.Extract, err error) {
	if r.cfgErr != nil {
		return res, sourceError(RunPodName, r.cfgErr)
	}
	ctx, attempts := WithAttemptCounter(ctx)
	ctx = r.client.withBudget(ctx)
	defer func() { res.Attempts = attempts.Count() }()
	body, err := json.Marshal(map[string]string{"query": runPodQuery})
	if err != nil {
		return res, sourceError(RunPodName, err)
	}
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	if r.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+r.cfg.APIKey)
	}
	resp, err := r.client.Do(ctx, Request{Source: RunPodName, Method: http.MethodPost, URL: r.cfg.URL, Header: h, Body: body})
	if resp != nil {
		res.Payloads = append(res.Payloads, resp.Payload())
	}
	if err != nil {
		return res, sourceError(RunPodName, fmt.Errorf("querying gpuTypes: %w", err))
	}
	if mt, _, _ := mime.ParseMediaType(resp.ContentType); mt != "application/json" {
		return res, sourceError(RunPodName, fmt.Errorf("%w: content type %q, want application/json", ErrLayoutChanged, clipLine(resp.ContentType, 80)))
	}
	offers, problems, err := ParseRunPod(resp.Body, run, resp.URL)
	res.Offers, res.Problems = offers, problems
	if err != nil {
		return res, err
	}
	if r.cfg.APIKey == "" {
		r.logger.Debug("RunPod API key not set: no serverless prices (the v2 catalog answers only to a key)")
	} else {
		serverless, catalogProblems, err := r.fetchCatalog(ctx, run, &res)
		if err != nil {
			// First, so that capping the problems never hides it.
			problems = append([]error{fmt.Errorf("no serverless prices this run: %w", err)}, problems...)
		}
		res.Offers = append(res.Offers, serverless...)
		sortOffers(res.Offers)
		res.Problems = sourceErrors(RunPodName, capProblems(append(problems, catalogProblems...)))
	}
	if err := r.client.offerCap(len(res.Offers)); err != nil { // http.max_source_offers
		return res, sourceError(RunPodName, err)
	}
	r.logger.Debug("RunPod parsed", "offers", len(res.Offers), "problems", len(res.Problems), "requests", len(res.Payloads))
	return res, nil
}

// fetchCatalog reads the v2 catalog with the key and parses its serverless offers
// (parseRunPodCatalog). Its answer is a payload of the run whatever its status.
func (r *RunPod) fetchCatalog(ctx context.Context, run schema.Run, res *schema.Extract) (offers []schema.Offer, problems []error, err error) {
	resp, err := r.client.Do(ctx, Request{Source: RunPodName, URL: r.cfg.CatalogURL,
		Header: http.Header{"Authorization": {"Bearer " + r.cfg.APIKey}, "Accept": {"application/json"}}})
	if resp != nil {
		res.Payloads = append(res.Payloads, resp.Payload())
	}
	switch {
	case credentialsRefused(err):
		return nil, nil, fmt.Errorf("querying the v2 catalog: the API refused the key: %w", err)
	case err != nil:
		return nil, nil, fmt.Errorf("querying the v2 catalog: %w", err)
	}
	if mt, _, _ := mime.ParseMediaType(resp.ContentType); mt != "application/json" {
		return nil, nil, fmt.Errorf("the v2 catalog: %w: content type %q, want application/json", ErrLayoutChanged, clipLine(resp.ContentType, 80))
	}
	return parseRunPodCatalog(resp.Body, run, resp.URL)
}

// runPodGPUType is one entry of data.gpuTypes. Every price may be null.
type runPodGPUType struct {
	ID                 string       `json:"id"`
	DisplayName        string       `json:"displayName"`
	MemoryInGb         *float64     `json:"memoryInGb"`
	SecureCloud        *bool        `json:"secureCloud"`
	CommunityCloud     *bool        `json:"communityCloud"`
	SecurePrice        *exactNumber `json:"securePrice"` // prices are read exactly
	CommunityPrice     *exactNumber `json:"communityPrice"`
	SecureSpotPrice    *exactNumber `json:"secureSpotPrice"`
	CommunitySpotPrice *exactNumber `json:"communitySpotPrice"`
	// The savings plans' per-GPU rates for a commitment of a week, one, three or six months.
	OneWeekPrice    *exactNumber `json:"oneWeekPrice"`
	OneMonthPrice   *exactNumber `json:"oneMonthPrice"`
	ThreeMonthPrice *exactNumber `json:"threeMonthPrice"`
	SixMonthPrice   *exactNumber `json:"sixMonthPrice"`
	LowestPrice     *struct {
		MinimumBidPrice      *exactNumber `json:"minimumBidPrice"`
		UninterruptablePrice *exactNumber `json:"uninterruptablePrice"` // RunPod's spelling; not used (runPodOnDemand)
		MinVcpu              *float64     `json:"minVcpu"`
		MinMemory            *float64     `json:"minMemory"`
		StockStatus          *string      `json:"stockStatus"`
	} `json:"lowestPrice"`
}

// runPodPlaceholder is the price RunPod shows for a GPU type in a cloud that does not carry it
// (MI350X community 0.5 next to a secure 5.49, RTX 2000 Ada community 0.5 above a secure 0.24).
var runPodPlaceholder = decimal.RequireFromString("0.5")

// runPodSpread bounds how much dearer a type's secure price may be than its community price
// for either to vouch for a placeholder-valued price in the other cloud (runPodOnDemand). In
// the sample answers of docs/providers.md §2.8 secure costs 1.1 to 2.2 times community.
var runPodSpread = decimal.NewFromInt(3)

// ParseRunPod parses a RunPod GraphQL gpuTypes response into offers, sorted by GPU type id and
// cloud: one on-demand offer per GPU type and cloud (secure, community) that offers it, plus a
// spot offer where the spot price is real and a term offer per savings plan.
//
// Units and traps (docs/providers.md §2.3–2.6):
//   - Prices are USD per GPU-hour; an offer is one GPU (GPU count 1), so the offer price is the
//     per-GPU price. offer_id is "<gpu type id>:<cloud>".
//   - A price of 0 or null means not offered in that cloud, and so does a cloud flag
//     (secureCloud / communityCloud) that is false. Exactly 0.5 is RunPod's placeholder for a
//     cloud that does not carry the type, and nothing in the row tells it apart but the other
//     cloud's price: an on-demand 0.5 is kept only when the other cloud offers the type at a
//     price that is not 0.5 itself and the pair stands as community and secure prices do,
//     community ≤ secure ≤ 3 × community (runPodSpread). Else it is dropped like a 0 (MI350X
//     community 0.5 next to secure 5.49; RTX 2000 Ada community 0.5 above secure 0.24; a 0.5 in
//     both clouds, or in a type only one cloud offers). lowestPrice cannot confirm a 0.5: it
//     follows the community price, the placeholder included. A real 0.5 with nothing to vouch
//     for it is lost that way, the lesser error: a fake cheap price would lead the rankings.
//   - Spot (secureSpotPrice / communitySpotPrice) is recorded only when it is > 0, not 0.5 (a
//     placeholder sits below a real on-demand price as a real spot price does, so nothing can
//     vouch for it), and differs from the same cloud's on-demand price (the 2026 fixtures echo
//     on-demand; spot pods were retired).
//     lowestPrice.minimumBidPrice is not per cloud and is ignored.
//   - Term prices (oneWeekPrice, oneMonthPrice, threeMonthPrice, sixMonthPrice) are the
//     savings plans, which RunPod sells on its secure cloud only: each is a secure offer of
//     price type term_1w, term_1m, term_3m or term_6m, recorded when the secure on-demand price
//     stands and the term price is > 0 and below it (a commitment that saves nothing is not a
//     price RunPod sells: 0, null, a placeholder 0.5 above a cheaper on-demand price).
//   - The "unknown" GPU type row is dropped. memoryInGb is GB per GPU.
//   - Stock is lowestPrice.stockStatus (High/Medium/Low/None) of the cheapest 1-GPU pod across
//     clouds; a lowestPrice whose stockStatus is null means no stock (none); no lowestPrice at
//     all is unknown. minVcpu/minMemory give vCPUs and RAM when present.
//   - Intra-node class follows the catalog form factor (SXM → NVSwitch, NVL → NVLink, PCIe and
//     GeForce → PCIe); pods are single hosts (inter-node none).
//
// GraphQL errors come as HTTP 200 with {"errors": [...]}: with no data they are the error; with
// data they are problems (the first ten of them). A type that cannot be read is a problem, and
// the error is set when the body is not a whole gpuTypes response (ErrIncomplete when it is cut
// short, ErrLayoutChanged when it is something else), yields no offer (ErrNoOffers) or more
// than MaxOffers.
func ParseRunPod(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	types := &runPodTypes{run: run, sourceURL: sourceURL}
	var resp struct {
		Data struct {
			GPUTypes *runPodTypes `json:"gpuTypes"`
		} `json:"data"`
		Errors runPodErrors `json:"errors"`
	}
	resp.Data.GPUTypes = types
	if err := decodeJSON(body, "gpuTypes", &resp); err != nil {
		return nil, nil, sourceError(RunPodName, err)
	}
	gqlErrs := resp.Errors.errs
	if resp.Errors.more > 0 {
		gqlErrs = append(gqlErrs, fmt.Errorf("%d more graphql errors", resp.Errors.more))
	}
	gqlErrs = sourceErrors(RunPodName, gqlErrs)
	if resp.Data.GPUTypes == nil || !types.found {
		if len(gqlErrs) > 0 {
			return nil, nil, sourceError(RunPodName, errors.Join(gqlErrs...))
		}
		return nil, nil, sourceError(RunPodName, fmt.Errorf("%w: no data.gpuTypes in the response", ErrLayoutChanged))
	}
	offers, problems = types.offers, sourceErrors(RunPodName, capProblems(append(gqlErrs, types.problems...)))
	sortOffers(offers)
	if len(offers) == 0 {
		return nil, problems, sourceError(RunPodName, ErrNoOffers)
	}
	return offers, problems, nil
}

// runPodTypes decodes data.gpuTypes one type at a time.
type runPodTypes struct {
	run       schema.Run
	sourceURL string
	found     bool
	offers    []schema.Offer
	problems  []error
}

func (t *runPodTypes) UnmarshalJSON(data []byte) error {
	t.found = true
	return eachElement(data, func(i int, raw []byte) error {
		if i >= MaxOffers {
			return fmt.Errorf("%w: more than %d GPU types", ErrTooManyOffers, MaxOffers)
		}
		var g runPodGPUType
		if err := json.Unmarshal(raw, &g); err != nil {
			t.problems = append(t.problems, sourceError(RunPodName, fmt.Errorf("gpu type #%d: decoding: %w", i, err)))
			return nil
		}
		if strings.EqualFold(g.ID, "unknown") || (g.ID == "" && strings.EqualFold(g.DisplayName, "unknown")) {
			return nil
		}
		if g.ID == "" {
			t.problems = append(t.problems, sourceError(RunPodName, fmt.Errorf("gpu type #%d (%q): no id", i, clip(g.DisplayName, 60))))
			return nil
		}
		t.offers = append(t.offers, runPodOffers(g, t.run, t.sourceURL)...)
		return offerCap(len(t.offers), MaxOffers)
	})
}

// runPodErrors decodes a GraphQL errors array, keeping the first ten messages, clipped.
type runPodErrors struct {
	errs []error
	more int
}

func (e *runPodErrors) UnmarshalJSON(data []byte) error {
	if string(bytes.TrimSpace(data)) == "null" {
		return nil
	}
	return eachElement(data, func(_ int, raw []byte) error {
		if len(e.errs) == 10 {
			e.more++
			return nil
		}
		var m struct {
			Message string `json:"message"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("%w: graphql error: %w", ErrLayoutChanged, err)
		}
		e.errs = append(e.errs, fmt.Errorf("graphql error: %s", clipLine(m.Message, 300)))
		return nil
	})
}

// runPodOffer is the offer of one GPU of RunPod's type id (named name, with memory GB of VRAM
// when given) that the pod and serverless offers of the type start from, stamped by run.
func runPodOffer(run schema.Run, sourceURL, id, name string, memory *float64) schema.Offer {
	o := schema.Offer{
		SourceURL: sourceURL,
		Provider:  RunPodName,
		GPUCount:  1,
		InterNode: schema.InterNone,
		Stock:     schema.StockUnknown,
		DQFlags:   []schema.DQFlag{},
	}
	run.Stamp(&o)
	vram := 0.0
	if positive(memory) {
		vram = *memory
	}
	o.IntraNode = intraFromForm(applyGPU(&o, RunPodName, id, vram, name))
	return o
}

func runPodOffers(g runPodGPUType, run schema.Run, sourceURL string) []schema.Offer {
	base := runPodOffer(run, sourceURL, g.ID, g.DisplayName, g.MemoryInGb)
	if lp := g.LowestPrice; lp != nil {
		base.Stock = runPodStock(lp.StockStatus)
		if positive(lp.MinVcpu) {
			base.VCPUs = ptr(*lp.MinVcpu)
		}
		if positive(lp.MinMemory) {
			base.RAMGB = ptr(*lp.MinMemory)
		}
	}

	secure, community := runPodOnDemand(g)
	var out []schema.Offer
	for _, c := range []struct {
		tier  schema.Tier
		name  string
		flag  *bool
		price *exactNumber // on-demand, as runPodOnDemand kept it
		spot  *exactNumber
	}{
		{schema.TierSecure, "secure", g.SecureCloud, secure, g.SecureSpotPrice},
		{schema.TierCommunity, "community", g.CommunityCloud, community, g.CommunitySpotPrice},
	} {
		if c.flag != nil && !*c.flag {
			continue // the cloud says it does not offer this type
		}
		o := base
		o.Tier = c.tier
		o.OfferID = g.ID + ":" + c.name
		var onDemand schema.Offer
		od := c.price != nil
		if od {
			onDemand = priced(o, schema.OnDemand, c.price.Decimal)
			out = append(out, onDemand)
		}
		if od && c.tier == schema.TierSecure {
			out = append(out, runPodTerms(g, o, c.price)...)
		}
		if c.spot.positive() && !runPodIsPlaceholder(c.spot) {
			// A spot price that is the on-demand price as stored is an echo, not an offer.
			if spot := priced(o, schema.Spot, c.spot.Decimal); !od || !spot.PriceUSDPerHour.Equal(onDemand.PriceUSDPerHour) {
				out = append(out, spot)
			}
		}
	}
	return out
}

// runPodTerms returns the secure offer o at each savings-plan price of g that is below the
// secure on-demand price.
func runPodTerms(g runPodGPUType, o schema.Offer, onDemand *exactNumber) []schema.Offer {
	var out []schema.Offer
	for _, t := range []struct {
		pt    schema.PriceType
		price *exactNumber
	}{
		{schema.Term1W, g.OneWeekPrice}, {schema.Term1M, g.OneMonthPrice},
		{schema.Term3M, g.ThreeMonthPrice}, {schema.Term6M, g.SixMonthPrice},
	} {
		if t.price.positive() && t.price.LessThan(onDemand.Decimal) {
			out = append(out, priced(o, t.pt, t.price.Decimal))
		}
	}
	return out
}

// runPodOnDemand returns the on-demand prices of g that stand, nil for a cloud whose flag is
// false, whose price is 0 or null, or whose price is the placeholder with nothing to vouch for
// it. Only the other cloud's price can: lowestPrice.uninterruptablePrice follows the community
// price, placeholder and all (RTX 2000 Ada: 0.5 while secure is 0.24), so it confirms nothing.
// A 0.5 stands when the other cloud's price is offered, not 0.5 itself, and the pair is as
// community and secure prices are: community ≤ secure ≤ runPodSpread × community. A community
// 0.5 thus needs a secure price from 0.5 to 1.5, a secure 0.5 a community price from 1/6 to 0.5.
func runPodOnDemand(g runPodGPUType) (secure, community *exactNumber) {
	offered := func(flag *bool, p *exactNumber) *exactNumber {
		if (flag != nil && !*flag) || !p.positive() {
			return nil
		}
		return p
	}
	secure, community = offered(g.SecureCloud, g.SecurePrice), offered(g.CommunityCloud, g.CommunityPrice)
	sp, cp := runPodIsPlaceholder(secure), runPodIsPlaceholder(community)
	// Two 0.5s vouch for nothing, and a lone 0.5 has no other price to vouch for it.
	paired := secure != nil && community != nil && !(sp && cp) &&
		community.LessThanOrEqual(secure.Decimal) && secure.LessThanOrEqual(community.Mul(runPodSpread))
	if sp && !paired {
		secure = nil
	}
	if cp && !paired {
		community = nil
	}
	return secure, community
}

// runPodIsPlaceholder reports whether p is exactly runPodPlaceholder (0.5, 0.50 and 5e-1 alike).
func runPodIsPlaceholder(p *exactNumber) bool { return p != nil && p.Equal(runPodPlaceholder) }

func runPodStock(s *string) schema.Stock {
	if s == nil {
		return schema.StockNone
	}
	switch strings.ToLower(strings.TrimSpace(*s)) {
	case "high":
		return schema.StockHigh
	case "medium":
		return schema.StockMedium
	case "low":
		return schema.StockLow
	case "none", "":
		return schema.StockNone
	}
	return schema.StockUnknown
}

// ParseRunPodCatalog parses an answer of RunPod's REST v2 catalog (GET /v2/catalog/gpus,
// {"gpus": [...]}) into its serverless offers, sorted by GPU type id: one per GPU type whose
// price.serverless is set (docs/providers.md §2.9).
//
//   - price.serverless is the list price in USD per hour of one GPU of a serverless worker,
//     billed while the worker runs; the offer is one GPU (GPU count 1) at that price, of price
//     type serverless. offer_id is "<gpu type id>:serverless", apart from the pods'
//     "<id>:secure" and "<id>:community" whatever the price type.
//   - An absent, null or zero price.serverless means the type is not sold serverless: no
//     offer, no problem. A negative, implausibly high or malformed one is a problem naming the
//     type and the field. A number given as a string is read as its number (jsonPrice).
//   - The GPU is resolved as the GraphQL rows are: the id (with memory, GB per GPU), then name;
//     intra-node follows its form factor. The "unknown" row is dropped.
//   - Tier secure: RunPod runs the workers and places them in GPU pools of its own choosing
//     (pool, e.g. "ADA_24"); no host of the community cloud is rented. Region empty and stock
//     unknown: the price is one for every location, and availability is not asked for.
//     Inter-node none: a worker is one host.
//   - price.secure and price.community are not read: the pods' prices come from GraphQL, with
//     their placeholder rules (ParseRunPod).
//
// A type that cannot be read or is listed twice is a problem. The error is set when the body is
// not a whole catalog answer (ErrIncomplete when it is cut short, ErrLayoutChanged when it is
// something else: no gpus array, or types none of which has an id and a price object), yields
// no offer (ErrNoOffers: no type has a serverless price) or has more than MaxOffers types.
// Errors and problems name the provider.
func ParseRunPodCatalog(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	offers, problems, err = parseRunPodCatalog(body, run, sourceURL)
	return offers, sourceErrors(RunPodName, problems), sourceError(RunPodName, err)
}

// parseRunPodCatalog is ParseRunPodCatalog with errors and problems that do not name the
// provider yet (the source adds what they are about).
func parseRunPodCatalog(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error) {
	c := &runPodCatalog{run: run, sourceURL: sourceURL, seen: map[string]bool{}}
	var resp struct {
		GPUs *runPodCatalog `json:"gpus"`
	}
	resp.GPUs = c
	if err := decodeJSON(body, "the v2 catalog", &resp); err != nil {
		return nil, nil, err
	}
	problems := capProblems(c.problems)
	switch {
	case resp.GPUs == nil || !c.found:
		return nil, nil, fmt.Errorf("%w: no gpus array in the v2 catalog", ErrLayoutChanged)
	case c.n > 0 && c.keyed == 0:
		return nil, problems, fmt.Errorf("%w: %d GPU types in the v2 catalog, none with an id and a price object", ErrLayoutChanged, c.n)
	case len(c.offers) == 0:
		return nil, problems, fmt.Errorf("%w: %d GPU types in the v2 catalog, none with a serverless price", ErrNoOffers, c.n)
	}
	sortOffers(c.offers)
	return c.offers, problems, nil
}

// runPodCatalogGPU is one element of the catalog's gpus array (the fields read).
type runPodCatalogGPU struct {
	ID     string   `json:"id"`
	Name   string   `json:"name"`
	Memory *float64 `json:"memory"` // GB per GPU
	Price  *struct {
		Serverless json.RawMessage `json:"serverless"` // USD per GPU-hour of a serverless worker; optional
	} `json:"price"`
}

// runPodCatalog decodes the catalog's gpus array one type at a time.
type runPodCatalog struct {
	run       schema.Run
	sourceURL string
	found     bool
	n         int // elements
	keyed     int // elements with an id and a price object: the layout is the known one
	seen      map[string]bool
	offers    []schema.Offer
	problems  []error
}

func (c *runPodCatalog) UnmarshalJSON(data []byte) error {
	c.found = true
	return eachElement(data, func(i int, raw []byte) error {
		if c.n++; c.n > MaxOffers {
			return fmt.Errorf("%w: more than %d GPU types in the v2 catalog", ErrTooManyOffers, MaxOffers)
		}
		var g runPodCatalogGPU
		if err := json.Unmarshal(raw, &g); err != nil {
			c.problems = append(c.problems, fmt.Errorf("v2 catalog: gpu #%d: %w", i, decodeProblem(err)))
			return nil
		}
		if g.ID != "" && g.Price != nil {
			c.keyed++
		}
		switch {
		case strings.EqualFold(g.ID, "unknown"):
			return nil
		case g.ID == "":
			c.problems = append(c.problems, fmt.Errorf("v2 catalog: gpu #%d (%q): no id", i, clip(g.Name, 60)))
			return nil
		case c.seen[g.ID]:
			c.problems = append(c.problems, fmt.Errorf("v2 catalog: gpu %q: listed twice", clip(g.ID, 60)))
			return nil
		}
		c.seen[g.ID] = true
		o, ok, err := runPodServerless(g, c.run, c.sourceURL)
		switch {
		case err != nil:
			c.problems = append(c.problems, fmt.Errorf("v2 catalog: gpu %q: %w", clip(g.ID, 60), err))
		case ok:
			c.offers = append(c.offers, o)
		}
		return nil
	})
}

// runPodServerless is the serverless offer of one catalog type; ok is false when the type has
// no serverless price.
func runPodServerless(g runPodCatalogGPU, run schema.Run, sourceURL string) (o schema.Offer, ok bool, err error) {
	if g.Price == nil {
		return o, false, errors.New("no price object")
	}
	price, ok, err := jsonPrice(g.Price.Serverless)
	switch {
	case err != nil:
		return o, false, fmt.Errorf("price.serverless: %w", err)
	case !ok:
		return o, false, nil
	}
	o = runPodOffer(run, sourceURL, g.ID, g.Name, g.Memory)
	o.OfferID, o.Tier = g.ID+":serverless", schema.TierSecure
	return priced(o, schema.Serverless, price), true, nil
}
