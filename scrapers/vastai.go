package scrapers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Vast.ai defaults (docs/providers.md §1.1–1.3).
const (
	// VastName is the provider name Vast.ai offers are recorded under.
	VastName = "vastai"
	// DefaultVastURL is the offers search endpoint (POST, JSON body).
	DefaultVastURL = "https://console.vast.ai/api/v0/bundles/"
)

// DefaultVastGPUNames are the gpu_name values (Vast's spelling, with spaces) queried one slice
// each. A last slice asks for every other name (gpu_name notin this list), so new and unknown
// GPUs are still seen.
var DefaultVastGPUNames = []string{
	"B200", "H200", "H200 NVL", "H100 SXM", "H100 PCIE", "H100 NVL",
	"A100 SXM4", "A100 PCIE", "L40S", "L40", "L4", "A40", "A10",
	"RTX 6000Ada", "RTX A6000", "RTX 5090", "RTX 4090", "RTX 3090", "Tesla V100",
}

// VastConfig configures the Vast.ai source. Zero fields take the defaults.
type VastConfig struct {
	URL    string // default DefaultVastURL
	APIKey string // optional; sent as "Authorization: Bearer" when set, never in the URL

	// GPUNames are the slices queried (nil = DefaultVastGPUNames) plus one for all other names;
	// an empty non-nil list queries only that catch-all slice.
	GPUNames []string
	// PageLimit is the "limit" sent with each query (default 64, the clamp seen on keyless
	// calls). A page that comes back with PageLimit offers is treated as truncated.
	PageLimit int
	// AllocatedStorageGB is pinned in every query so dph_total is reproducible (default 8, the
	// server's own default; the CLI sends 5).
	AllocatedStorageGB float64
	// RequestInterval separates consecutive requests (default 6s: the documented budget is
	// 10 requests per minute per IP; 429s are also retried by the client). Negative = none.
	RequestInterval time.Duration
}

func (c VastConfig) withDefaults() VastConfig {
	if c.URL == "" {
		c.URL = DefaultVastURL
	}
	if c.GPUNames == nil {
		c.GPUNames = DefaultVastGPUNames
	}
	if c.PageLimit <= 0 {
		c.PageLimit = 64
	}
	if c.AllocatedStorageGB <= 0 {
		c.AllocatedStorageGB = 8
	}
	switch {
	case c.RequestInterval == 0:
		c.RequestInterval = 6 * time.Second
	case c.RequestInterval < 0:
		c.RequestInterval = 0
	}
	return c
}

// Vast is the Vast.ai marketplace source.
type Vast struct {
	cfg    VastConfig
	client *Client
	logger *slog.Logger
}

// NewVast returns the Vast.ai source fetching through client. A nil logger discards.
func NewVast(client *Client, cfg VastConfig, logger *slog.Logger) *Vast {
	return &Vast{cfg: cfg.withDefaults(), client: client, logger: orDiscard(logger)}
}

// Name returns "vastai".
func (v *Vast) Name() string { return VastName }

// ParserVersion names the parser of its offers (ParserVersion).
func (v *Vast) ParserVersion() string { return ParserVersion(VastName) }

// vastSlice is one query: a gpu_name filter and optionally a num_gpus filter.
type vastSlice struct {
	label   string
	gpuName map[string]any // the gpu_name filter: {"eq": name} or {"notin": [...]}
	numGPUs map[string]any // nil, or {"eq": n} / {"gte": n, "lte": m}
}

// numGPUBuckets split a slice whose result is truncated in both sort orders.
var numGPUBuckets = []struct {
	label  string
	filter map[string]any
}{
	{"1 GPU", map[string]any{"eq": 1}},
	{"2 GPUs", map[string]any{"eq": 2}},
	{"3-4 GPUs", map[string]any{"gte": 3, "lte": 4}},
	{"5-8 GPUs", map[string]any{"gte": 5, "lte": 8}},
	{"9+ GPUs", map[string]any{"gte": 9}},
}

