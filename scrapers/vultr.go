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
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Vultr defaults (docs/providers.md §10).
const (
	// VultrName is the provider name Vultr offers are recorded under.
	VultrName = "vultr"
	// DefaultVultrPlansURL lists every VM plan (Cloud GPU "vcg" and Dedicated Metal GPU "vdm"
	// among the CPU ones); it answers without a key.
	DefaultVultrPlansURL = "https://api.vultr.com/v2/plans?type=all&per_page=500"
	// DefaultVultrMetalURL lists the bare-metal plans; it answers without a key.
	DefaultVultrMetalURL = "https://api.vultr.com/v2/plans-metal?per_page=500"
	// vultrMaxPages bounds the pages one list is read in: at 500 plans a page the lists have
	// one or two; a cursor that never ends is a changed layout, not a longer market.
	vultrMaxPages = 20
)

// VultrConfig configures the Vultr source. Zero fields take the defaults.
type VultrConfig struct {
	PlansURL string // default DefaultVultrPlansURL
	MetalURL string // default DefaultVultrMetalURL
	// APIKey is optional (both lists answer without one); when set it is sent as
	// "Authorization: Bearer <key>", never in a URL, a log line, an error or a payload.
	APIKey  string
	Timeout time.Duration // bound on the whole fetch, both lists and their pages (0 = the run's ctx only)
}

// Vultr is the Vultr source: the VM plan list and the bare-metal plan list of the public API,
// each read page by page (ParseVultr).
type Vultr struct {
	client   *Client
	cfg      VultrConfig
	cfgErr   error
	logger   *slog.Logger
	requests [2]vultrList
}

type vultrList struct{ what, url string }

// NewVultr returns the Vultr source fetching through client. A nil logger discards. An invalid
// URL makes every Fetch fail with a clear error.
func NewVultr(client *Client, cfg VultrConfig, logger *slog.Logger) *Vultr {
	cfg.APIKey = strings.TrimSpace(cfg.APIKey)
	if cfg.PlansURL == "" {
		cfg.PlansURL = DefaultVultrPlansURL
	}
	if cfg.MetalURL == "" {
		cfg.MetalURL = DefaultVultrMetalURL
	}
	v := &Vultr{client: client, cfg: cfg, logger: orDiscard(logger),
		requests: [2]vultrList{{"plans", cfg.PlansURL}, {"plans-metal", cfg.MetalURL}}}
	for _, l := range v.requests {
		if _, err := httpURL(l.what+" URL", l.url, false); err != nil {
			v.cfgErr = err
		}
	}
	if client == nil {
		v.cfgErr = errors.New("no HTTP client")
	}
	return v
}

// Name returns "vultr".
func (v *Vultr) Name() string { return VultrName }

// ParserVersion names the parser of its offers (ParserVersion).
func (v *Vultr) ParserVersion() string { return ParserVersion(VultrName) }

