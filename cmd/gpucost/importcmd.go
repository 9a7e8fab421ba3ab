package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/gpucost/gpucost/pricetable"
	"github.com/gpucost/gpucost/schema"
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
  vram_gb           optional  VRAM per GPU; must match the catalog model within 7%, as GB or GiB
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
taken from the GPU's name or count. Lines starting with # are comments. A row is checked and
flagged as a scraped offer is: the same price cap (scrape.max_price_per_gpu_hour), the same
dq_flags (vram_snapped, vram_missing). Every line is checked before anything is loaded: all bad
lines are reported as FILE:LINE: column: problem, and then nothing is loaded. Rows are tagged
with their source: run id import-<hash of the file>, source_url the row's or import:<file name>,
offer id import:<gpu>/<count>x/<tier>/<region>; the file itself is kept as a raw payload.
Importing the same file again loads nothing. Imports write no scrape run-log rows.

Exit codes: 0 loaded (or already loaded); 1 bad lines or a store failure; 2 bad flags.`

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
	imp, err := pricetable.Read(path, pricetable.Options{Pipeline: pipelineConfig(cfg), MaxRows: store.MaxImportRows, Redactor: e.secrets})
	var bad pricetable.Errors
	if errors.As(err, &bad) {
		printBadLines(e.stderr, bad)
		return fmt.Errorf("%w: nothing loaded", bad)
	}
	if err != nil {
		return err
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

// printBadLines prints the first 200 problems of a table, one clean line each: an error quotes
// the file's text, which is untrusted.
func printBadLines(w io.Writer, bad pricetable.Errors) {
	const shown = 200
	for i, le := range bad {
		if i == shown {
			fmt.Fprintf(w, "… and %d more\n", len(bad)-shown)
			break
		}
		fmt.Fprintln(w, textcell.Clean(le.Error(), maxImportErrorWidth))
	}
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