// Fetch queries every slice (both sort orders when a page is full, split by GPU count when
// both orders are full and do not overlap), dedupes offers by ask id, and keeps one on-demand
// and (when min_bid is set) one spot offer per ask, handing each page and its new offers to
// run.Keep as it reads them (in the Extract when the run has no Emit). A failed slice is a Problem; the
// run fails when every slice failed or nothing was parsed, and at once when the source's byte
// budget is spent, a page holds more rows than asked for, or ctx is done: those would leave a
// smaller market, not a missing slice. Each pause between two requests is announced with
// run.Pace before it is kept, so a deadline can follow the plan (docs/providers.md §1.3).
func (v *Vast) Fetch(ctx context.Context, run schema.Run) (res schema.Extract, err error) {
	defer func() { res.Problems = sourceErrors(VastName, capProblems(res.Problems)) }()
	ctx, attempts := WithAttemptCounter(ctx)
	ctx = v.client.withBudget(ctx)
	f := &vastFetch{v: v, run: run, seen: map[string]bool{}}
	slicesQ := make([]vastSlice, 0, len(v.cfg.GPUNames)+1)
	for _, n := range v.cfg.GPUNames {
		slicesQ = append(slicesQ, vastSlice{label: n, gpuName: map[string]any{"eq": n}})
	}
	slicesQ = append(slicesQ, vastSlice{label: "other GPUs", gpuName: map[string]any{"notin": v.cfg.GPUNames}})

	var failed int
	var firstErr error
	for i, s := range slicesQ {
		if err := f.slice(ctx, s, true); err != nil {
			if vastFatal(ctx, err) {
				f.res.Attempts = attempts.Count()
				return f.res, sourceError(VastName, fmt.Errorf("querying slice %q (%d of %d), after %d requests: %w", s.label, i+1, len(slicesQ), f.requests, err))
			}
			failed++
			if firstErr == nil {
				firstErr = err
			}
			f.res.Problems = append(f.res.Problems, sourceError(VastName, fmt.Errorf("querying slice %q: %w", s.label, err)))
		}
	}
	f.res.Attempts = attempts.Count()
	sortOffers(f.res.Offers) // what the run did not take page by page (run.Keep)
	switch {
	case failed == len(slicesQ):
		if se, ok := firstErr.(*Error); ok && se.Source == VastName {
			firstErr = se.Err // named once, by the error returned
		}
		return f.res, sourceError(VastName, fmt.Errorf("every slice failed, first: %w", firstErr))
	case f.offers == 0:
		return f.res, sourceError(VastName, ErrNoOffers)
	}
	return f.res, nil
}

// vastFatal reports whether a slice's error ends the whole fetch: ctx done, the budget spent, or
// more offers than a source returns.
func vastFatal(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, ErrOverBudget) || errors.Is(err, ErrTooManyOffers)
}

// vastFetch is the state of one Fetch.
type vastFetch struct {
	v        *Vast
	run      schema.Run
	res      schema.Extract
	seen     map[string]bool // ask ids already turned into offers
	offers   int             // offers kept so far
	requests int
	ascAsks  []string // the ask ids of the last ascending page
	overlap  bool     // the last descending page shares an ask with the ascending one
}

// slice queries one slice; split says whether a truncated slice may be split by GPU count.
func (f *vastFetch) slice(ctx context.Context, s vastSlice, split bool) error {
	asc, err := f.page(ctx, s, "asc")
	if err != nil {
		return err
	}
	if asc < f.v.cfg.PageLimit {
		return nil
	}
	desc, err := f.page(ctx, s, "desc")
	if err != nil {
		return err
	}
	if desc < f.v.cfg.PageLimit || f.overlap {
		return nil // the two ends meet: nothing is missing in between
	}
	if split && s.numGPUs == nil {
		var errs []error
		for _, b := range numGPUBuckets {
			sub := vastSlice{label: s.label + ", " + b.label, gpuName: s.gpuName, numGPUs: b.filter}
			if err := f.slice(ctx, sub, false); err != nil {
				if vastFatal(ctx, err) {
					return err
				}
				errs = append(errs, err)
			}
		}
		return errors.Join(errs...)
	}
	f.res.Problems = append(f.res.Problems, sourceError(VastName, fmt.Errorf(
		"slice %q: %w: %d offers per page in both sort orders, pages do not overlap", s.label, ErrTruncated, f.v.cfg.PageLimit)))
	return nil
}

