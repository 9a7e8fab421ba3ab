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
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
)

// DigitalOcean defaults (docs/providers.md §13).
const (
	// DigitalOceanName is the provider name DigitalOcean GPU Droplet offers are recorded under.
	DigitalOceanName = "digitalocean"
	// DefaultDigitalOceanAPIURL lists every Droplet size (CPU and GPU); it needs a token.
	DefaultDigitalOceanAPIURL = "https://api.digitalocean.com/v2/sizes?per_page=200"
	// DefaultDigitalOceanPageURL is the Droplet pricing page of DigitalOcean's documentation,
	// read when no token is set.
	DefaultDigitalOceanPageURL = "https://docs.digitalocean.com/products/droplets/details/pricing/"
	// digitaloceanMaxPages bounds the pages of one size list: at 200 sizes a page the list has
	// one; links that never end are a changed layout, not a larger market.
	digitaloceanMaxPages = 20
)

// DigitalOceanConfig configures the DigitalOcean source. Zero fields take the defaults.
type DigitalOceanConfig struct {
	// APIKey is a DigitalOcean API token, sent as "Authorization: Bearer <token>". It is a
	// secret: never logged, never put in a URL, an error or a payload. Empty means the public
	// pricing page is read instead.
	APIKey    string
	APIURL    string        // the size list (default DefaultDigitalOceanAPIURL)
	PageURL   string        // public pricing page, read without a token (default DefaultDigitalOceanPageURL)
	UserAgent string        // for the pricing page (default BrowserUserAgent: the default one gets 403); the API gets the client's
	Timeout   time.Duration // bound on the whole fetch, every page and retry included, within the run's ctx (default 2m)
	Delay     time.Duration // colly LimitRule delay after each page request (default 1s; negative = none)
}

// DigitalOcean is the DigitalOcean GPU Droplet source. With an API token it reads the size list
// of the API, every page (ParseDigitalOcean); without one the pricing page of the documentation
// through colly (ParseDigitalOceanPage). The two give different offer ids (the size slug and
// its region, "gpu-h100x8-640gb/nyc2", or the page's label, "NVIDIA H100 (8x)"): the page names
// neither slugs nor regions, and guessing them would splice two sources into one price history.
type DigitalOcean struct {
	client *Client
	key    string
	apiURL *url.URL
	page   pageFetch
	cfgErr error // an invalid URL, reported by Fetch
	logger *slog.Logger
}

// NewDigitalOcean returns the DigitalOcean source fetching through client. A nil logger
// discards. An invalid URL makes every Fetch fail with a clear error.
func NewDigitalOcean(client *Client, cfg DigitalOceanConfig, logger *slog.Logger) *DigitalOcean {
	d := &DigitalOcean{client: client, key: strings.TrimSpace(cfg.APIKey), logger: orDiscard(logger)}
	d.page, d.cfgErr = newPageFetch(DigitalOceanName, cfg.PageURL, DefaultDigitalOceanPageURL, cfg.UserAgent, cfg.Timeout, cfg.Delay)
	raw := cfg.APIURL
	if raw == "" {
		raw = DefaultDigitalOceanAPIURL
	}
	u, err := httpURL("API URL", raw, false)
	if err != nil {
		d.cfgErr = err
	}
	d.apiURL = u
	if client == nil {
		d.cfgErr = errors.New("no HTTP client")
	}
	return d
}

// Name returns "digitalocean".
func (d *DigitalOcean) Name() string { return DigitalOceanName }

// ParserVersion names the parser of its offers (ParserVersion).
func (d *DigitalOcean) ParserVersion() string { return ParserVersion(DigitalOceanName) }

// Fetch fetches DigitalOcean's GPU Droplet prices: the size list of the API when a token is
// configured, else the public pricing page.
func (d *DigitalOcean) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	if d.cfgErr != nil {
		return schema.Extract{}, sourceError(DigitalOceanName, d.cfgErr)
	}
	if d.key == "" {
		d.logger.Debug("DigitalOcean API token not set: reading the pricing page")
		return d.page.offers(ctx, d.client, DigitalOceanName, run, ParseDigitalOceanPage, d.logger)
	}
	res, err := d.fetchAPI(ctx, run)
	return res, sourceError(DigitalOceanName, err)
}