// Fetch reads both plan lists, every page of each (meta.links.next), and parses each page. Any
// failed request fails the fetch: a market without one of its pages would be a smaller market.
// A plan listed twice (on two pages, as a cursor may shift) counts once and is a problem.
func (v *Vultr) Fetch(ctx context.Context, run schema.Run) (res schema.Extract, err error) {
	if v.cfgErr != nil {
		return res, sourceError(VultrName, v.cfgErr)
	}
	if v.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, v.cfg.Timeout)
		defer cancel()
	}
	ctx, attempts := WithAttemptCounter(ctx)
	ctx = v.client.withBudget(ctx)
	defer func() { res.Attempts = attempts.Count() }()
	h := http.Header{"Accept": {"application/json"}}
	if v.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+v.cfg.APIKey)
	}
	ids := map[string]bool{}
	var offers []schema.Offer
	var problems []error
	for _, l := range v.requests {
		next, cursors := l.url, map[string]bool{}
		for page := 1; ; page++ {
			if page > vultrMaxPages {
				return res, sourceError(VultrName, fmt.Errorf("%w: %s: more than %d pages", ErrLayoutChanged, l.what, vultrMaxPages))
			}
			resp, err := v.client.Do(ctx, Request{Source: VultrName, URL: next, Header: h})
			if resp != nil {
				res.Payloads = append(res.Payloads, resp.Payload())
			}
			if err != nil {
				return res, sourceError(VultrName, fmt.Errorf("listing %s (page %d): %w", l.what, page, err))
			}
			if mt, _, _ := mime.ParseMediaType(resp.ContentType); mt != "application/json" {
				return res, sourceError(VultrName, fmt.Errorf("%w: %s: content type %q, want application/json", ErrLayoutChanged, l.what, clipLine(resp.ContentType, 80)))
			}
			p, err := parseVultrPage(resp.Body, run, resp.URL)
			if err != nil {
				return res, sourceError(VultrName, fmt.Errorf("%s (page %d): %w", l.what, page, err))
			}
			problems = append(problems, p.problems...)
			for _, o := range p.offers {
				if ids[o.OfferID+"\x00"+string(o.PriceType)] {
					problems = append(problems, fmt.Errorf("offer %q (%s): listed twice", clip(o.OfferID, 80), o.PriceType))
					continue
				}
				ids[o.OfferID+"\x00"+string(o.PriceType)] = true
				offers = append(offers, o)
			}
			if err := v.client.offerCap(len(offers)); err != nil { // http.max_source_offers
				return res, sourceError(VultrName, err)
			}
			if p.next == "" {
				break
			}
			if cursors[p.next] {
				return res, sourceError(VultrName, fmt.Errorf("%w: %s: the cursor %q comes back", ErrLayoutChanged, l.what, clip(p.next, 60)))
			}
			cursors[p.next] = true
			next = vultrCursorURL(l.url, p.next)
		}
	}
	sortOffers(offers)
	res.Offers, res.Problems = offers, sourceErrors(VultrName, capProblems(problems))
	if len(offers) == 0 {
		res.Offers = nil
		return res, sourceError(VultrName, ErrNoOffers)
	}
	v.logger.Debug("Vultr parsed", "offers", len(offers), "problems", len(problems), "pages", len(res.Payloads))
	return res, nil
}

// vultrCursorURL is the list's URL asking for the page after cursor.
func vultrCursorURL(base, cursor string) string {
	u, err := url.Parse(base)
	if err != nil { // checked by NewVultr
		return base
	}
	q := u.Query()
	q.Set("cursor", cursor)
	u.RawQuery = q.Encode()
	return u.String()
}