// page fetches one page and adds its new offers; it returns the page's row count. A page
// asked in descending order sets f.overlap when it shares an ask with the ascending page of
// its slice, which is the one fetched just before it.
func (f *vastFetch) page(ctx context.Context, s vastSlice, order string) (int, error) {
	if f.requests > 0 && f.v.cfg.RequestInterval > 0 {
		f.run.Pace(f.v.cfg.RequestInterval)
		t := time.NewTimer(f.v.cfg.RequestInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return 0, ctx.Err()
		case <-t.C:
		}
	}
	f.requests++
	body := vastQuery(s, order, f.v.cfg)
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	if f.v.cfg.APIKey != "" {
		h.Set("Authorization", "Bearer "+f.v.cfg.APIKey)
	}
	resp, err := f.v.client.Do(ctx, Request{Source: VastName, Method: http.MethodPost, URL: f.v.cfg.URL, Header: h, Body: body})
	if resp != nil {
		if err := f.run.Keep(&f.res, schema.Page{Payloads: []schema.RawPayload{resp.Payload()}}); err != nil {
			return 0, err
		}
	}
	if err != nil {
		return 0, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.ContentType); mt != "application/json" {
		return 0, fmt.Errorf("%w: content type %q, want application/json", ErrLayoutChanged, clipLine(resp.ContentType, 80))
	}
	p, err := parseVast(resp.Body, f.run, resp.URL, f.v.cfg.PageLimit)
	if err != nil {
		return 0, err
	}
	f.res.Problems = append(f.res.Problems, p.problems...)
	fresh := p.offers[:0] // the page's offers of asks not seen before, in place
	for i, o := range p.offers {
		if !f.seen[p.offerAsks[i]] {
			fresh = append(fresh, o)
		}
	}
	f.offers += len(fresh)
	if err := f.v.client.offerCap(f.offers); err != nil {
		return 0, err
	}
	if err := f.run.Keep(&f.res, schema.Page{Offers: fresh}); err != nil {
		return 0, err
	}
	if order == "asc" {
		f.ascAsks = p.rows
	} else {
		f.overlap = overlaps(f.ascAsks, p.rows)
	}
	for _, id := range p.offerAsks {
		f.seen[id] = true
	}
	f.v.logger.Debug("Vast page", "slice", s.label, "order", order, "rows", len(p.rows), "offers", len(p.offers))
	return len(p.rows), nil
}

// vastQuery builds the search body. json.Marshal sorts map keys, so the body is deterministic
// (replay matches requests on it).
func vastQuery(s vastSlice, order string, cfg VastConfig) []byte {
	q := map[string]any{
		"gpu_name":          s.gpuName,
		"rentable":          map[string]any{"eq": true},
		"rented":            map[string]any{"eq": false},
		"type":              "on-demand",
		"order":             [][]string{{"dph_total", order}},
		"limit":             cfg.PageLimit,
		"allocated_storage": cfg.AllocatedStorageGB,
	}
	if s.numGPUs != nil {
		q["num_gpus"] = s.numGPUs
	}
	b, err := json.Marshal(q)
	if err != nil { // maps of strings, numbers and bools always marshal
		panic(err)
	}
	return b
}

// overlaps reports whether two pages share an ask id ("" is no id).
func overlaps(a, b []string) bool {
	for _, x := range b {
		if x != "" && slices.Contains(a, x) {
			return true
		}
	}
	return false
}

// vastOffer holds the fields of a Vast offer the parser uses (docs/providers.md §1.4). Every field
// but id is nullable in practice.
type vastOffer struct {
	ID                json.Number  `json:"id"`
	NumGPUs           *float64     `json:"num_gpus"`
	GPUName           *string      `json:"gpu_name"`
	GPURAM            *float64     `json:"gpu_ram"`   // MiB per GPU, labelled MB
	DPHTotal          *exactNumber `json:"dph_total"` // prices are read exactly
	DPHBase           *exactNumber `json:"dph_base"`
	StorageTotalCost  *exactNumber `json:"storage_total_cost"`
	MinBid            *exactNumber `json:"min_bid"`
	BWNVLink          *float64     `json:"bw_nvlink"` // GB/s, 0 = none
	Reliability       *float64     `json:"reliability"`
	Reliability2      *float64     `json:"reliability2"`
	Verification      *string      `json:"verification"`
	Geolocation       *string      `json:"geolocation"`
	CPUCoresEffective *float64     `json:"cpu_cores_effective"`
	CPURAM            *float64     `json:"cpu_ram"` // MB, the offer's share of the machine
	DiskSpace         *float64     `json:"disk_space"`
	ClusterID         *float64     `json:"cluster_id"`
	Search            *vastSearch  `json:"search"`
}