// fetchAPI reads the size list page by page, following links.pages.next, and parses each page.
// Any failed page fails the fetch: a market without one of its pages would be a smaller market.
// A size listed twice (on two pages, as a list may shift while it is read) counts once and is a
// problem.
func (d *DigitalOcean) fetchAPI(ctx context.Context, run schema.Run) (res schema.Extract, err error) {
	ctx, attempts := WithAttemptCounter(ctx)
	ctx = d.client.withBudget(ctx)
	ctx, cancel := context.WithTimeout(ctx, d.page.timeout)
	defer cancel()
	defer func() { res.Attempts = attempts.Count() }()
	header := http.Header{"Authorization": {"Bearer " + d.key}, "Accept": {"application/json"}}
	var (
		offers   []schema.Offer
		problems []error
		ids      = map[string]bool{}
		asked    = map[string]bool{}
		sizes    int
		skipped  = map[string]int{}
		total    *int
	)
	next := d.apiURL.String()
	for page := 1; ; page++ {
		if page > digitaloceanMaxPages {
			return res, fmt.Errorf("%w: sizes: more than %d pages", ErrLayoutChanged, digitaloceanMaxPages)
		}
		asked[next] = true
		resp, err := d.client.Do(ctx, Request{Source: DigitalOceanName, URL: next, Header: header})
		if resp != nil {
			// Its body is scrubbed of the token already: the client learnt it from the request.
			res.Payloads = append(res.Payloads, resp.Payload())
		}
		switch {
		case credentialsRefused(err):
			return res, fmt.Errorf("listing sizes (page %d): the API refused the token: %w", page, err)
		case err != nil:
			return res, fmt.Errorf("listing sizes (page %d): %w", page, err)
		}
		if mt, _, _ := mime.ParseMediaType(resp.ContentType); mt != "application/json" {
			return res, fmt.Errorf("%w: sizes (page %d): content type %q, want application/json", ErrLayoutChanged, page, clipLine(resp.ContentType, 80))
		}
		p, err := parseDigitalOceanSizes(resp.Body, run, resp.URL)
		if err != nil {
			return res, fmt.Errorf("sizes (page %d): %w", page, err)
		}
		sizes += p.sizes
		for k, n := range p.skipped {
			skipped[k] += n
		}
		if p.total != nil {
			total = p.total
		}
		problems = append(problems, p.problems...)
		for _, o := range p.offers {
			k := o.OfferID + "\x00" + string(o.PriceType)
			if ids[k] {
				problems = append(problems, fmt.Errorf("offer %q (%s): listed twice", clip(o.OfferID, 80), o.PriceType))
				continue
			}
			ids[k] = true
			offers = append(offers, o)
		}
		if err := d.client.offerCap(len(offers)); err != nil { // http.max_source_offers
			return res, err
		}
		if p.next == "" {
			break
		}
		if next, err = d.pageURL(p.next); err != nil {
			return res, err
		}
		if asked[next] {
			return res, fmt.Errorf("%w: sizes: links.pages.next comes back to a page read before", ErrLayoutChanged)
		}
	}
	if total != nil && *total != sizes {
		problems = append(problems, fmt.Errorf("sizes: %d read, meta.total says %d", sizes, *total))
	}
	sortOffers(offers)
	res.Problems = sourceErrors(DigitalOceanName, capProblems(problems))
	if len(offers) == 0 {
		return res, fmt.Errorf("%w: %d sizes (%d CPU, %d in no region), no priced GPU size", ErrNoOffers, sizes, skipped[digitaloceanCPU], skipped[digitaloceanNowhere])
	}
	res.Offers = offers
	d.logger.Debug("DigitalOcean parsed", "offers", len(offers), "problems", len(problems), "pages", len(res.Payloads),
		"cpu_sizes", skipped[digitaloceanCPU], "sizes_in_no_region", skipped[digitaloceanNowhere], "from", "api")
	return res, nil
}