// ParseVultr parses one page of GET /v2/plans ({"plans": [...]}) or GET /v2/plans-metal
// ({"plans_metal": [...]}) into offers, sorted by offer id and price type. The page's next
// cursor (meta.links.next) is the source's business (Vultr.Fetch).
//
// Units and rules (docs/providers.md §10.2–10.4):
//   - hourly_cost is USD per plan-hour, the whole instance (monthly_cost, the cap hourly billing
//     stops at, is not a rate and is not read). The offer price is that amount, read exactly,
//     and the per-GPU price its quotient by the GPU count, rounded once (SetPrice). A
//     location_cost entry of a location overrides the plan's prices there.
//   - Only GPU plans count: a gpu_type, a VM type vcg (Cloud GPU) or vdm (Dedicated Metal GPU),
//     a "vcg-" id, or a bare-metal id ending "-gpu". CPU plans are skipped without a word.
//   - The GPU count is gpu_count when present (a number, or a whole number as a string); a
//     bare-metal id says it ("vbm-112c-2048gb-8-h100-gpu": 8; none before the model: 1; both
//     flagged count_parsed). Otherwise it is derived from the plan's total VRAM (gpu_vram_gb,
//     or the id's "-640vram"): the one count whose share is the VRAM of a catalog model of the
//     family (an integer number of GB that the name resolves at, or a catalog model's exact
//     figure). A total two counts explain (an A100's 80 GB: one of 80 or two of 40) is a
//     problem, not a guess.
//   - Fractional GPUs: a gpu_count "1/20" (or below 1), or a total below every model of the
//     family (the 4 GB "vcg-a100-1c-6g-4vram"), is a slice of a GPU, not a GPU: it is kept as
//     one unknown GPU (flag unknown_gpu) with the slice's VRAM, its raw name the gpu_type and
//     the fraction ("NVIDIA_A100 1/20", or "NVIDIA_A100 4GB slice"), the way MIG slices are
//     kept everywhere, so that it never ranks as a whole A100.
//   - VRAM: gpu_vram_gb is the plan's total; the per-GPU VRAM is the total divided by the count.
//   - GPU names: gpu_type ("NVIDIA_L40S", "AMD_MI300X") when present, else the model in the id
//     (a vdm plan's "vcg-b200-…", a metal plan's "-8-mi300x-gpu"); the ids' "l40" is the L40S.
//     The raw name is the gpu_type, or the plan id where the model came from it.
//   - Locations: one offer per location the plan lists, id "<plan id>/<location>" and Region
//     the location ("ewr", "ord"); Country is left empty (the plan lists name none). An empty
//     location ("") is skipped, as the API sends them; a location listed twice counts once; a
//     location that is not a location id is a problem. A plan listed nowhere is still priced:
//     one offer with the plan id as its id, no Region and Stock none.
//   - On-demand: hourly_cost > 0. Spot: hourly_cost_preemptible > 0 (its own offer, the same
//     ids). A deploy_ondemand / deploy_preemptible that is false means the price is listed
//     but cannot be ordered now: the offer is kept with Stock none; absent (older answers) or
//     true, Stock is unknown (orderable, the amount not published).
//   - Host: vcpu_count (VM) or cpu_threads (metal) vCPUs; ram in MiB, recorded as decimal GB;
//     disk × disk_count GB.
//   - Interconnect: an 8-GPU bare-metal plan of a family sold on HGX boards (H100, H200, B200,
//     A100) is the board's SXM part, NVSwitch inside; otherwise the name's form factor says
//     what it can (intraFromForm: L40S and A40 PCIe, MI300X's Infinity Fabric, a bare
//     "NVIDIA_H100" unknown). Nothing says how instances are networked: inter-node unknown.
//
// A plan that cannot be read (a field of the wrong type, a negative price, a count the data
// does not settle) is left out and reported in problems, naming the plan and the field. The
// error is set when the body is not a whole plan list (ErrIncomplete when it is cut short,
// ErrLayoutChanged when it is something else, an API error), yields no offer (ErrNoOffers)
// or more than MaxOffers.
func ParseVultr(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	p, err := parseVultrPage(body, run, sourceURL)
	if err != nil {
		return nil, nil, sourceError(VultrName, err)
	}
	problems = sourceErrors(VultrName, capProblems(p.problems))
	if len(p.offers) == 0 {
		return nil, problems, sourceError(VultrName, fmt.Errorf("%w: %d plans, no priced GPU plan", ErrNoOffers, p.plans))
	}
	return p.offers, problems, nil
}

// parseVultrStored parses a stored Vultr payload (gpucost reparse): a page without a GPU plan
// (the VM list's CPU pages) is not an error of its own; Stored judges the run as a whole.
func parseVultrStored(body []byte, run schema.Run, sourceURL string) ([]schema.Offer, []error, error) {
	p, err := parseVultrPage(body, run, sourceURL)
	if err != nil {
		return nil, nil, sourceError(VultrName, err)
	}
	return p.offers, sourceErrors(VultrName, capProblems(p.problems)), nil
}

// vultrParsed is one page parsed: its offers (sorted), problems and next cursor.
type vultrParsed struct {
	offers   []schema.Offer
	problems []error
	plans    int
	next     string
}

