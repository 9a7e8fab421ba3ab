package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/pricetable"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/textcell"
)

const importHelp = `Load a published price table (CSV) as price observations. The first line names the columns,
in any order:

` + pricetable.Columns + `

Empty cells take the default. An interconnect the table does not give is unknown: it is never
taken from the GPU's name or count. Lines starting with # are comments. A row is checked and
flagged as a scraped offer is: the same price cap (scrape.max_price_per_gpu_hour), the same
dq_flags (vram_snapped, vram_missing). Every line is checked before anything is loaded: all bad
lines are reported as FILE:LINE: column: problem, and then nothing is loaded. Rows are tagged
with their source: run id import-<hash of the file>, source_url the row's or import:<file name>,
offer id import:<gpu>/<count>x/<tier>/<region>; the file itself is kept as a raw payload.
Importing the same file again loads nothing. Imports write no scrape run-log rows. The load
takes the scrape run lock (scrape.spool_dir), so it waits for a scrape or a re-derivation
(gpucost reparse) to finish, up to scrape.lock_wait (exit 4 after that).

Exit codes: 0 loaded (or already loaded); 1 bad lines or a store failure; 2 bad flags.`

// maxImportErrorWidth caps one printed error line: the file name, line, column and message.
const maxImportErrorWidth = 600

func runImport(ctx context.Context, e env, args []string) error {
	fs := newFlags("import", "[flags] FILE.csv", importHelp)
	fs.withConfig()
	dryRun := fs.Bool("dry-run", false, "check the file and say what would be loaded; load nothing")
	if err := fs.parse(e, args, -1); err != nil {
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
	imp, err := pricetable.Read(path, pricetable.Options{Pipeline: cfg.Scrape.Pipeline(), MaxRows: store.MaxImportRows, Redactor: e.secrets})
	var bad pricetable.Errors
	if errors.As(err, &bad) {
		printBadLines(e.stderr, bad)
		return fmt.Errorf("%w: nothing loaded", bad)
	}
	if err != nil {
		return err
	}
	summary := pricetable.Summary(imp.Offers)
	if *dryRun {
		fmt.Fprintf(e.stdout, "dry run: %s is valid: %d observations (%s) as run %s; nothing loaded\n", path, len(imp.Offers), summary, imp.RunID)
		return nil
	}
	// No load while a re-derivation swaps months (gpucost reparse): the run lock of the spool.
	unlock, err := pipeline.Lock(ctx, cfg.Scrape.SpoolDir, cfg.Scrape.LockWait.Std(), "import")
	if err != nil {
		return err
	}
	defer unlock()
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