// pageURL is the configured size list's URL asking for the page a links.pages.next link names:
// its query ("page=2&per_page=200") at the configured scheme, host and path, so that the token
// only ever goes to the configured host, whatever host an answer names.
func (d *DigitalOcean) pageURL(next string) (string, error) {
	n, err := url.Parse(next)
	if err != nil || n.RawQuery == "" || !n.Query().Has("page") {
		return "", fmt.Errorf("%w: sizes: links.pages.next %q is not a page link", ErrLayoutChanged, clip((*redact.Redactor)(nil).URL(next), 100))
	}
	u := *d.apiURL
	u.RawQuery = n.RawQuery
	return u.String(), nil
}

// Why a size gives no offer without being a problem.
const (
	digitaloceanCPU     = "cpu"     // no gpu_info: a CPU size
	digitaloceanNowhere = "nowhere" // regions is empty: not offered now
)

// ParseDigitalOcean parses one page of GET /v2/sizes ({"sizes": [...], "links": {...},
// "meta": {"total": N}}) into offers, sorted by offer id and price type. Following
// links.pages.next is the source's business (DigitalOcean.Fetch).
//
// Units and rules (docs/providers.md §13.2–13.3):
//   - price_hourly is USD per droplet-hour, the whole droplet, a JSON number read exactly; the
//     per-GPU price is its quotient by gpu_info.count, rounded once (SetPrice). price_monthly is
//     not read.
//   - Only GPU sizes count: a size without gpu_info is a CPU size, skipped without a word.
//   - gpu_info.vram.amount is the droplet's total ("640" gib for 8x H100): the per-GPU VRAM is
//     it divided by the count. The "gib" figures are the cards' labels (80 for an H100, 192 for
//     an MI300X), read as GB like every label; a unit other than gib or gb is a problem.
//   - The GPU is resolved from gpu_info.model ("nvidia_h100", "amd_mi300x"), else the slug
//     ("gpu-mi300x8-1536gb"); the raw name is the model. DigitalOcean's H100 names no form:
//     unknown, 80 GB.
//   - A slug ending "-spot" is the spot price of the droplet without it: the offer ids drop the
//     suffix, the price type tells the two apart.
//   - One offer per listed region, id "<slug>/<region>", Region the region slug ("nyc2"),
//     Country from its city (nyc: US, tor: CA, ams: NL, ...). A size listed in no region is not
//     offered now: skipped, counted (DigitalOcean.Fetch logs it). available false keeps the
//     offers with Stock none; otherwise Stock is unknown.
//   - Host: vcpus; memory in MB of 1024 KiB (a 1 GB droplet says 1024), recorded as decimal GB;
//     disk GB (the boot disk; the scratch disk of disk_info is not added).
//   - Interconnect: the model's form factor, as the catalog has it (intraFromForm: the H200's
//     HGX board, MI300X's Infinity Fabric, L40S and the Ada cards PCIe, the bare H100 unknown).
//     Nothing says how droplets are networked: inter-node unknown.
//
// A size that cannot be read (a field of the wrong type, no count, no or a negative price, a
// region that is not one) is left out and reported in problems, naming the size and the field.
// The error is set when the body is not a whole size list (ErrIncomplete when it is cut short,
// ErrLayoutChanged when it is something else, an API error object included), yields no offer
// (ErrNoOffers) or more than MaxOffers.
func ParseDigitalOcean(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	p, err := parseDigitalOceanSizes(body, run, sourceURL)
	if err != nil {
		return nil, nil, sourceError(DigitalOceanName, err)
	}
	problems = sourceErrors(DigitalOceanName, capProblems(p.problems))
	if len(p.offers) == 0 {
		return nil, problems, sourceError(DigitalOceanName, fmt.Errorf("%w: %d sizes (%d CPU, %d in no region), no priced GPU size",
			ErrNoOffers, p.sizes, p.skipped[digitaloceanCPU], p.skipped[digitaloceanNowhere]))
	}
	return p.offers, problems, nil
}