func parseVultrPage(body []byte, run schema.Run, sourceURL string) (vultrParsed, error) {
	vm := &vultrPlans{run: run, sourceURL: sourceURL, seen: map[string]bool{}}
	metal := &vultrPlans{run: run, sourceURL: sourceURL, metal: true, seen: map[string]bool{}}
	resp := struct {
		Plans *vultrPlans     `json:"plans"`
		Metal *vultrPlans     `json:"plans_metal"`
		Meta  json.RawMessage `json:"meta"`
		Error json.RawMessage `json:"error"`
	}{Plans: vm, Metal: metal}
	if err := decodeJSON(body, "plans", &resp); err != nil {
		return vultrParsed{}, err
	}
	if e := bytes.TrimSpace(resp.Error); len(e) > 0 && string(e) != "null" && string(e) != `""` {
		var msg string
		if json.Unmarshal(e, &msg) != nil {
			msg = string(e)
		}
		return vultrParsed{}, fmt.Errorf("api error: %s", clipLine(msg, 200))
	}
	if !vm.found && !metal.found {
		return vultrParsed{}, fmt.Errorf("%w: neither \"plans\" nor \"plans_metal\" in the response", ErrLayoutChanged)
	}
	var meta struct {
		Links *struct {
			Next *string `json:"next"`
		} `json:"links"`
	}
	if len(resp.Meta) == 0 || json.Unmarshal(resp.Meta, &meta) != nil || meta.Links == nil || meta.Links.Next == nil {
		return vultrParsed{}, fmt.Errorf("%w: no meta.links.next (the pagination) in the response", ErrLayoutChanged)
	}
	p := vultrParsed{next: strings.TrimSpace(*meta.Links.Next), plans: vm.n + metal.n}
	for _, l := range []*vultrPlans{vm, metal} {
		p.offers = append(p.offers, l.offers...)
		p.problems = append(p.problems, l.problems...)
	}
	sortOffers(p.offers)
	return p, nil
}

// vultrPlans decodes a plan array one plan at a time.
type vultrPlans struct {
	run       schema.Run
	sourceURL string
	metal     bool
	found     bool
	n         int
	seen      map[string]bool
	offers    []schema.Offer
	problems  []error
}

func (l *vultrPlans) UnmarshalJSON(data []byte) error {
	l.found = true
	return eachElement(data, func(i int, raw []byte) error {
		if l.n++; l.n > MaxOffers {
			return fmt.Errorf("%w: more than %d plans", ErrTooManyOffers, MaxOffers)
		}
		var p vultrPlan
		if err := json.Unmarshal(raw, &p); err != nil {
			l.problems = append(l.problems, fmt.Errorf("plan #%d: decoding: %w", i, err))
			return nil
		}
		p.ID = strings.TrimSpace(p.ID)
		if p.ID == "" {
			l.problems = append(l.problems, fmt.Errorf("plan #%d: no id", i))
			return nil
		}
		if l.seen[p.ID] {
			l.problems = append(l.problems, fmt.Errorf("plan %q: listed twice", clip(p.ID, 60)))
			return nil
		}
		l.seen[p.ID] = true
		offers, problems, err := vultrPlanOffers(p, l.metal, l.run, l.sourceURL)
		if err != nil {
			l.problems = append(l.problems, fmt.Errorf("plan %q: %w", clip(p.ID, 60), err))
			return nil
		}
		l.problems = append(l.problems, problems...)
		l.offers = append(l.offers, offers...)
		return offerCap(len(l.offers), MaxOffers)
	})
}

// vultrPlan is one plan of either list. Numbers are read per field (jsonNumber), so a field of
// the wrong type is a problem of its plan, named, not a failure of the page.
type vultrPlan struct {
	ID                    string                   `json:"id"`
	Type                  string                   `json:"type"`
	VCPUCount             json.RawMessage          `json:"vcpu_count"`  // VM plans
	CPUThreads            json.RawMessage          `json:"cpu_threads"` // metal plans
	RAM                   json.RawMessage          `json:"ram"`         // MiB
	Disk                  json.RawMessage          `json:"disk"`        // GB per disk
	DiskCount             json.RawMessage          `json:"disk_count"`
	HourlyCost            json.RawMessage          `json:"hourly_cost"` // USD per plan-hour
	HourlyCostPreemptible json.RawMessage          `json:"hourly_cost_preemptible"`
	DeployOnDemand        *bool                    `json:"deploy_ondemand"`
	DeployPreemptible     *bool                    `json:"deploy_preemptible"`
	LocationCost          map[string]vultrLocation `json:"location_cost"`
	Locations             []string                 `json:"locations"`
	GPUType               string                   `json:"gpu_type"`
	GPUVRAMGB             json.RawMessage          `json:"gpu_vram_gb"` // the plan's total
	GPUCount              json.RawMessage          `json:"gpu_count"`   // a number, or a string such as "1/20"
}

// vultrLocation is a location_cost entry: the plan's prices in one location.
type vultrLocation struct {
	HourlyCost            json.RawMessage `json:"hourly_cost"`
	HourlyCostPreemptible json.RawMessage `json:"hourly_cost_preemptible"`
}

