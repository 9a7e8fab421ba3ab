package pricetable

import (
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
)

// MaxBytes bounds a table: it is kept whole as a raw payload.
const MaxBytes = 64 << 20

// parserDate is when this reader last changed what it derives from the same table: bump it with
// any such change, so rows imported before can be told apart.
const parserDate = "2026-12-01"

// ParserVersion names this reader and the GPU catalog it resolves with, as the rows it imports
// record them (schema.Offer.ParserVersion).
func ParserVersion() string { return gpus.WithRevision("pricetable/" + parserDate) }

// Options are what a table is checked against, beyond its format.
type Options struct {
	// Pipeline is the configuration a scrape checks its offers with, and so every row
	// (pipeline.Prepare). Its MaxPricePerGPUHour, which the errors name, is required.
	Pipeline pipeline.Config
	// Now is the time of the import: the raw payload's fetch time, and an hour before the latest
	// observed_at a row may have (clock skew). Zero means time.Now.
	Now time.Time
	// MaxRows is the most rows a table may hold (store.MaxImportRows); zero means no limit.
	MaxRows int
	// Redactor scrubs the table of secret values before it is read: a table is data, as a
	// provider's answer is. Nil scrubs nothing.
	Redactor *redact.Redactor
}

// LineError is one problem of one line of a table.
type LineError struct {
	File   string // the table's path as given to Parse
	Line   int
	Column string // "" for a problem of the whole line
	Msg    string
}

func (e LineError) Error() string {
	if e.Column == "" {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Column, e.Msg)
}

// Errors is every problem of a bad table, in the order of its lines.
type Errors []LineError

func (e Errors) Error() string {
	if len(e) == 0 {
		return "a price table without problems"
	}
	return fmt.Sprintf("%s has %d bad lines", e[0].File, e.Lines())
}

// Lines is how many lines have a problem.
func (e Errors) Lines() int {
	lines := map[int]bool{}
	for _, le := range e {
		lines[le.Line] = true
	}
	return len(lines)
}

