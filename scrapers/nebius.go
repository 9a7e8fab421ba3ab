package scrapers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Nebius defaults (docs/providers.md §12.1).
const (
	// NebiusName is the provider name Nebius offers are recorded under.
	NebiusName = "nebius"
	// DefaultNebiusURL is Nebius AI Cloud's public price page. Its prices are also served by a
	// gRPC billing calculator, which needs a service account and is not read (§12.6).
	DefaultNebiusURL = "https://nebius.com/prices"
)

// The page's tables are JSON arrays of rows inside the page's data, {"table":{"content":[[…]]}},
// which the page carries as a string literal of its script ("\"table\":{\"content\":…"), or as
// plain JSON.
var (
	nebiusTableRe   = regexp.MustCompile(`"table"\s*:\s*\{\s*"content"\s*:\s*\[`)
	nebiusEscapedRe = regexp.MustCompile(`\\"table\\"\s*:\s*\{\s*\\"content\\"\s*:\s*\[`)
)

var (
	// nebiusEffectiveRe is the date a price column takes effect: "GPU-hour (Effective October 1, 2026)".
	nebiusEffectiveRe = regexp.MustCompile(`(?i)\(\s*effective\s+([^()]*?)\s*\)`)
	nebiusFromRe      = regexp.MustCompile(`(?i)^from\s+`)         // "from $1.82": a floor
	nebiusContactRe   = regexp.MustCompile(`(?i)\bcontact\s+us\b`) // "[Contact us](#ai-contact-form)"
	nebiusRangeRe     = regexp.MustCompile(`^\d+(?:\.\d+)?\s*[-–]\s*\d+(?:\.\d+)?$`)
)

// nebiusDateLayouts are the ways an "Effective <date>" header may write its date.
var nebiusDateLayouts = []string{"January 2, 2006", "Jan 2, 2006", "January 2 2006", "2 January 2006", "2006-01-02"}

// nebiusColumns are the columns of a GPU price table, found by their header text.
type nebiusColumns struct {
	item, vcpus, ram int // -1 when absent
	ramScale         float64
	price            map[schema.PriceType]int // the column of each price type in effect at the run
	header           []string
}

// nebiusPriceColumn is one price column of the header: its price type and, for a column headed
// "(Effective <date>)", the date it takes effect (zero for the current price).
type nebiusPriceColumn struct {
	col       int
	pt        schema.PriceType
	effective time.Time
}

// nebiusHeader reads a table's header row. ok is false for a table that is not one of GPU prices
// (its first cell is not "Item", or no column is priced per GPU-hour: the CPU-only and storage
// tables); an error for a GPU price table whose columns the parser cannot choose between.
func nebiusHeader(header []string, at time.Time) (c nebiusColumns, ok bool, err error) {
	c = nebiusColumns{item: -1, vcpus: -1, ram: -1, price: map[schema.PriceType]int{}, header: header}
	var prices []nebiusPriceColumn
	var dateErr error
	for i, h := range header {
		lower := strings.ToLower(normalizeSpace(h))
		switch {
		case lower == "item":
			if c.item < 0 {
				c.item = i
			}
		case lower == "vcpus" || lower == "vcpu":
			c.vcpus = i
		case lower == "ram, gb" || lower == "ram, gib":
			c.ram, c.ramScale = i, 1
			if strings.HasSuffix(lower, "gib") {
				c.ramScale = gpus.GiB
			}
		case strings.Contains(lower, "gpu-hour"):
			p := nebiusPriceColumn{col: i}
			m := nebiusEffectiveRe.FindStringSubmatch(h)
			kind := lower
			if m != nil {
				kind = strings.ToLower(normalizeSpace(nebiusEffectiveRe.ReplaceAllString(h, "")))
			}
			switch strings.Trim(kind, " ,") {
			case "on-demand, gpu-hour", "gpu-hour":
				p.pt = schema.OnDemand
			case "preemptible, gpu-hour":
				p.pt = schema.Spot
			default:
				continue // a price the parser does not know (a commitment, say): not read, its date neither
			}
			if m != nil {
				d, err := nebiusDate(m[1])
				if err != nil && dateErr == nil {
					dateErr = fmt.Errorf("%w: price column %q: %w", ErrLayoutChanged, clip(h, 80), err)
				}
				p.effective = d
			}
			prices = append(prices, p)
		}
	}
	switch {
	case c.item != 0 || len(prices) == 0:
		return c, false, nil
	case dateErr != nil:
		return c, true, dateErr
	}
	for _, pt := range []schema.PriceType{schema.OnDemand, schema.Spot} {
		col, err := nebiusInEffect(prices, pt, at)
		if err != nil {
			return c, true, fmt.Errorf("%w: header %q: %w", ErrLayoutChanged, clip(strings.Join(header, " | "), 200), err)
		}
		if col >= 0 {
			c.price[pt] = col
		}
	}
	if _, ok := c.price[schema.OnDemand]; !ok {
		return c, true, fmt.Errorf("%w: header %q: no on-demand GPU-hour price in effect at %s", ErrLayoutChanged,
			clip(strings.Join(header, " | "), 200), at.UTC().Format(time.RFC3339))
	}
	return c, true, nil
}