// parseDigitalOceanStored parses a stored DigitalOcean payload (gpucost reparse): a page of the
// size list, where a page without a GPU size is not an error of its own (Stored judges the run
// as a whole), or the pricing page.
func parseDigitalOceanStored(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error) {
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return ParseDigitalOceanPage(body, run, sourceURL)
	}
	p, err := parseDigitalOceanSizes(body, run, sourceURL)
	if err != nil {
		return nil, nil, sourceError(DigitalOceanName, err)
	}
	return p.offers, sourceErrors(DigitalOceanName, capProblems(p.problems)), nil
}

// digitaloceanParsed is one page of the size list parsed.
type digitaloceanParsed struct {
	offers   []schema.Offer // sorted
	problems []error
	sizes    int            // sizes on the page
	skipped  map[string]int // sizes without offers and without a problem, by reason
	next     string         // links.pages.next, "" on the last page
	total    *int           // meta.total, when given
}

func parseDigitalOceanSizes(body []byte, run schema.Run, sourceURL string) (digitaloceanParsed, error) {
	list := &digitaloceanSizes{run: run, sourceURL: sourceURL, seen: map[string]bool{}, skipped: map[string]int{}}
	resp := struct {
		Sizes *digitaloceanSizes `json:"sizes"`
		Links *struct {
			Pages *struct {
				Next *string `json:"next"`
			} `json:"pages"`
		} `json:"links"`
		Meta *struct {
			Total *int `json:"total"`
		} `json:"meta"`
		ID      string `json:"id"` // an error object: {"id": "unauthorized", "message": "..."}
		Message string `json:"message"`
	}{Sizes: list}
	if err := decodeJSON(body, "sizes", &resp); err != nil {
		return digitaloceanParsed{}, err
	}
	if !list.found {
		if resp.ID != "" || resp.Message != "" {
			return digitaloceanParsed{}, fmt.Errorf("%w: api error %q: %s", ErrLayoutChanged, clip(resp.ID, 80), clipLine(resp.Message, 200))
		}
		return digitaloceanParsed{}, fmt.Errorf("%w: no \"sizes\" in the response", ErrLayoutChanged)
	}
	p := digitaloceanParsed{offers: list.offers, problems: list.problems, sizes: list.n, skipped: list.skipped}
	if resp.Links != nil && resp.Links.Pages != nil && resp.Links.Pages.Next != nil {
		p.next = strings.TrimSpace(*resp.Links.Pages.Next)
	}
	if resp.Meta != nil {
		p.total = resp.Meta.Total
	}
	sortOffers(p.offers)
	return p, nil
}

// digitaloceanSizes decodes the sizes array one size at a time.
type digitaloceanSizes struct {
	run       schema.Run
	sourceURL string
	found     bool
	n         int
	seen      map[string]bool
	skipped   map[string]int
	offers    []schema.Offer
	problems  []error
}

func (l *digitaloceanSizes) UnmarshalJSON(data []byte) error {
	l.found = true
	return eachElement(data, func(i int, raw []byte) error {
		if l.n++; l.n > MaxOffers {
			return fmt.Errorf("%w: more than %d sizes", ErrTooManyOffers, MaxOffers)
		}
		var head struct {
			Slug string `json:"slug"`
		}
		_ = json.Unmarshal(raw, &head) // the slug names the size in a problem, when it decodes
		where := fmt.Sprintf("size #%d", i)
		if slug := strings.TrimSpace(head.Slug); slug != "" {
			where = fmt.Sprintf("size %q", clip(slug, 60))
		}
		var s digitaloceanSize
		if err := json.Unmarshal(raw, &s); err != nil {
			l.problems = append(l.problems, fmt.Errorf("%s: %w", where, decodeProblem(err)))
			return nil
		}
		s.Slug = strings.TrimSpace(s.Slug)
		switch {
		case s.Slug == "":
			l.problems = append(l.problems, fmt.Errorf("%s: no slug", where))
			return nil
		case l.seen[s.Slug]:
			l.problems = append(l.problems, fmt.Errorf("%s: listed twice", where))
			return nil
		}
		l.seen[s.Slug] = true
		offers, skipped, problems, err := digitaloceanSizeOffers(s, l.run, l.sourceURL)
		if err != nil {
			l.problems = append(l.problems, fmt.Errorf("%s: %w", where, err))
			return nil
		}
		if skipped != "" {
			l.skipped[skipped]++
		}
		l.problems = append(l.problems, problems...)
		l.offers = append(l.offers, offers...)
		return offerCap(len(l.offers), MaxOffers)
	})
}