// Read reads the table at path, of at most MaxBytes, and parses it (Parse).
func Read(path string, opts Options) (schema.Import, error) {
	f, err := os.Open(path)
	if err != nil {
		return schema.Import{}, fmt.Errorf("reading the price table: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxBytes+1))
	if err != nil {
		return schema.Import{}, fmt.Errorf("reading the price table %s: %w", path, err)
	}
	if len(data) > MaxBytes {
		return schema.Import{}, fmt.Errorf("the price table %s is larger than %d MiB: split it", path, MaxBytes>>20)
	}
	return Parse(path, data, opts)
}

// The columns of a price table, in the order of the package documentation.
var (
	requiredColumns = []string{"provider", "gpu", "price_type", "usd_per_gpu_hour", "observed_at"}
	optionalColumns = []string{"vram_gb", "gpu_count", "region", "tier", "valid_until", "intra_node", "inter_node", "available_count", "stock", "source_url"}
)

// Parse reads the table data, named path in its errors, as an import. A bad table returns
// Errors, every problem found, each naming the file, line and column; it never returns a partial
// import.
func Parse(path string, data []byte, opts Options) (schema.Import, error) {
	if !opts.Pipeline.MaxPricePerGPUHour.IsPositive() {
		return schema.Import{}, errors.New("pricetable: Options.Pipeline.MaxPricePerGPUHour is required")
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	now = now.UTC()
	data = opts.Redactor.Data(data)
	name := filepath.Base(path)
	sum := sha256.Sum256(data)
	imp := schema.Import{
		RunID: "import-" + hex.EncodeToString(sum[:8]),
		Payload: schema.RawPayload{Provider: "import", URL: "import:" + name, Status: 200,
			FetchedAt: now.Truncate(time.Second), Body: data},
	}
	var errs Errors
	fail := func(line int, column, format string, args ...any) {
		errs = append(errs, LineError{File: path, Line: line, Column: column, Msg: fmt.Sprintf(format, args...)})
	}
	r := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))))
	r.Comment = '#'
	r.FieldsPerRecord = -1
	r.TrimLeadingSpace = true
	header, err := r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			fail(1, "", "the file is empty: the first line must name the columns (provider, gpu, price_type, usd_per_gpu_hour, observed_at)")
		} else {
			fail(lineOf(err, 1), "", "reading the header: %v", err)
		}
		return schema.Import{}, errs
	}
	headerLine, _ := r.FieldPos(0)
	col := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if !slices.Contains(requiredColumns, h) && !slices.Contains(optionalColumns, h) {
			fail(headerLine, h, "unknown column (want %s, and optionally %s)", strings.Join(requiredColumns, ", "), strings.Join(optionalColumns, ", "))
			continue
		}
		if _, dup := col[h]; dup {
			fail(headerLine, h, "column named twice")
			continue
		}
		col[h] = i
	}
	var missing []string
	for _, c := range requiredColumns {
		if _, ok := col[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		fail(headerLine, "", "missing required column(s) %s", strings.Join(missing, ", "))
	}
	if len(errs) > 0 {
		return schema.Import{}, errs
	}

	type seenKey struct {
		key schema.Key
		at  time.Time
	}
	seen := map[seenKey]int{}
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fail(lineOf(err, 0), "", "%v", errors.Unwrap(err))
			continue
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			fail(line, "", "%d fields, but the header names %d columns", len(rec), len(header))
			continue
		}
		cell := func(c string) string {
			if i, ok := col[c]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		before := len(errs)
		o := schema.Offer{RunID: imp.RunID, SourceURL: "import:" + name, Tier: schema.TierDatacenter, GPUCount: 1, ParserVersion: ParserVersion()}

		o.Provider = cell("provider")
		if !selection.IsProviderName(o.Provider) {
			fail(line, "provider", "%s is not a provider name (lower-case letters, digits, '.', '_', '-')", selection.Quote(o.Provider))
		}
		if v := cell("gpu_count"); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1024 {
				fail(line, "gpu_count", "%s is not a whole number of GPUs between 1 and 1024", selection.Quote(v))
			} else {
				o.GPUCount = uint16(n)
			}
		}
		var vram float64
		if v := cell("vram_gb"); v != "" {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f <= 0 || math.IsInf(f, 0) || f > 10000 {
				fail(line, "vram_gb", "%s is not a positive number of GB", selection.Quote(v))
			} else {
				vram = f
			}
		}
		// The GPU as a source reports it: the pipeline settles the model, its VRAM and their flags
		// (pipeline.Prepare, below). A scrape keeps a GPU the catalog does not know, flagged; a
		// table may not hold one, so the catalog is asked first, as the pipeline will ask it, to
		// name the line's problem and the model of the offer id.
		o.GPUNameRaw, o.VRAMGB = cell("gpu"), vram
		var model string
		if o.GPUNameRaw == "" {
			fail(line, "gpu", "empty")
		} else if m := gpus.Resolve(o.Provider, o.GPUNameRaw, vram); m.Known {
			model = m.Model.Name
		} else if m := gpus.Resolve(o.Provider, o.GPUNameRaw, 0); m.Known && vram > 0 {
			fail(line, "vram_gb", "%g GB does not match %s (%g GB per GPU)", vram, m.Model.Name, m.Model.VRAMGB)
		} else {
			msg := fmt.Sprintf("unknown GPU %s", selection.Quote(o.GPUNameRaw))
			if like := selection.SimilarGPUs(o.GPUNameRaw); len(like) > 0 {
				msg += " (catalog models like it: " + strings.Join(like, ", ") + ")"
			}
			fail(line, "gpu", "%s", msg)
		}
		if pt, err := schema.ParsePriceType(cell("price_type")); err != nil {
			fail(line, "price_type", "unknown price type %s (want one of %v)", selection.Quote(cell("price_type")), schema.PriceTypes)
		} else {
			o.PriceType = pt
		}
		// Whether the price is plausible is the pipeline's rule (pipeline.Prepare, below).
		price := cell("usd_per_gpu_hour")
		if price == "" {
			fail(line, "usd_per_gpu_hour", "empty")
		} else if p, err := decimal.NewFromString(strings.TrimPrefix(price, "$")); err != nil {
			fail(line, "usd_per_gpu_hour", "%s is not a number", selection.Quote(price))
		} else if !p.Equal(p.Round(schema.PriceDecimals)) {
			fail(line, "usd_per_gpu_hour", "%s has more than %d decimals", price, schema.PriceDecimals)
		} else {
			o.PriceUSDPerGPUHour = p.Round(schema.PriceDecimals)
		}
		if v := cell("observed_at"); v == "" {
			fail(line, "observed_at", "empty")
		} else if at, err := selection.Time(v); err != nil {
			fail(line, "observed_at", "%v", err)
		} else if at.After(now.Add(time.Hour)) {
			fail(line, "observed_at", "%s is in the future", v)
		} else {
			o.ObservedAt = at
		}
		o.Region = cell("region")
		if len(o.Region) > 64 || strings.IndexFunc(o.Region, unicode.IsControl) >= 0 {
			fail(line, "region", "%s is not a region name (at most 64 printable characters)", selection.Quote(o.Region))
		}
		if v := cell("tier"); v != "" {
			o.Tier = schema.Tier(v)
			if !slices.Contains(schema.Tiers, o.Tier) {
				fail(line, "tier", "unknown tier %s (want one of %v)", selection.Quote(v), schema.Tiers)
			}
		}
		if v := cell("valid_until"); v != "" {
			if until, err := selection.Time(v); err != nil {
				fail(line, "valid_until", "%v", err)
			} else if !o.ObservedAt.IsZero() && !until.After(o.ObservedAt) {
				fail(line, "valid_until", "%s is not after observed_at %s", v, cell("observed_at"))
			} else {
				o.ValidUntil = &until
			}
		}
		// An interconnect the table does not give stays unknown: no GPU name or count implies one.
		if v := cell("intra_node"); v != "" {
			if in, err := schema.ParseIntraNode(v); err != nil {
				fail(line, "intra_node", "unknown interconnect %s (want one of %v)", selection.Quote(v), schema.IntraNodes)
			} else {
				o.IntraNode = in
			}
		}
		if v := cell("inter_node"); v != "" {
			if in, err := schema.ParseInterNode(v); err != nil {
				fail(line, "inter_node", "unknown interconnect %s (want one of %v)", selection.Quote(v), schema.InterNodes)
			} else {
				o.InterNode = in
			}
		}
		if v := cell("available_count"); v != "" {
			if n, err := strconv.ParseUint(v, 10, 32); err != nil {
				fail(line, "available_count", "%s is not a whole number of 0 or more", selection.Quote(v))
			} else {
				count := uint32(n)
				o.AvailableCount = &count
			}
		}
		if v := cell("stock"); v != "" {
			if st, err := schema.ParseStock(v); err != nil {
				fail(line, "stock", "unknown stock level %s (want one of %v)", selection.Quote(v), schema.Stocks)
			} else {
				o.Stock = st
			}
		}
		if v := cell("source_url"); v != "" {
			if err := checkSourceURL(v); err != nil {
				fail(line, "source_url", "%v", err)
			} else {
				o.SourceURL = v
			}
		}
		if len(errs) > before {
			continue
		}
		o.PriceUSDPerHour = o.PriceUSDPerGPUHour.Mul(decimal.NewFromInt(int64(o.GPUCount)))
		o.OfferID = fmt.Sprintf("import:%s/%dx/%s/%s", model, o.GPUCount, o.Tier, o.Region)
		// The row becomes an offer as a scraped one does: normalized, flagged and checked by the
		// scrape's rules. A row a scrape would reject is a problem of its line.
		if reason := pipeline.Prepare(opts.Pipeline, &o); reason != "" {
			column, msg := rejection(reason, price, opts.Pipeline.MaxPricePerGPUHour)
			fail(line, column, "%s", msg)
			continue
		}
		k := seenKey{o.Key(), o.ObservedAt}
		if first, dup := seen[k]; dup {
			fail(line, "", "the same offer (%s %s, %d GPUs, %s, %s) at the same time as line %d", o.Provider, o.GPUModel, o.GPUCount, o.Tier, o.PriceType, first)
			continue
		}
		seen[k] = line
		imp.Offers = append(imp.Offers, o)
		if opts.MaxRows > 0 && len(imp.Offers) > opts.MaxRows {
			fail(line, "", "more than %d rows: split the file", opts.MaxRows)
			return schema.Import{}, errs
		}
	}
	if len(errs) == 0 && len(imp.Offers) == 0 {
		fail(headerLine, "", "no rows below the header")
	}
	if len(errs) > 0 {
		return schema.Import{}, errs
	}
	return imp, nil
}