var (
	vultrMetalGPURe = regexp.MustCompile(`^vbm-\d+c-\d+gb-(?:(\d+)-)?([a-z0-9]+)-gpu$`) // vbm-112c-2048gb-8-h100-gpu, vbm-72c-480gb-gh200-gpu
	vultrVMGPURe    = regexp.MustCompile(`^vcg-([a-z0-9]+)-`)                           // vcg-b200-248c-2826g-1536vram
	vultrVRAMRe     = regexp.MustCompile(`-(\d+)vram$`)                                 // the plan's total VRAM
	vultrLocationRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9-]{1,31}$`)                // ewr, ord, blr
	vultrFractionRe = regexp.MustCompile(`^\s*(\d+)\s*/\s*(\d+)\s*$`)                   // "1/20"
)

// vultrIDModels are the plan ids' model tokens that name another GPU than the same token does
// elsewhere: Vultr's "l40" plans are L40S.
var vultrIDModels = map[string]string{"l40": "L40S"}

// vultrHGX are the families whose 8-GPU bare-metal servers are HGX boards of SXM modules.
var vultrHGX = map[string]bool{"A100": true, "H100": true, "H200": true, "B200": true}

// vultrPlanOffers turns one plan into its offers: on-demand and spot, once per location. A
// plan that is not a GPU plan gives none and no error.
func vultrPlanOffers(p vultrPlan, metal bool, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	id := p.ID
	gpuType := strings.TrimSpace(p.GPUType)
	idModel, idCount := "", ""
	if m := vultrMetalGPURe.FindStringSubmatch(id); metal && m != nil {
		idCount, idModel = m[1], m[2]
	} else if m := vultrVMGPURe.FindStringSubmatch(id); !metal && m != nil {
		idModel = m[1]
	}
	isGPU := gpuType != "" || p.Type == "vcg" || p.Type == "vdm" || idModel != ""
	if !isGPU {
		return nil, nil, nil
	}
	name, raw := gpuType, gpuType
	if name == "" {
		if idModel == "" {
			return nil, nil, errors.New("gpu_type: none, and the id names no GPU")
		}
		name, raw = strings.ToUpper(idModel), id
		if alias, ok := vultrIDModels[idModel]; ok {
			name = alias
		}
	}
	family := vultrFamily(name)

	total, present, err := jsonNumber(p.GPUVRAMGB)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("gpu_vram_gb: %w", err)
	case present && !total.IsPositive():
		return nil, nil, fmt.Errorf("gpu_vram_gb %s is not positive", total)
	case !present:
		if m := vultrVRAMRe.FindStringSubmatch(id); m != nil {
			total, _ = decimal.NewFromString(m[1])
		}
	}
	totalGB := total.InexactFloat64()

	flags := []schema.DQFlag{}
	count, fraction, err := vultrGPUCount(p.GPUCount)
	if err != nil {
		return nil, nil, fmt.Errorf("gpu_count: %w", err)
	}
	switch {
	case count > 0 || fraction != "":
	case metal && idModel != "":
		count = 1 // "vbm-72c-480gb-gh200-gpu": no count before the model
		if idCount != "" {
			count, _ = strconv.Atoi(idCount)
		}
		flags = append(flags, schema.FlagCountParsed)
	default:
		count, fraction, err = vultrCountFromVRAM(name, family, totalGB)
		if err != nil {
			return nil, nil, err
		}
	}
	if count > 1<<10 {
		return nil, nil, fmt.Errorf("gpu_count %d is not a GPU count", count)
	}

	o := schema.Offer{
		SourceURL: sourceURL,
		Provider:  VultrName,
		OfferID:   id,
		Tier:      schema.TierDatacenter,
		GPUCount:  1,
		InterNode: schema.InterUnknown,
		Stock:     schema.StockUnknown,
		DQFlags:   flags,
	}
	run.Stamp(&o)
	if fraction != "" {
		// A slice: one GPU's worth of nothing the catalog sells, with the slice's memory.
		vram := 0.0
		if totalGB > 0 {
			vram = totalGB
		}
		label := vram
		if l, ok := gpus.VRAMLabel(vram); ok {
			label = l
		}
		setGPU(&o, raw+" "+fraction, vram, gpus.Match{VRAMGB: label, Snapped: math.Abs(label-vram) > 0.005})
		o.IntraNode = schema.IntraUnknown
	} else {
		o.GPUCount = uint16(count)
		vram := 0.0
		if totalGB > 0 {
			vram = round(totalGB/float64(count), 2)
		}
		m := resolveGPU(VultrName, name, vram)
		if metal && count == 8 && vultrHGX[family] {
			if h := gpus.Resolve(VultrName, "HGX "+name, vram); h.Known {
				m = h // the SXM part of an HGX board
			}
		}
		setGPU(&o, raw, vram, m)
		o.IntraNode = intraFromForm(m)
	}

	if o.VCPUs, err = vultrSpec(p.VCPUCount, "vcpu_count", 1); err != nil {
		return nil, nil, err
	}
	if o.VCPUs == nil {
		if o.VCPUs, err = vultrSpec(p.CPUThreads, "cpu_threads", 1); err != nil {
			return nil, nil, err
		}
	}
	if o.RAMGB, err = vultrSpec(p.RAM, "ram", gpus.MiBToGB(1)); err != nil {
		return nil, nil, err
	}
	if o.DiskGB, err = vultrSpec(p.Disk, "disk", 1); err != nil {
		return nil, nil, err
	}
	if n, err := vultrSpec(p.DiskCount, "disk_count", 1); err != nil {
		return nil, nil, err
	} else if n != nil && o.DiskGB != nil && *n >= 1 {
		o.DiskGB = ptr(round(*o.DiskGB**n, 2))
	}

	onDemand, err := vultrPrice(p.HourlyCost, "hourly_cost")
	if err != nil {
		return nil, nil, err
	}
	spot, err := vultrPrice(p.HourlyCostPreemptible, "hourly_cost_preemptible")
	if err != nil {
		return nil, nil, err
	}

	locations, problems := vultrLocations(id, p.Locations)
	if len(locations) == 0 {
		locations = []string{""}
	}
	for _, loc := range locations {
		od, sp := onDemand, spot
		if c, ok := p.LocationCost[loc]; ok && loc != "" {
			if lp, err := vultrPrice(c.HourlyCost, "location_cost."+loc+".hourly_cost"); err != nil {
				return nil, nil, err
			} else if lp != nil {
				od = lp
			}
			if lp, err := vultrPrice(c.HourlyCostPreemptible, "location_cost."+loc+".hourly_cost_preemptible"); err != nil {
				return nil, nil, err
			} else if lp != nil {
				sp = lp
			}
		}
		lo := o
		if loc != "" {
			lo.OfferID, lo.Region = id+"/"+loc, loc
		} else {
			lo.Stock = schema.StockNone // listed nowhere: priced, not orderable
		}
		if od != nil {
			x := priced(lo, schema.OnDemand, *od)
			if p.DeployOnDemand != nil && !*p.DeployOnDemand {
				x.Stock = schema.StockNone
			}
			offers = append(offers, x)
		}
		if sp != nil {
			x := priced(lo, schema.Spot, *sp)
			if p.DeployPreemptible != nil && !*p.DeployPreemptible {
				x.Stock = schema.StockNone
			}
			offers = append(offers, x)
		}
	}
	if len(offers) == 0 {
		return nil, problems, errors.New("hourly_cost: no positive price, on demand or preemptible")
	}
	return offers, problems, nil
}

// vultrFamily is the catalog family a Vultr GPU name starts with: "NVIDIA_A100_SXM" → "A100".
func vultrFamily(name string) string {
	s := strings.ToUpper(strings.TrimSpace(name))
	for _, v := range []string{"NVIDIA_", "NVIDIA ", "AMD_", "AMD "} {
		s = strings.TrimPrefix(s, v)
	}
	if i := strings.IndexAny(s, "_ "); i >= 0 {
		s = s[:i]
	}
	return s
}

// vultrGPUCount reads gpu_count: a whole count, or a fraction of one GPU ("1/20", or a number
// below 1) returned as its text; (0, "", nil) when absent.
func vultrGPUCount(raw json.RawMessage) (count int, fraction string, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return 0, "", nil
	}
	text := string(raw)
	if raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, "", err
		}
		if m := vultrFractionRe.FindStringSubmatch(text); m != nil {
			num, _ := strconv.Atoi(m[1])
			den, _ := strconv.Atoi(m[2])
			switch {
			case num <= 0 || den <= 0:
				return 0, "", fmt.Errorf("%q is not a GPU count", clip(text, 20))
			case num%den == 0:
				return num / den, "", nil
			case num < den:
				return 0, fmt.Sprintf("%d/%d", num, den), nil
			}
			return 0, "", fmt.Errorf("%q is more than one GPU but not a whole count", clip(text, 20))
		}
		text = strings.TrimSpace(text)
	}
	d, err := exactDecimal([]byte(text))
	if err != nil {
		return 0, "", fmt.Errorf("%q is not a GPU count", clip(text, 20))
	}
	switch {
	case !d.IsPositive():
		return 0, "", fmt.Errorf("%s is not a GPU count", d)
	case d.LessThan(decimal.NewFromInt(1)):
		return 0, d.String(), nil
	case !d.IsInteger() || d.GreaterThan(decimal.NewFromInt(1<<10)):
		return 0, "", fmt.Errorf("%s is not a GPU count", d)
	}
	return int(d.IntPart()), "", nil
}

// vultrCountFromVRAM derives a plan's GPU count from its total VRAM when no field gives it:
// the one count n whose share total/n is an integer number of GB that is the VRAM of a catalog
// model of the family (the name resolves at it, or a model has exactly it). A total below
// every model of the family is a slice; anything else is an error.
func vultrCountFromVRAM(name, family string, totalGB float64) (count int, fraction string, err error) {
	if totalGB <= 0 {
		return 0, "", errors.New("gpu_count: none, and no gpu_vram_gb to derive it from")
	}
	var familyVRAM []float64
	for _, m := range gpus.Models() {
		if strings.EqualFold(m.Family, family) {
			familyVRAM = append(familyVRAM, m.VRAMGB)
		}
	}
	var counts []int
	for n := 1; n <= 16; n++ {
		share := totalGB / float64(n)
		if share != math.Trunc(share) {
			continue
		}
		if gpus.Resolve(VultrName, name, share).Known || slices.Contains(familyVRAM, share) {
			counts = append(counts, n)
		}
	}
	switch {
	case len(counts) == 1:
		return counts[0], "", nil
	case len(counts) > 1:
		return 0, "", fmt.Errorf("gpu_count: none, and gpu_vram_gb %g is %s GPUs of the family: which is not said", totalGB, joinInts(counts))
	case len(familyVRAM) > 0 && totalGB < slices.Min(familyVRAM):
		return 0, fmt.Sprintf("%gGB slice", totalGB), nil
	}
	return 0, "", fmt.Errorf("gpu_count: none, and gpu_vram_gb %g is no whole number of %s GPUs", totalGB, clip(name, 40))
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, " or ")
}

// vultrPrice reads a price field: nil when absent, null or 0 (not offered at that rate), an
// error when it is negative or no number.
func vultrPrice(raw json.RawMessage, field string) (*decimal.Decimal, error) {
	d, present, err := jsonNumber(raw)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%s: %w", field, err)
	case !present || d.IsZero():
		return nil, nil
	case d.IsNegative():
		return nil, fmt.Errorf("%s %s is negative", field, d)
	}
	return &d, nil
}

// vultrSpec reads a host figure scaled by scale: nil when absent, null or not positive.
func vultrSpec(raw json.RawMessage, field string, scale float64) (*float64, error) {
	d, present, err := jsonNumber(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", field, err)
	}
	if !present || !d.IsPositive() {
		return nil, nil
	}
	return ptr(round(d.InexactFloat64()*scale, 2)), nil
}

// vultrLocations returns a plan's locations, sorted, each once; "" entries are skipped (the API
// sends them), an entry that is not a location id is a problem.
func vultrLocations(id string, locations []string) (names []string, problems []error) {
	for _, l := range locations {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
		case !vultrLocationRe.MatchString(l):
			problems = append(problems, fmt.Errorf("plan %q: location %q is not a location id", clip(id, 60), clip(l, 40)))
		case !slices.Contains(names, l):
			names = append(names, l)
		}
	}
	slices.Sort(names)
	return names, problems
}