// vastSearch is an offer's "search" object. It is an alias of an unnamed struct type, so that
// encoding/json's messages about it spell the type out.
type vastSearch = struct {
	TotalHour *exactNumber `json:"totalHour"`
}

// vastOfferKeys are the JSON names of vastOffer's fields, all lower case: the keys a row spelled
// in another case means (encoding/json matches them so).
var vastOfferKeys = func() []string {
	var keys []string
	for f := range reflect.TypeFor[vastOffer]().Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		keys = append(keys, strings.ToLower(name))
	}
	return keys
}()

// ParseVast parses one response of the Vast.ai offers search into offers, in response order:
// for each ask, one on-demand offer and, when min_bid is set, one spot offer.
//
// Units and traps (docs/providers.md §1.4–1.8):
//   - Prices are per offer (num_gpus GPUs): on-demand is dph_total (compute plus the storage
//     pinned by allocated_storage; else search.totalHour, else dph_base + storage_total_cost),
//     spot is min_bid + storage_total_cost, so both include the same disk. min_bid can exceed
//     the on-demand price; it is recorded as it is. Per-GPU = offer price / num_gpus.
//   - gpu_ram is MiB per GPU; 81559 MiB snaps to an 80 GB H100 (flag vram_snapped).
//   - The form factor comes from gpu_name; a name without one (Tesla V100) is resolved as SXM
//     only when bw_nvlink > 0 proves NVLink, else the offer is kept as unknown_gpu.
//   - bw_nvlink (GB/s) > 0 is NVLink (NVSwitch on SXM parts but V100), 0 is PCIe, null unknown. Marketplace
//     hosts cannot be clustered (inter-node none) unless cluster_id is set (unknown).
//   - Tier: verification "verified" → verified, anything else (unverified, deverified, null) →
//     unverified. geolocation "California, US" → country US, region "us-california"; null and
//     ", US" occur.
//   - vCPUs are cpu_cores_effective; RAM is cpu_ram (MB) / 1000 GB. Both are already the
//     offer's share of the machine: asks of one machine carry cpu_ram in proportion to their
//     GPUs (its 8-GPU ask 2,063,854 MB, its 4-GPU ask 1,031,927 MB), so scaling cpu_ram again by
//     cpu_cores_effective / cpu_cores under-reported every partial-machine offer.
//
// A row without an id, GPU count or price is skipped and reported in problems. The error is set
// when the body is not a whole Vast search response (ErrIncomplete when it is cut short,
// ErrLayoutChanged when it is something else) or holds more than MaxOffers rows.
func ParseVast(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	p, err := parseVast(body, run, sourceURL, MaxOffers)
	return p.offers, sourceErrors(VastName, capProblems(p.problems)), err
}

// vastPage is one search answer as parsed.
type vastPage struct {
	offers    []schema.Offer
	offerAsks []string // the ask id of each offer
	rows      []string // the ask id of every row, "" where unreadable: a full page of bad rows is full
	problems  []error
}

// parseVast parses one search answer row by row, failing when it has more than maxRows rows.
//
// An answer is read in one pass over its bytes (vastParse.scan), with the ids of its rows. What
// that pass does not take, it leaves to encoding/json (vastParse.decode), which reads any body
// and names what is wrong with it: a body that is not one whole JSON document, an answer of
// another shape, more than maxRows rows. Within an answer it takes, a row it
// does not take (a field of another type, a key in another case) is decoded alone by
// encoding/json. Either way the page is the one encoding/json's decoding gives
// (FuzzVastScanSameAsDecode).
func parseVast(body []byte, run schema.Run, sourceURL string, maxRows int) (vastPage, error) {
	if p := newVastParse(run, sourceURL, maxRows, len(body)); p.scan(body) {
		return p.result(), nil
	}
	return newVastParse(run, sourceURL, maxRows, len(body)).decode(body)
}