// rejection says why the pipeline rejects a row (pipeline.Prepare) in the table's terms: the
// column at fault and the problem. price is the row's usd_per_gpu_hour as written.
func rejection(reason, price string, maxPrice decimal.Decimal) (column, msg string) {
	switch reason {
	case pipeline.RejectNonPositivePrice:
		return "usd_per_gpu_hour", price + " is not positive"
	case pipeline.RejectAbsurdPrice:
		return "usd_per_gpu_hour", fmt.Sprintf("%s is above the plausible maximum of %s (scrape.max_price_per_gpu_hour)", price, maxPrice)
	}
	// A row that parsed has a GPU count, a price type, a known GPU and an offer id, which rules
	// out the pipeline's other reasons; one it adds is named as it is.
	return "", "rejected as a scraped offer would be: " + reason
}

// checkSourceURL accepts the https address of a publisher's page, without credentials: no user
// or password, and no query parameter named like a key or token. Its errors do not repeat a URL
// that holds credentials.
func checkSourceURL(s string) error {
	if len(s) > 2048 || strings.IndexFunc(s, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }) >= 0 {
		return fmt.Errorf("%s is not a URL (at most 2048 characters, no spaces)", selection.Quote(s))
	}
	u, err := url.Parse(s)
	if err == nil && u.User != nil {
		return errors.New("the URL holds a user name or password (not shown): give the page's address without credentials")
	}
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%s is not an https:// URL of the publisher's page", selection.Quote(s))
	}
	for name := range u.Query() {
		if redact.IsCredentialParam(name) {
			return fmt.Errorf("the URL has the query parameter %s, which carries credentials: give the page's address without it", selection.Quote(name))
		}
	}
	return nil
}

// lineOf returns the line a CSV error points at, or fallback.
func lineOf(err error, fallback int) int {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Line
	}
	return fallback
}

// Summary says how many observations each provider got, e.g. "aws 12, lambda 3".
func Summary(offers []schema.Offer) string {
	n := map[string]int{}
	for _, o := range offers {
		n[o.Provider]++
	}
	names := make([]string, 0, len(n))
	for p := range n {
		names = append(names, p)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, p := range names {
		parts[i] = fmt.Sprintf("%s %d", p, n[p])
	}
	return strings.Join(parts, ", ")
}