// digitaloceanSize is one element of the size list (the fields read).
type digitaloceanSize struct {
	Slug        string       `json:"slug"`
	PriceHourly *exactNumber `json:"price_hourly"` // USD per droplet-hour
	VCPUs       *float64     `json:"vcpus"`
	Memory      *float64     `json:"memory"` // MB of 1024 KiB
	Disk        *float64     `json:"disk"`   // GB
	Regions     []string     `json:"regions"`
	Available   *bool        `json:"available"`
	GPUInfo     *struct {
		Count *int `json:"count"`
		VRAM  *struct {
			Amount *float64 `json:"amount"` // the droplet's total
			Unit   string   `json:"unit"`
		} `json:"vram"`
		Model string `json:"model"`
	} `json:"gpu_info"`
}

var digitaloceanRegionRe = regexp.MustCompile(`^([a-z]+)\d*$`) // nyc2, tor1, ams3, atl1

// digitaloceanCountries are the countries of DigitalOcean's region cities (the region slug
// without its number).
var digitaloceanCountries = map[string]string{
	"nyc": "US", "sfo": "US", "atl": "US", "ric": "US", "tor": "CA", "ams": "NL", "lon": "GB",
	"fra": "DE", "sgp": "SG", "blr": "IN", "syd": "AU",
}