// vastParse is the state of parsing one answer: the page so far, and what its rows share.
type vastParse struct {
	run       schema.Run
	sourceURL string
	maxRows   int
	page      vastPage

	values vastValues // what the row being scanned points to
	strs   stringTable
	gpus   memo[vastGPU, gpus.Match]
	places memo[string, vastPlace]
}

// newVastParse starts the parse of an answer of size bytes.
func newVastParse(run schema.Run, sourceURL string, maxRows, size int) *vastParse {
	p := &vastParse{
		run: run, sourceURL: sourceURL, maxRows: maxRows,
		strs: stringTable{}, gpus: memo[vastGPU, gpus.Match]{}, places: memo[string, vastPlace]{},
	}
	// A live row is some 2.4 kB and most give two offers: room for the offers of a body of
	// such rows (two per row at most), so that they are not copied again and again as the page
	// grows.
	p.page.offers = make([]schema.Offer, 0, min(size/1000, 2*maxRows))
	return p
}

// decode parses body with encoding/json: the whole body is checked, then the offers array is
// decoded one row at a time.
func (p *vastParse) decode(body []byte) (vastPage, error) {
	rows := &vastRows{p: p}
	doc := struct {
		Offers *vastRows `json:"offers"`
	}{Offers: rows}
	if err := decodeJSON(body, "offers", &doc); err != nil {
		return vastPage{}, sourceError(VastName, err)
	}
	if doc.Offers == nil || !rows.found {
		return vastPage{}, sourceError(VastName, fmt.Errorf("%w: no \"offers\" array in the response", ErrLayoutChanged))
	}
	return p.result(), nil
}

// result returns the page parsed, its offers nil when there are none (as when appended to nil).
func (p *vastParse) result() vastPage {
	if len(p.page.offers) == 0 {
		p.page.offers = nil
	}
	return p.page
}

// vastRows decodes the "offers" array of a search answer one row at a time.
type vastRows struct {
	p     *vastParse
	found bool
}

func (r *vastRows) UnmarshalJSON(data []byte) error {
	r.found = true
	return eachElement(data, func(i int, raw []byte) error {
		if i >= r.p.maxRows {
			return fmt.Errorf("%w: more than %d rows in one answer", ErrTooManyOffers, r.p.maxRows)
		}
		r.p.decodeRow(i, raw)
		return nil // at most two offers per row: maxRows bounds them
	})
}

// decodeRow adds row i, decoding its bytes raw with encoding/json. A row that does not decode
// into a vastOffer is a problem; it still counts as a row, with its id if it has one.
func (p *vastParse) decodeRow(i int, raw []byte) {
	var vo vastOffer
	if err := json.Unmarshal(raw, &vo); err != nil {
		var id struct {
			ID json.Number `json:"id"`
		}
		_ = json.Unmarshal(raw, &id)
		p.page.rows = append(p.page.rows, id.ID.String())
		p.page.problems = append(p.page.problems, sourceError(VastName, fmt.Errorf("offer #%d: decoding: %w", i, err)))
		return
	}
	p.addRow(i, &vo)
}

// addRow adds row i, decoded as vo: its offers, or the problem that keeps it from having any.
func (p *vastParse) addRow(i int, vo *vastOffer) {
	id := vo.ID.String()
	p.page.rows = append(p.page.rows, id)
	n := len(p.page.offers)
	if err := p.appendOffers(vo); err != nil {
		p.page.problems = append(p.page.problems, sourceError(VastName, fmt.Errorf("offer %s: %w", vastRowID(vo, i), err)))
		return
	}
	for range len(p.page.offers) - n {
		p.page.offerAsks = append(p.page.offerAsks, id)
	}
}

// scan reads a whole answer, {"offers": [rows]} with any other members, in one pass. It
// reports false, with a partial page, for what it leaves to decode: a syntax error, more than
// maxRows rows, or another shape (no "offers" array, "offers" twice, or a
// key that encoding/json's matching, which ignores case, takes for "offers").
func (p *vastParse) scan(body []byte) bool {
	s := &jsonScanner{data: body}
	if s.peek() != '{' {
		return false
	}
	s.open()
	found := false
	for i := 0; s.next('}', i); i++ {
		switch key, plain := s.key(); {
		case !plain:
			return false
		case !found && string(key) == "offers":
			found = true
			if !p.scanRows(s) {
				return false
			}
		case strings.EqualFold(string(key), "offers"): // a second one, or one in other case
			return false
		default:
			s.skip()
		}
	}
	return found && !s.failed && s.atEnd()
}