// nebiusInEffect picks the column of price type pt that holds at the run's time at: of the
// columns headed "(Effective <date>)", the latest whose date has come; else the column without
// a date. -1 when pt has no column in effect; an error when two columns would hold at once.
func nebiusInEffect(prices []nebiusPriceColumn, pt schema.PriceType, at time.Time) (int, error) {
	best, undated := -1, -1
	var bestDate time.Time
	for _, p := range prices {
		switch {
		case p.pt != pt:
		case p.effective.IsZero():
			if undated >= 0 {
				return -1, fmt.Errorf("two %s columns without an effective date", pt)
			}
			undated = p.col
		case p.effective.After(at):
			// Announced, not yet in effect.
		case best >= 0 && p.effective.Equal(bestDate):
			return -1, fmt.Errorf("two %s columns effective %s", pt, p.effective.Format(time.DateOnly))
		case best < 0 || p.effective.After(bestDate):
			best, bestDate = p.col, p.effective
		}
	}
	if best >= 0 {
		return best, nil
	}
	return undated, nil
}

// nebiusDate reads the date of an "Effective <date>" header, as midnight UTC.
func nebiusDate(s string) (time.Time, error) {
	s = normalizeSpace(s)
	for _, layout := range nebiusDateLayouts {
		if d, err := time.Parse(layout, s); err == nil {
			return d, nil
		}
	}
	return time.Time{}, fmt.Errorf("effective date %q is not a date like \"October 1, 2026\"", clip(s, 40))
}

// nebiusTable is one table of the page: its rows, each an array of cells.
type nebiusTable []json.RawMessage

// nebiusTables finds every {"table":{"content":[…]}} of the page: in the page as plain JSON, and
// in each string literal of its scripts that carries one escaped. A table that does not decode
// is a problem; too many rows overall is ErrTooManyOffers.
func nebiusTables(body []byte) (tables []nebiusTable, problems []error, err error) {
	texts := [][]byte{body}
	// The string literals holding an escaped table, each decoded once: from the quote before a
	// table to the quote after it that no backslash escapes (inside a literal every quote is
	// escaped). The scan goes forward only, so it reads the page about once.
	end := -1
	for from := 0; from < len(body); {
		loc := nebiusEscapedRe.FindIndex(body[from:])
		if loc == nil {
			break
		}
		hit := from + loc[0]
		if end < hit {
			end = nebiusQuoteAfter(body, hit)
		}
		if end < 0 {
			break // no literal closes after it, nor after any later one
		}
		start := nebiusQuoteBefore(body, from, hit)
		if start < 0 {
			from = from + loc[1] // not inside a string literal
			continue
		}
		from = end + 1
		var s string
		if err := json.Unmarshal(body[start:end+1], &s); err != nil {
			problems = append(problems, fmt.Errorf("the script string at byte %d does not decode: %s", start, clipLine(err.Error(), 120)))
			continue
		}
		texts = append(texts, []byte(s))
	}
	rows, n := 0, 0
	for _, text := range texts {
		// Each table is decoded once: the scan goes on after it (or after where it stopped
		// decoding), so a table inside another is not decoded again.
		for from := 0; from < len(text); {
			loc := nebiusTableRe.FindIndex(text[from:])
			if loc == nil {
				break
			}
			n++
			start := from + loc[1] - 1 // the '[' of the rows
			var t nebiusTable
			dec := json.NewDecoder(bytes.NewReader(text[start:]))
			err := dec.Decode(&t)
			var syn *json.SyntaxError
			switch {
			case err == nil:
				from = start + int(dec.InputOffset())
			case errors.As(err, &syn):
				from = start + max(int(syn.Offset), 1)
			default:
				from = len(text) // the text ends inside the table
			}
			if err != nil {
				problems = append(problems, fmt.Errorf("table #%d does not decode: %s", n, clipLine(err.Error(), 120)))
				continue
			}
			if rows += len(t); rows > MaxOffers {
				return nil, nil, fmt.Errorf("%w: more than %d table rows", ErrTooManyOffers, MaxOffers)
			}
			tables = append(tables, t)
		}
	}
	return tables, problems, nil
}