// digitaloceanSizeOffers turns one size into its offers, one per region; a CPU size or one
// listed in no region gives none, and says which (skipped).
func digitaloceanSizeOffers(s digitaloceanSize, run schema.Run, sourceURL string) (offers []schema.Offer, skipped string, problems []error, err error) {
	if s.GPUInfo == nil {
		return nil, digitaloceanCPU, nil, nil
	}
	g := s.GPUInfo
	switch {
	case g.Count == nil:
		return nil, "", nil, errors.New("gpu_info.count: none")
	case *g.Count <= 0 || *g.Count > 1<<10:
		return nil, "", nil, fmt.Errorf("gpu_info.count %d is not a GPU count", *g.Count)
	}
	count := *g.Count
	switch p := s.PriceHourly; {
	case p == nil:
		return nil, "", nil, errors.New("price_hourly: none")
	case !p.IsPositive():
		return nil, "", nil, fmt.Errorf("price_hourly %s is not positive", p.Decimal)
	case p.GreaterThanOrEqual(maxPrice):
		return nil, "", nil, fmt.Errorf("price_hourly %s is implausibly high", clip(p.String(), 30))
	case !schema.PerGPU(p.Decimal, uint16(count)).IsPositive():
		return nil, "", nil, fmt.Errorf("price_hourly %s is less than a millionth of a dollar a GPU-hour", p.Decimal)
	}
	var vram float64 // per GPU
	if v := g.VRAM; v != nil && v.Amount != nil {
		switch unit := strings.ToLower(strings.TrimSpace(v.Unit)); {
		case unit != "gib" && unit != "gb":
			return nil, "", nil, fmt.Errorf("gpu_info.vram.unit %q, want gib", clip(v.Unit, 20))
		case *v.Amount <= 0:
			return nil, "", nil, fmt.Errorf("gpu_info.vram.amount %g is not positive", *v.Amount)
		}
		vram = round(*v.Amount/float64(count), 2)
	}

	var regions []string
	for _, r := range s.Regions {
		r = strings.TrimSpace(r)
		switch {
		case !digitaloceanRegionRe.MatchString(r) || len(r) > 20:
			problems = append(problems, fmt.Errorf("size %q: region %q is not a region slug", clip(s.Slug, 60), clip(r, 40)))
		case !slices.Contains(regions, r):
			regions = append(regions, r)
		}
	}
	if len(regions) == 0 {
		return nil, digitaloceanNowhere, problems, nil
	}

	slug, spot := strings.CutSuffix(s.Slug, "-spot")
	slug = clip(slug, 80)
	raw := clip(normalizeSpace(g.Model), 100)
	if raw == "" {
		raw = slug
	}
	o := schema.Offer{
		SourceURL: sourceURL,
		Provider:  DigitalOceanName,
		Tier:      schema.TierDatacenter,
		GPUCount:  uint16(count),
		VCPUs:     specFigure(s.VCPUs, 1),
		RAMGB:     specFigure(s.Memory, gpus.MiBToGB(1)),
		DiskGB:    specFigure(s.Disk, 1),
		InterNode: schema.InterUnknown,
		Stock:     schema.StockUnknown,
		DQFlags:   []schema.DQFlag{},
	}
	if s.Available != nil && !*s.Available {
		o.Stock = schema.StockNone // listed, not orderable now
	}
	run.Stamp(&o)
	m := applyGPU(&o, DigitalOceanName, raw, vram, slug)
	o.IntraNode = intraFromForm(m)
	pt := schema.OnDemand
	if spot {
		pt = schema.Spot
	}
	slices.Sort(regions)
	for _, r := range regions {
		ro := o
		ro.OfferID, ro.Region = slug+"/"+r, r
		ro.Country = digitaloceanCountries[digitaloceanRegionRe.FindStringSubmatch(r)[1]]
		offers = append(offers, priced(ro, pt, s.PriceHourly.Decimal))
	}
	return offers, "", problems, nil
}

// The pricing page's section anchors (docs/providers.md §13.4). The contract section ("after
// contacting sales") has no prices and is not read.
const (
	digitaloceanOnDemandAnchor = "on-demand-gpu-droplet-pricing"
	digitaloceanSpotAnchor     = "spot-gpu-droplet-pricing"
)

var (
	digitaloceanCountRe = regexp.MustCompile(`(?i)\s*\((\d+)\s*x\)$`)                               // "NVIDIA H200 (8x)"
	digitaloceanPriceRe = regexp.MustCompile(`(?i)^(\$\s*[0-9][0-9,]*(?:\.[0-9]+)?)\s+per\s+hour$`) // "$4.41 per hour"
)

// digitaloceanPageVRAM is the memory of the page's GPUs whose label leaves it to the catalog and
// the catalog cannot settle: the page names no memory, and DigitalOcean's H100 names no form
// (SXM and PCIe have 80 GB each). Its droplets are 80 GB a GPU, as the API's slugs say
// (gpu-h100x1-80gb, gpu-h100x8-640gb).
var digitaloceanPageVRAM = map[string]float64{"NVIDIA H100": 80}