// scanRows reads the offers array.
func (p *vastParse) scanRows(s *jsonScanner) bool {
	if s.peek() != '[' {
		return false
	}
	s.open()
	for i := 0; s.next(']', i); i++ {
		if i >= p.maxRows {
			return false
		}
		p.scanRow(s, i) // at most two offers per row: maxRows bounds them
	}
	return !s.failed
}

// scanRow reads row i and adds it. A row scanOffer does not take is read again as a whole value
// and decoded by decodeRow.
func (p *vastParse) scanRow(s *jsonScanner, i int) {
	s.peek()
	start, depth := s.pos, s.depth
	var vo vastOffer
	if p.scanOffer(s, &vo) {
		p.addRow(i, &vo)
		return
	}
	if s.failed {
		return
	}
	s.pos, s.depth = start, depth
	s.skip()
	if !s.failed {
		p.decodeRow(i, s.data[start:s.pos])
	}
}

// vastValues holds the values of the row being scanned, which its vastOffer points to.
type vastValues struct {
	numGPUs, gpuRAM, bwNVLink, reliability, reliability2   float64
	cpuCoresEffective, cpuRAM, diskSpace, cluster          float64
	gpuName, verification, geolocation                     string
	dphTotal, dphBase, storageTotalCost, minBid, totalHour exactNumber
	search                                                 vastSearch
}

// scanOffer reads a row into vo as json.Unmarshal would. It reports false for a row it leaves
// to encoding/json: one that is no object, a value of another type than its field's, a key with
// escapes or bytes beyond ASCII, or one that names a field in another case.
func (p *vastParse) scanOffer(s *jsonScanner, vo *vastOffer) bool {
	if s.peek() != '{' {
		return false
	}
	s.open()
	v := &p.values
	for i := 0; s.next('}', i); i++ {
		key, plain := s.key()
		if !plain {
			return false
		}
		ok := true
		switch string(key) {
		case "id":
			ok = scanID(s, &vo.ID)
		case "num_gpus":
			vo.NumGPUs, ok = scanFloat(s, &v.numGPUs)
		case "gpu_name":
			vo.GPUName, ok = p.scanString(s, &v.gpuName)
		case "gpu_ram":
			vo.GPURAM, ok = scanFloat(s, &v.gpuRAM)
		case "dph_total":
			vo.DPHTotal, ok = scanExact(s, &v.dphTotal)
		case "dph_base":
			vo.DPHBase, ok = scanExact(s, &v.dphBase)
		case "storage_total_cost":
			vo.StorageTotalCost, ok = scanExact(s, &v.storageTotalCost)
		case "min_bid":
			vo.MinBid, ok = scanExact(s, &v.minBid)
		case "bw_nvlink":
			vo.BWNVLink, ok = scanFloat(s, &v.bwNVLink)
		case "reliability":
			vo.Reliability, ok = scanFloat(s, &v.reliability)
		case "reliability2":
			vo.Reliability2, ok = scanFloat(s, &v.reliability2)
		case "verification":
			vo.Verification, ok = p.scanString(s, &v.verification)
		case "geolocation":
			vo.Geolocation, ok = p.scanString(s, &v.geolocation)
		case "cpu_cores_effective":
			vo.CPUCoresEffective, ok = scanFloat(s, &v.cpuCoresEffective)
		case "cpu_ram":
			vo.CPURAM, ok = scanFloat(s, &v.cpuRAM)
		case "disk_space":
			vo.DiskSpace, ok = scanFloat(s, &v.diskSpace)
		case "cluster_id":
			vo.ClusterID, ok = scanFloat(s, &v.cluster)
		case "search":
			vo.Search, ok = scanSearch(s, vo.Search, &v.search, &v.totalHour)
		default:
			if foldsToKey(key, vastOfferKeys) {
				return false
			}
			s.skip()
		}
		if !ok {
			return false
		}
	}
	return !s.failed
}

