package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/export"
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

--output table says what was loaded in a sentence; json and csv as one record: file, run_id,
observations, providers (by provider; in CSV "name count, ..."), stored (rows this import
stored: 0 when the file was already imported), already_imported, dry_run. json holds it in an
envelope (gpucost.imports/v1) as its one item, its query the file and --dry-run.

Exit codes: 0 loaded (or already loaded); 1 bad lines or a store failure; 2 bad flags.`

// maxImportErrorWidth caps one printed error line: the file name, line, column and message.
const maxImportErrorWidth = 600

// imported is what import did, as --output json and csv write it.
type imported struct {
	File  string `json:"file"`
	RunID string `json:"run_id"`
	// Observations are the file's rows; Providers how many of them each provider has.
	Observations int            `json:"observations"`
	Providers    map[string]int `json:"providers"`
	// Stored is how many rows this import stored: 0 on a dry run and when the file was
	// already imported (AlreadyImported).
	Stored          int  `json:"stored"`
	AlreadyImported bool `json:"already_imported"`
	DryRun          bool `json:"dry_run"`
}

func importCommand(e env) *cobra.Command {
	var (
		cf          configFlag
		dryRun      bool
		output      string
		outputCheck func() error
	)
	cmd := &cobra.Command{
		Use:   "import [flags] FILE.csv",
		Short: "load a published price table (CSV) as observations, checked line by line",
		Long:  importHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return badUsageOf(cmd, "want exactly one CSV file, got %d arguments", len(args))
			}
			return nil
		},
		ValidArgsFunction: func(*cobra.Command, []string, string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []cobra.Completion{"csv"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			path := args[0]
			if err := outputCheck(); err != nil {
				return err
			}
			cfg, err := cf.load(e)
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
			res := imported{File: path, RunID: imp.RunID, Observations: len(imp.Offers), Providers: map[string]int{}, DryRun: dryRun}
			for _, o := range imp.Offers {
				res.Providers[o.Provider]++
			}
			if !dryRun {
				// No load while a re-derivation swaps months (gpucost reparse): the run lock of the spool.
				unlock, err := pipeline.Lock(ctx, cfg.Scrape.SpoolDir, cfg.Scrape.LockWait.Std(), "import")
				if err != nil {
					return err
				}
				defer unlock()
				s, err := openStore(ctx, cfg.ClickHouse, store.Options{Logger: newLogger(e.stderr, cfg.Log)})
				if err != nil {
					return err
				}
				defer s.Close()
				loaded, err := s.LoadImport(ctx, imp)
				if err != nil {
					return err
				}
				res.Stored, res.AlreadyImported = loaded.OffersWritten, loaded.Skipped()
			}
			if output == "json" {
				return export.WriteJSON(e.stdout, export.Envelope[imported]{Schema: export.ImportsSchema, Query: importQuery{File: path, DryRun: dryRun},
					Items: []imported{res}})
			}
			return writeImported(e.stdout, output, res, pricetable.Summary(imp.Offers))
		},
	}
	cf.add(cmd)
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the file and say what would be loaded; load nothing")
	outputCheck = outputFlag(cmd, &output, "table", "json", "csv")
	return cmd
}

// importQuery is what gpucost import --output json echoes of its request.
type importQuery struct {
	File   string `json:"file"`
	DryRun bool   `json:"dry_run"`
}

// writeImported writes what import did as a table or CSV; summary counts the rows by provider.
func writeImported(w io.Writer, output string, r imported, summary string) error {
	switch output {
	case "csv":
		c := textcell.NewCSVWriter(w)
		if err := c.Write([]string{"file", "run_id", "observations", "providers", "stored", "already_imported", "dry_run"}); err != nil {
			return err
		}
		if err := c.Write([]string{r.File, r.RunID, strconv.Itoa(r.Observations), summary, strconv.Itoa(r.Stored),
			strconv.FormatBool(r.AlreadyImported), strconv.FormatBool(r.DryRun)}); err != nil {
			return err
		}
		return c.Flush()
	}
	var err error
	switch {
	case r.DryRun:
		_, err = fmt.Fprintf(w, "dry run: %s is valid: %d observations (%s) as run %s; nothing loaded\n", r.File, r.Observations, summary, r.RunID)
	case r.AlreadyImported:
		_, err = fmt.Fprintf(w, "%s was already imported as run %s: nothing loaded\n", r.File, r.RunID)
	default:
		_, err = fmt.Fprintf(w, "imported %d observations (%s) from %s as run %s\n", r.Stored, summary, r.File, r.RunID)
	}
	return err
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