// ParseDigitalOceanPage parses the Droplet pricing page of DigitalOcean's documentation
// (https://docs.digitalocean.com/products/droplets/details/pricing/, docs/providers.md §13.4)
// into offers: an on-demand offer per row of the on-demand GPU table, a spot offer per row of
// the spot table.
//
//   - The sections are the <h2 id="on-demand-gpu-droplet-pricing"> and <h2
//     id="spot-gpu-droplet-pricing"> headings, each up to the next <h2>; each holds exactly one
//     <table> whose header cells are GPU and Price. The on-demand heading must appear once; a
//     page without the spot heading (a public preview that may end) is read without spot
//     prices, and says so in problems. The contract section is not read.
//   - A row is two cells: a label starting "NVIDIA " or "AMD " and "$D.DD per hour", USD per
//     droplet-hour. A label ending "(8x)" (any "(Nx)") is a droplet of that many GPUs, else of
//     one; the per-GPU price is the price divided by the count. A price cell naming a contact
//     ("Per contract after contacting sales") is not a list price: skipped without a word.
//   - GPU names: "NVIDIA RTX 4000" and "NVIDIA RTX 6000" are the RTX 4000 Ada (20 GB) and RTX
//     6000 Ada (48 GB) on DigitalOcean, "NVIDIA L40s" the L40S; the page names no memory, the
//     catalog's is used (vram_missing). "NVIDIA H100" names no form: unknown, at the 80 GB of
//     DigitalOcean's H100 droplets.
//   - "NVIDIA B300, air-cooled" and "NVIDIA B300, liquid-cooled" are two offers: two products
//     on two rows, priced alike today but not bound to stay so. Both are the B300; the raw name
//     keeps the cooling.
//
// The offer id is the row's label ("NVIDIA H200 (8x)"); the price type tells the on-demand and
// spot offers apart. The page names no region. Interconnect is the catalog's form factor
// (intraFromForm); inter-node unknown. A row that cannot be read is skipped and reported in
// problems; a label listed twice counts once (a problem when its prices differ). The page must
// be whole (checkPage), else the error wraps ErrIncomplete; a page whose structure changed
// (headings, tables, header cells) is ErrLayoutChanged, one without a priced row ErrNoOffers,
// never an empty success.
func ParseDigitalOceanPage(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	defer func() {
		problems, err = sourceErrors(DigitalOceanName, capProblems(problems)), sourceError(DigitalOceanName, err)
	}()
	if err := checkPage(body); err != nil {
		return nil, nil, fmt.Errorf("pricing page: %w", err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(body))
	if err != nil {
		return nil, nil, fmt.Errorf("pricing page: parse html: %w", err)
	}
	type section struct {
		anchor   string
		pt       schema.PriceType
		headings int
		tables   []*goquery.Selection
	}
	sections := []*section{{anchor: digitaloceanOnDemandAnchor, pt: schema.OnDemand}, {anchor: digitaloceanSpotAnchor, pt: schema.Spot}}
	var cur *section
	doc.Find("h2, table").Each(func(_ int, s *goquery.Selection) {
		if goquery.NodeName(s) == "h2" {
			id := s.AttrOr("id", "")
			cur = nil
			for _, sec := range sections {
				if sec.anchor == id {
					cur = sec
					cur.headings++
				}
			}
			return
		}
		if cur != nil {
			cur.tables = append(cur.tables, s)
		}
	})

	seen := map[string]decimal.Decimal{} // the price of each offer read, by offer id and price type
	rows := 0
	for _, sec := range sections {
		switch {
		case sec.headings == 0 && sec.pt == schema.Spot:
			problems = append(problems, fmt.Errorf("pricing page: no <h2 id=%q>: no spot prices read", sec.anchor))
			continue
		case sec.headings != 1:
			return nil, nil, fmt.Errorf("pricing page: %w: <h2 id=%q> found %d times, want 1", ErrLayoutChanged, sec.anchor, sec.headings)
		case len(sec.tables) != 1:
			return nil, nil, fmt.Errorf("pricing page: %w: section #%s has %d tables, want 1", ErrLayoutChanged, sec.anchor, len(sec.tables))
		}
		table := sec.tables[0]
		var header []string
		table.Find("th").Each(func(_ int, th *goquery.Selection) { header = append(header, normalizeSpace(th.Text())) })
		if len(header) != 2 || !strings.EqualFold(header[0], "GPU") || !strings.EqualFold(header[1], "Price") {
			return nil, nil, fmt.Errorf("pricing page: %w: section #%s: table header %q, want [GPU Price]", ErrLayoutChanged, sec.anchor, clip(strings.Join(header, " | "), 80))
		}
		n := 0
		table.Find("tr").Each(func(_ int, tr *goquery.Selection) {
			cells := tr.ChildrenFiltered("td")
			if cells.Length() == 0 {
				return // the header row
			}
			n++
			where := fmt.Sprintf("pricing page: section #%s: row %d", sec.anchor, n)
			if cells.Length() != 2 {
				problems = append(problems, fmt.Errorf("%s: %d cells, want 2 (GPU, Price)", where, cells.Length()))
				return
			}
			o, ok, err := digitaloceanPageOffer(normalizeSpace(cells.Eq(0).Text()), normalizeSpace(cells.Eq(1).Text()), sec.pt, run, sourceURL)
			switch {
			case err != nil:
				problems = append(problems, fmt.Errorf("%s: %w", where, err))
				return
			case !ok:
				return
			}
			k := o.OfferID + "|" + string(o.PriceType)
			if prev, dup := seen[k]; dup {
				if !prev.Equal(o.PriceUSDPerHour) {
					problems = append(problems, fmt.Errorf("%s: %q listed twice with different prices", where, clip(o.OfferID, 80)))
				}
				return
			}
			seen[k] = o.PriceUSDPerHour
			offers = append(offers, o)
		})
		if n == 0 {
			return nil, nil, fmt.Errorf("pricing page: %w: section #%s: the table has no <td> rows", ErrLayoutChanged, sec.anchor)
		}
		rows += n
	}
	if err := offerCap(len(offers), MaxOffers); err != nil {
		return nil, nil, fmt.Errorf("pricing page: %w", err)
	}
	if len(offers) == 0 {
		return nil, problems, fmt.Errorf("pricing page: %w: %d rows, no GPU priced per hour", ErrNoOffers, rows)
	}
	sortOffers(offers)
	return offers, problems, nil
}

// digitaloceanPageOffer turns one row of a GPU table into an offer of price type pt; ok is
// false, with no error, for a row without a list price.
func digitaloceanPageOffer(label, price string, pt schema.PriceType, run schema.Run, sourceURL string) (o schema.Offer, ok bool, err error) {
	if !strings.HasPrefix(label, "NVIDIA ") && !strings.HasPrefix(label, "AMD ") {
		return o, false, fmt.Errorf("GPU %q does not start with \"NVIDIA \" or \"AMD \"", clip(label, 60))
	}
	count, name := 1, label
	if m := digitaloceanCountRe.FindStringSubmatch(label); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil || n < 1 || n > 64 {
			return o, false, fmt.Errorf("GPU %q: %q is not a GPU count", clip(label, 60), clip(m[1], 10))
		}
		count, name = n, strings.TrimSpace(label[:len(label)-len(m[0])])
	}
	where := fmt.Sprintf("GPU %q", clip(label, 60))
	m := digitaloceanPriceRe.FindStringSubmatch(price)
	if m == nil {
		if strings.Contains(strings.ToLower(price), "contact") {
			return o, false, nil // "Per contract after contacting sales": no list price
		}
		return o, false, fmt.Errorf("%s: price %q is not \"$D.DD per hour\"", where, clip(price, 60))
	}
	amount, _, err := parseUSD(m[1]) // a dollar amount: offered, or an error
	switch {
	case err != nil:
		return o, false, fmt.Errorf("%s: %w", where, err)
	case !schema.PerGPU(amount, uint16(count)).IsPositive():
		return o, false, fmt.Errorf("%s: price %q is less than a millionth of a dollar a GPU-hour", where, clip(m[1], 40))
	}
	o = schema.Offer{
		SourceURL: sourceURL,
		Provider:  DigitalOceanName,
		OfferID:   clip(label, 100),
		Tier:      schema.TierDatacenter,
		GPUCount:  uint16(count),
		InterNode: schema.InterUnknown,
		Stock:     schema.StockUnknown,
		DQFlags:   []schema.DQFlag{},
	}
	run.Stamp(&o)
	match := applyGPU(&o, DigitalOceanName, clip(name, 100), digitaloceanPageVRAM[name])
	o.IntraNode = intraFromForm(match)
	return priced(o, pt, amount), true, nil
}