// scanID reads an id given as a number (null leaves id as it is).
func scanID(s *jsonScanner, id *json.Number) bool {
	switch c := s.peek(); {
	case c == 'n':
		return s.null()
	case c == '-' || isDigit(c):
		*id = json.Number(s.number())
		return true
	}
	return false
}

// scanFloat reads a number into *slot and returns slot, or nil for null.
func scanFloat(s *jsonScanner, slot *float64) (*float64, bool) {
	switch c := s.peek(); {
	case c == 'n':
		return nil, s.null()
	case c == '-' || isDigit(c):
		f, err := strconv.ParseFloat(string(s.number()), 64)
		if err != nil { // out of float64's range: encoding/json's type error
			return nil, false
		}
		*slot = f
		return slot, true
	}
	return nil, false
}

// scanExact reads a price into *slot (see exactNumber) and returns slot, or nil for null.
func scanExact(s *jsonScanner, slot *exactNumber) (*exactNumber, bool) {
	switch c := s.peek(); {
	case c == 'n':
		return nil, s.null()
	case c == '-' || isDigit(c):
		d, err := exactDecimal(s.number())
		if err != nil {
			return nil, false
		}
		slot.Decimal = d
		return slot, true
	}
	return nil, false
}

// scanString reads a string into *slot and returns slot, or nil for null. Strings of ASCII
// without escapes are taken as they stand (from the parse's table when seen before); others are
// decoded by encoding/json.
func (p *vastParse) scanString(s *jsonScanner, slot *string) (*string, bool) {
	switch s.peek() {
	case 'n':
		return nil, s.null()
	case '"':
		start := s.pos
		text, plain := s.str()
		switch {
		case s.failed:
			return nil, false
		case plain:
			*slot = p.strs.intern(text)
		case json.Unmarshal(s.data[start:s.pos], slot) != nil:
			return nil, false
		}
		return slot, true
	}
	return nil, false
}

// scanSearch reads the search object into cur, which is slot when the row had none yet (a
// second "search" member adds to the first, as in encoding/json), with its total in total. It
// returns nil for null.
func scanSearch(s *jsonScanner, cur, slot *vastSearch, total *exactNumber) (*vastSearch, bool) {
	switch s.peek() {
	case 'n':
		return nil, s.null()
	case '{':
	default:
		return nil, false
	}
	if cur == nil {
		*slot = vastSearch{}
		cur = slot
	}
	s.open()
	for i := 0; s.next('}', i); i++ {
		switch key, plain := s.key(); {
		case plain && string(key) == "totalHour":
			var ok bool
			if cur.TotalHour, ok = scanExact(s, total); !ok {
				return nil, false
			}
		case !plain || strings.EqualFold(string(key), "totalHour"):
			return nil, false
		default:
			s.skip()
		}
	}
	return cur, !s.failed
}

// foldsToKey reports whether encoding/json, which matches keys to field names ignoring case,
// would take key (ASCII, no escapes) for one of names (all lower case), other than by
// equality.
func foldsToKey(key []byte, names []string) bool {
	if !slices.ContainsFunc(key, func(c byte) bool { return 'A' <= c && c <= 'Z' }) {
		return false // equal to none of names, and in their case
	}
	for _, n := range names {
		if len(n) == len(key) && strings.EqualFold(string(key), n) {
			return true
		}
	}
	return false
}

func vastRowID(vo *vastOffer, i int) string {
	if vo.ID != "" {
		return vo.ID.String()
	}
	return "#" + strconv.Itoa(i)
}

// vastGPU is a GPU name to resolve: the name, its per-GPU VRAM, and the name to try when the
// first stays unknown ("" = none).
type vastGPU struct {
	name string
	vram float64
	alt  string
}

func resolveVastGPU(g vastGPU) gpus.Match { return resolveGPU(VastName, g.name, g.vram, g.alt) }

// vastPlace is the region and country of a geolocation.
type vastPlace struct{ region, country string }

func vastPlaceOf(geo string) vastPlace {
	r, c := vastLocation(geo)
	return vastPlace{region: r, country: c}
}