// nebiusQuoteBefore returns the position of the last quote of body[from:to] that no backslash escapes,
// -1 when there is none.
func nebiusQuoteBefore(body []byte, from, to int) int {
	for i := to - 1; i >= from; i-- {
		if body[i] == '"' && !nebiusEscaped(body, i) {
			return i
		}
	}
	return -1
}

// nebiusQuoteAfter returns the position of the first quote of body[from:] that no backslash escapes,
// -1 when there is none.
func nebiusQuoteAfter(body []byte, from int) int {
	for i := from; i < len(body); i++ {
		if body[i] == '"' && !nebiusEscaped(body, i) {
			return i
		}
	}
	return -1
}

// nebiusEscaped reports whether body[i] follows an odd run of backslashes.
func nebiusEscaped(body []byte, i int) bool {
	n := 0
	for j := i - 1; j >= 0 && body[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// ParseNebius parses Nebius's public price page (https://nebius.com/prices, docs/providers.md
// §12) into offers: for each GPU row of the "NVIDIA GPU Instances" table, an on-demand offer and
// a spot (preemptible) offer where the row is priced.
//
//   - The page is server-rendered; its content is JSON held in a string literal of a script, in
//     which every table is {"table":{"content":[[header], [row], …]}}. The parser decodes the
//     literal (the page's own escaping, \" and \\ and \u…, undone by a JSON decoder) and reads
//     each table's rows; the rendered HTML tables are not read.
//   - The GPU price table is the one whose header starts with "Item" and has a column priced per
//     GPU-hour; the CPU-only and storage tables, priced per vCPU-hour or GB-month, never match.
//     Columns are found by their header text, never by position: "Item", "vCPUs", "RAM, GB",
//     "Preemptible, GPU-hour" (spot), "On-demand, GPU-hour" (on-demand), and since October 2026
//     "GPU-hour (Effective October 1, 2026)", the on-demand price from that date. Of the columns
//     of one price type, the one in effect at the run's time is read (the latest "Effective"
//     date that has come, midnight UTC, else the column without a date): the choice follows the
//     run, so a re-derivation reads the column its scrape read.
//   - Prices are USD per GPU-hour ("$3.85"); each offer is one GPU at that price
//     (SetPricePerGPU). "from $0.90" is a floor (the cheapest preset of a range): its price is
//     recorded as the offer's, as nothing in the offer row marks a floor. "––", "Contact us" and
//     empty cells are not offered: a row priced nowhere (the GB200 and GB300 NVL72 racks) is
//     skipped and counted, not a problem.
//   - vCPUs and RAM (GB) are the per-GPU share of the host, so the one-GPU offer's; a range
//     ("16-192", the L40S rows, whose presets differ) is left empty.
//   - The offer id and the raw GPU name are the item ("NVIDIA HGX H100", "NVIDIA L40S with Intel
//     CPU": the two L40S rows are two offers). The page gives no VRAM: the catalog's is used
//     (vram_missing). HGX names the SXM part on its NVSwitch board; the intra-node class is the
//     form factor's (intraFromForm). Inter-node is unknown: the page says nothing of clusters.
//   - No region (the page names none: Nebius prices its regions alike), stock unknown.
//
// A row that cannot be read (a malformed price, a price in another currency, cells that are not
// strings or do not fill the header, an item listed twice with other prices) is a problem naming
// the item and the column. The page must be whole (checkPage), else the error wraps
// ErrIncomplete; a page without a GPU price table, or whose GPU table lacks the item or an
// on-demand column in effect, is ErrLayoutChanged; one without a priced GPU row ErrNoOffers.
// Errors and problems name the provider.
func ParseNebius(body []byte, run schema.Run, sourceURL string) (offers []schema.Offer, problems []error, err error) {
	defer func() { problems, err = sourceErrors(NebiusName, capProblems(problems)), sourceError(NebiusName, err) }()
	if err := checkPage(body); err != nil {
		return nil, nil, fmt.Errorf("price page: %w", err)
	}
	tables, problems, err := nebiusTables(body)
	if err != nil {
		return nil, nil, fmt.Errorf("price page: %w", err)
	}
	var gpuTables, rows, unpriced int
	seen := map[string][]string{}
	for _, t := range tables {
		if len(t) == 0 {
			continue
		}
		var header []string
		if json.Unmarshal(t[0], &header) != nil {
			continue // not a table of text: not the price table
		}
		cols, ok, err := nebiusHeader(header, run.ObservedAt)
		switch {
		case err != nil:
			return nil, nil, fmt.Errorf("price page: GPU table: %w", err)
		case !ok:
			continue
		}
		gpuTables++
		for i, raw := range t[1:] {
			rows++
			got, priced, err := nebiusRowOffers(raw, i+1, cols, seen, run, sourceURL)
			switch {
			case err != nil:
				problems = append(problems, fmt.Errorf("price page: %w", err))
			case !priced:
				unpriced++
			}
			offers = append(offers, got...)
		}
	}
	if gpuTables == 0 {
		return nil, problems, fmt.Errorf("price page: %w: no table whose header is \"Item\" and GPU-hour prices among %d tables", ErrLayoutChanged, len(tables))
	}
	if len(offers) == 0 {
		return nil, problems, fmt.Errorf("price page: %w: %d GPU rows, %d of them unpriced, no priced GPU row", ErrNoOffers, rows, unpriced)
	}
	sortOffers(offers)
	return offers, problems, nil
}

// nebiusRowOffers turns row n of a GPU table into its offers. priced is false, without an error,
// for a row priced nowhere; a row repeated verbatim (the page renders a table twice) gives no
// offer the second time.
func nebiusRowOffers(raw json.RawMessage, n int, cols nebiusColumns, seen map[string][]string, run schema.Run, sourceURL string) (offers []schema.Offer, priced bool, err error) {
	var cells []string
	if err := json.Unmarshal(raw, &cells); err != nil {
		return nil, true, fmt.Errorf("GPU row #%d: %w", n, decodeProblem(err))
	}
	if len(cells) <= cols.item {
		return nil, true, fmt.Errorf("GPU row #%d: no item", n)
	}
	item := clip(normalizeSpace(cells[cols.item]), 100)
	where := fmt.Sprintf("GPU row %q", clip(item, 60))
	switch {
	case item == "":
		return nil, true, fmt.Errorf("GPU row #%d: no item", n)
	case len(cells) != len(cols.header):
		return nil, true, fmt.Errorf("%s: %d cells under a header of %d", where, len(cells), len(cols.header))
	}
	if prev, ok := seen[item]; ok {
		if !nebiusSameCells(prev, cells) {
			return nil, true, fmt.Errorf("%s: listed twice with different cells", where)
		}
		return nil, true, nil
	}
	seen[item] = cells

	prices := map[schema.PriceType]decimal.Decimal{}
	for _, pt := range []schema.PriceType{schema.OnDemand, schema.Spot} {
		col, ok := cols.price[pt]
		if !ok {
			continue
		}
		d, offered, err := nebiusPrice(cells[col])
		if err != nil {
			return nil, true, fmt.Errorf("%s: %s: %w", where, clip(cols.header[col], 60), err)
		}
		if offered {
			prices[pt] = d
		}
	}
	if len(prices) == 0 {
		return nil, false, nil // "Contact us", "––": no list price
	}

	base := schema.Offer{
		SourceURL: sourceURL,
		Provider:  NebiusName,
		OfferID:   item,
		Tier:      schema.TierDatacenter,
		GPUCount:  1,
		VCPUs:     nebiusFigure(cells, cols.vcpus, 1),
		RAMGB:     nebiusFigure(cells, cols.ram, cols.ramScale),
		InterNode: schema.InterUnknown,
		Stock:     schema.StockUnknown,
		DQFlags:   []schema.DQFlag{},
	}
	run.Stamp(&base)
	base.IntraNode = intraFromForm(applyGPU(&base, NebiusName, item, 0))
	for _, pt := range []schema.PriceType{schema.OnDemand, schema.Spot} {
		if d, ok := prices[pt]; ok {
			offers = append(offers, pricedPerGPU(base, pt, d))
		}
	}
	return offers, true, nil
}

// nebiusSameCells reports whether two rows say the same, white space aside.
func nebiusSameCells(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if normalizeSpace(a[i]) != normalizeSpace(b[i]) {
			return false
		}
	}
	return true
}

// nebiusPrice reads a price cell: "$3.85", or the floor "from $1.82". offered is false for the
// cells that sell nothing at a list price: empty, dashes ("––"), N/A, "Contact us" (a link to
// the sales form, "[Contact us](#ai-contact-form)").
func nebiusPrice(cell string) (d decimal.Decimal, offered bool, err error) {
	s := normalizeSpace(cell)
	if strings.Trim(s, "-–—‒―") == "" || nebiusContactRe.MatchString(s) {
		return decimal.Zero, false, nil
	}
	return parseUSD(nebiusFromRe.ReplaceAllString(s, ""))
}

// nebiusFigure is the number in cells[col] times scale, rounded to two decimals; nil when the
// column is absent, or the cell a range ("16-192") or no number.
func nebiusFigure(cells []string, col int, scale float64) *float64 {
	if col < 0 || col >= len(cells) || nebiusRangeRe.MatchString(normalizeSpace(cells[col])) {
		return nil
	}
	return optNumber(cells[col], scale)
}

// NebiusConfig configures the Nebius source. Zero fields take the defaults.
type NebiusConfig struct {
	URL       string        // price page (default DefaultNebiusURL); AllowedDomains derive from it
	UserAgent string        // default BrowserUserAgent
	Timeout   time.Duration // bound on the whole fetch, retries included, within the run's ctx (default 2m)
	Delay     time.Duration // colly LimitRule delay after each request to the host (default 1s; negative = none)
}

// Nebius is the Nebius AI Cloud source: the public price page through colly, parsed by
// ParseNebius.
type Nebius struct {
	client *Client
	page   pageFetch
	cfgErr error // an invalid URL, reported by Fetch
	logger *slog.Logger
}

// NewNebius returns the Nebius source fetching through client. A nil logger discards. An invalid
// URL makes every Fetch fail with a clear error.
func NewNebius(client *Client, cfg NebiusConfig, logger *slog.Logger) *Nebius {
	p, err := newPageFetch(NebiusName, cfg.URL, DefaultNebiusURL, cfg.UserAgent, cfg.Timeout, cfg.Delay)
	if client == nil {
		err = errors.New("no HTTP client")
	}
	return &Nebius{client: client, page: p, cfgErr: err, logger: orDiscard(logger)}
}

// Name returns "nebius".
func (n *Nebius) Name() string { return NebiusName }

// ParserVersion names the parser of its offers (ParserVersion).
func (n *Nebius) ParserVersion() string { return ParserVersion(NebiusName) }

// Fetch fetches the price page and parses it (see ParseNebius). Rows that failed to parse are in
// Extract.Problems; a page whose layout changed is an error wrapping ErrLayoutChanged.
func (n *Nebius) Fetch(ctx context.Context, run schema.Run) (schema.Extract, error) {
	if n.cfgErr != nil {
		return schema.Extract{}, sourceError(NebiusName, n.cfgErr)
	}
	return n.page.offers(ctx, n.client, NebiusName, run, ParseNebius, n.logger)
}
