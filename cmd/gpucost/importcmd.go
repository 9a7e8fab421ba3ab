package main

import (
	"bytes"
	"context"
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
	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/textcell"
)

const importHelp = `Load a published price table (CSV) as price observations. The first line names the columns,
in any order:

  provider          required  who sells it, e.g. aws, lambda (lower case)
  gpu               required  a catalog name (H100-SXM-80GB) or a provider's spelling (H100 80GB SXM5)
  price_type        required  on_demand, spot, reserved, term_1y or term_3y
  usd_per_gpu_hour  required  USD per GPU-hour, at most 6 decimals, e.g. 2.49
  observed_at       required  when the price was published: 2026-01-31 or 2026-01-31T12:00:00Z (UTC)
  vram_gb           optional  VRAM per GPU; must match the catalog model within 10%
  gpu_count         optional  GPUs per instance (default 1)
  region            optional  the provider's region
  tier              optional  secure, community, datacenter (default), verified or unverified
  valid_until       optional  when the price stops holding, written like observed_at and after it
                              (a date alone is 00:00 UTC of that day). Until then the price is
                              current however old observed_at is (offers, optimize, the API); from
                              then on it is not. Empty: the price ages like a scraped one.
  intra_node        optional  how the GPUs of one instance are linked: nvswitch, nvlink,
                              infinity_fabric, pcie or unknown
  inter_node        optional  how instances are linked: infiniband, roce, ethernet, none or unknown
  available_count   optional  instances or GPUs available, as the publisher counts them (0 or more)
  stock             optional  high, medium, low, none or unknown
  source_url        optional  the publisher's page: https://, without user, password or key

Empty cells take the default. An interconnect the table does not give is unknown: it is never
taken from the GPU's name or count. Lines starting with # are comments. Every line is checked
before anything is loaded: all bad lines are reported as FILE:LINE: column: problem, and then
nothing is loaded. Rows are tagged with their source: run id import-<hash of the file>,
source_url the row's or import:<file name>, offer id import:<gpu>/<count>x/<tier>/<region>; the
file itself is kept as a raw payload. Importing the same file again loads nothing. Imports write
no scrape run-log rows.

Exit codes: 0 loaded (or already loaded); 1 bad lines or a store failure; 2 bad flags.`

// maxImportBytes bounds the file: it is kept whole as a raw payload.
const maxImportBytes = 64 << 20

// maxImportErrorWidth caps one printed error line: the file name, line, column and message.
const maxImportErrorWidth = 600

func runImport(ctx context.Context, e env, args []string) error {
	fs := newFlags("import", "[flags] FILE.csv", importHelp)
	fs.withConfig()
	dryRun := fs.Bool("dry-run", false, "check the file and say what would be loaded; load nothing")
	if err := fs.parse(e, args, 1); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return &usageError{err: fmt.Errorf("want exactly one CSV file, got %d arguments", fs.NArg()), usage: fs.usageText()}
	}
	path := fs.Arg(0)
	cfg, err := fs.config(e)
	if err != nil {
		return err
	}
	data, err := readImportFile(path)
	if err != nil {
		return err
	}
	data = e.secrets.Data(data) // a table is data, scrubbed before it is read, as a provider's answer is
	now := time.Now().UTC()
	imp, errs := parsePriceTable(path, data, importLimits{maxPrice: decimal.NewFromFloat(cfg.Scrape.MaxPricePerGPUHour), now: now})
	if len(errs) > 0 {
		const shown = 200
		for i, err := range errs {
			if i == shown {
				fmt.Fprintf(e.stderr, "… and %d more\n", len(errs)-shown)
				break
			}
			// An error quotes the file's text, which is untrusted: one clean line each.
			fmt.Fprintln(e.stderr, textcell.Clean(err.Error(), maxImportErrorWidth))
		}
		return fmt.Errorf("%s has %d bad lines: nothing loaded", path, countLines(errs))
	}
	summary := importSummary(imp.Offers)
	if *dryRun {
		fmt.Fprintf(e.stdout, "dry run: %s is valid: %d observations (%s) as run %s; nothing loaded\n", path, len(imp.Offers), summary, imp.RunID)
		return nil
	}
	s, err := openStore(ctx, cfg.ClickHouse, store.Options{Logger: newLogger(e)})
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.LoadImport(ctx, imp)
	if err != nil {
		return err
	}
	if res.Skipped() {
		fmt.Fprintf(e.stdout, "%s was already imported as run %s: nothing loaded\n", path, imp.RunID)
		return nil
	}
	fmt.Fprintf(e.stdout, "imported %d observations (%s) from %s as run %s\n", res.OffersWritten, summary, path, imp.RunID)
	return nil
}

func readImportFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("reading the price table: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxImportBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the price table %s: %w", path, err)
	}
	if len(data) > maxImportBytes {
		return nil, fmt.Errorf("the price table %s is larger than %d MiB: split it", path, maxImportBytes>>20)
	}
	return data, nil
}

// importLimits are the checks an imported row must pass beyond its format.
type importLimits struct {
	maxPrice decimal.Decimal // highest plausible $/GPU-hour (scrape.max_price_per_gpu_hour)
	now      time.Time       // rows may not be observed in the future (an hour of clock skew allowed)
}

// importError is one problem of one line of the file.
type importError struct {
	file   string
	line   int
	column string
	msg    string
}

func (e importError) Error() string {
	if e.column == "" {
		return fmt.Sprintf("%s:%d: %s", e.file, e.line, e.msg)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.file, e.line, e.column, e.msg)
}

func countLines(errs []error) int {
	lines := map[int]bool{}
	for _, err := range errs {
		var ie importError
		if errors.As(err, &ie) {
			lines[ie.line] = true
		} else {
			lines[-1] = true
		}
	}
	return len(lines)
}