// appendOffers appends vo's offers to the page.
func (p *vastParse) appendOffers(vo *vastOffer) error {
	if _, err := vo.ID.Int64(); err != nil {
		return fmt.Errorf("no usable id %q", vo.ID)
	}
	if !positive(vo.NumGPUs) || *vo.NumGPUs != float64(uint16(*vo.NumGPUs)) {
		return fmt.Errorf("num_gpus %v is not a GPU count", deref(vo.NumGPUs))
	}
	count := uint16(*vo.NumGPUs)
	storage := decimal.Zero
	if vo.StorageTotalCost.positive() {
		storage = vo.StorageTotalCost.Decimal
	}
	var onDemand decimal.Decimal // exact: sums of the wire's decimals, rounded once by priced
	switch {
	case vo.DPHTotal.positive():
		onDemand = vo.DPHTotal.Decimal
	case vo.Search != nil && vo.Search.TotalHour.positive():
		onDemand = vo.Search.TotalHour.Decimal
	case vo.DPHBase.positive():
		onDemand = vo.DPHBase.Add(storage)
	default:
		return errors.New("no price (dph_total, search.totalHour and dph_base all missing or zero)")
	}

	o := schema.Offer{
		SourceURL: p.sourceURL,
		Provider:  VastName,
		OfferID:   vo.ID.String(),
		Tier:      schema.TierUnverified,
		GPUCount:  count,
		IntraNode: schema.IntraUnknown,
		InterNode: schema.InterNone,
		Stock:     schema.StockUnknown,
		DQFlags:   []schema.DQFlag{},
	}
	p.run.Stamp(&o)
	if vo.Verification != nil && *vo.Verification == "verified" {
		o.Tier = schema.TierVerified
	}
	if vo.Geolocation != nil {
		place := p.places.get(*vo.Geolocation, vastPlaceOf)
		o.Region, o.Country = place.region, place.country
	}

	name := strings.TrimSpace(deref(vo.GPUName))
	vram := 0.0
	if positive(vo.GPURAM) {
		vram = gpus.MiBToGB(*vo.GPURAM)
	}
	var alt string
	if positive(vo.BWNVLink) {
		alt = name + " SXM" // NVLink proven: tried only when the name alone stays unknown
	}
	m := setGPU(&o, name, vram, p.gpus.get(vastGPU{name: name, vram: vram, alt: alt}, resolveVastGPU))

	switch {
	case vo.BWNVLink == nil:
		o.IntraNode = schema.IntraUnknown
	case *vo.BWNVLink > 0:
		o.NVLinkGbps = ptr(round(*vo.BWNVLink, 3))
		o.IntraNode = schema.IntraNVLink
		if m.Known && m.Model.BoardFabric {
			o.IntraNode = m.Model.BoardIntraNode()
		}
	default:
		o.IntraNode = schema.IntraPCIe
	}
	if vo.ClusterID != nil {
		o.InterNode = schema.InterUnknown
	}

	if positive(vo.CPUCoresEffective) {
		o.VCPUs = ptr(round(*vo.CPUCoresEffective, 2))
	}
	if positive(vo.CPURAM) {
		o.RAMGB = ptr(round(*vo.CPURAM/1000, 2)) // already the offer's share (see ParseVast)
	}
	if positive(vo.DiskSpace) {
		o.DiskGB = ptr(round(*vo.DiskSpace, 2))
	}
	if r := vo.Reliability; r != nil && *r >= 0 && *r <= 1 {
		o.Reliability = ptr(round(*r, 6))
	} else if r := vo.Reliability2; r != nil && *r >= 0 && *r <= 1 {
		o.Reliability = ptr(round(*r, 6))
	}

	p.page.offers = append(p.page.offers, priced(o, schema.OnDemand, onDemand))
	if vo.MinBid.positive() {
		p.page.offers = append(p.page.offers, priced(o, schema.Spot, vo.MinBid.Add(storage)))
	}
	return nil
}

// vastLocation splits "California, US" (or "Czechia, CZ, EU" with georegion) into a region
// slug ("us-california") and a country code. Empty and ", US" are handled.
func vastLocation(geo string) (region, country string) {
	parts := strings.Split(geo, ",")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	if len(parts) < 2 {
		return "", countryCode(parts[0])
	}
	country = countryCode(parts[1])
	state := strings.ToLower(strings.Join(strings.Fields(parts[0]), ""))
	switch {
	case country == "":
		return "", ""
	case state == "":
		return strings.ToLower(country), country
	}
	return strings.ToLower(country) + "-" + state, country
}