// The columns of a price table, in the order of importHelp.
var (
	requiredImportColumns = []string{"provider", "gpu", "price_type", "usd_per_gpu_hour", "observed_at"}
	optionalImportColumns = []string{"vram_gb", "gpu_count", "region", "tier", "valid_until", "intra_node", "inter_node", "available_count", "stock", "source_url"}
)

// parsePriceTable reads a published price table and returns it as an import, or every problem
// found, each naming the file, line and column. It never returns a partial import.
func parsePriceTable(path string, data []byte, lim importLimits) (schema.Import, []error) {
	name := filepath.Base(path)
	sum := sha256.Sum256(data)
	imp := schema.Import{
		RunID: "import-" + hex.EncodeToString(sum[:8]),
		Payload: schema.RawPayload{Provider: "import", URL: "import:" + name, Status: 200,
			FetchedAt: lim.now.Truncate(time.Second), Body: data},
	}
	var errs []error
	fail := func(line int, column, format string, args ...any) {
		errs = append(errs, importError{file: path, line: line, column: column, msg: fmt.Sprintf(format, args...)})
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
		if !slices.Contains(requiredImportColumns, h) && !slices.Contains(optionalImportColumns, h) {
			fail(headerLine, h, "unknown column (want %s, and optionally %s)", strings.Join(requiredImportColumns, ", "), strings.Join(optionalImportColumns, ", "))
			continue
		}
		if _, dup := col[h]; dup {
			fail(headerLine, h, "column named twice")
			continue
		}
		col[h] = i
	}
	var missing []string
	for _, c := range requiredImportColumns {
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
		o := schema.Offer{RunID: imp.RunID, SourceURL: "import:" + name, Tier: schema.TierDatacenter,
			IntraNode: schema.IntraUnknown, InterNode: schema.InterUnknown, Stock: schema.StockUnknown, GPUCount: 1}

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
		o.GPUNameRaw = cell("gpu")
		switch m, ok := gpus.Lookup(o.GPUNameRaw); {
		case o.GPUNameRaw == "":
			fail(line, "gpu", "empty")
		case ok:
			o.GPUModel, o.VRAMGB = m.Name, m.VRAMGB
		default:
			if r := gpus.Resolve(o.Provider, o.GPUNameRaw, vram); r.Known {
				o.GPUModel, o.VRAMGB = r.Model.Name, r.Model.VRAMGB
			}
			if o.GPUModel == "" {
				msg := fmt.Sprintf("unknown GPU %s", selection.Quote(o.GPUNameRaw))
				if like := selection.SimilarGPUs(o.GPUNameRaw); len(like) > 0 {
					msg += " (catalog models like it: " + strings.Join(like, ", ") + ")"
				}
				fail(line, "gpu", "%s", msg)
			}
		}
		if o.GPUModel != "" && vram > 0 && math.Abs(vram-o.VRAMGB) > 0.1*o.VRAMGB {
			fail(line, "vram_gb", "%g GB does not match %s (%g GB per GPU)", vram, o.GPUModel, o.VRAMGB)
		}
		if pt, err := schema.ParsePriceType(cell("price_type")); err != nil {
			fail(line, "price_type", "unknown price type %s (want one of %v)", selection.Quote(cell("price_type")), schema.PriceTypes)
		} else {
			o.PriceType = pt
		}
		if v := cell("usd_per_gpu_hour"); v == "" {
			fail(line, "usd_per_gpu_hour", "empty")
		} else if p, err := decimal.NewFromString(strings.TrimPrefix(v, "$")); err != nil {
			fail(line, "usd_per_gpu_hour", "%s is not a number", selection.Quote(v))
		} else if !p.IsPositive() {
			fail(line, "usd_per_gpu_hour", "%s is not positive", v)
		} else if p.GreaterThan(lim.maxPrice) {
			fail(line, "usd_per_gpu_hour", "%s is above the plausible maximum of %s (scrape.max_price_per_gpu_hour)", v, lim.maxPrice)
		} else if !p.Equal(p.Round(schema.PriceDecimals)) {
			fail(line, "usd_per_gpu_hour", "%s has more than %d decimals", v, schema.PriceDecimals)
		} else {
			o.PriceUSDPerGPUHour = p.Round(schema.PriceDecimals)
		}
		if v := cell("observed_at"); v == "" {
			fail(line, "observed_at", "empty")
		} else if at, err := selection.Time(v); err != nil {
			fail(line, "observed_at", "%v", err)
		} else if at.After(lim.now.Add(time.Hour)) {
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
			if !containsTier(o.Tier) {
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
		o.OfferID = fmt.Sprintf("import:%s/%dx/%s/%s", o.GPUModel, o.GPUCount, o.Tier, o.Region)
		k := seenKey{o.Key(), o.ObservedAt}
		if first, dup := seen[k]; dup {
			fail(line, "", "the same offer (%s %s, %d GPUs, %s, %s) at the same time as line %d", o.Provider, o.GPUModel, o.GPUCount, o.Tier, o.PriceType, first)
			continue
		}
		seen[k] = line
		imp.Offers = append(imp.Offers, o)
		if len(imp.Offers) > store.MaxImportRows {
			fail(line, "", "more than %d rows: split the file", store.MaxImportRows)
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

func containsTier(t schema.Tier) bool {
	for _, v := range schema.Tiers {
		if v == t {
			return true
		}
	}
	return false
}

// lineOf returns the line a CSV error points at, or fallback.
func lineOf(err error, fallback int) int {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Line
	}
	return fallback
}

// importSummary says how many observations each provider got, e.g. "aws 12, lambda 3".
func importSummary(offers []schema.Offer) string {
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
