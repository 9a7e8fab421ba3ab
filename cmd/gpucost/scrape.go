package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/textcell"
)

const scrapeHelp = `Run one scrape: fetch every enabled provider in parallel, normalize and validate the offers,
and load them into ClickHouse with the raw responses and one run-log row per provider. Every
batch is written to the spool folder before it is loaded and leaves it once stored, so a batch
that could not be loaded (ClickHouse down, the process killed) is loaded first by the next run,
once. A spooled batch that fails to load 5 times, or that ClickHouse refuses as such, moves to
the spool's quarantine/ folder, and the others go on.

Exit codes: 0 every provider ok and nothing left in the spool; 3 partial (some providers failed
or lost part of their data, or batches wait in the spool for the next run: ClickHouse was down;
the run log and the summary say why); 5 batches are in the spool's quarantine/ folder (this run
moved one there, or earlier runs did and nobody has looked at them: read their .failures files,
then move them back into the spool folder to load them again, or away); 1 failed (no provider
succeeded, or the run could not start), also when batches are in quarantine; 2 bad flags or
configuration; 4 another scrape holds the lock (scrape.lock_wait sets how long to wait).

Progress goes to stderr: one line per provider on a terminal, structured logs otherwise.`

func runScrape(ctx context.Context, e env, args []string) error {
	return scrape(ctx, e, args, scrapeHooks{})
}

// scrapeHooks are the points where a fault-injection test stops a scrape: each stage of a
// batch's load (pipeline.Options.OnStage) and each step of the store's part of it
// (store.Options.OnLoadStep). Both nil in gpucost itself.
type scrapeHooks struct {
	onStage    func(stage string)
	onLoadStep func(step string)
}

func scrape(ctx context.Context, e env, args []string, hooks scrapeHooks) error {
	fs := newFlags("scrape", "[flags]", scrapeHelp)
	fs.withConfig()
	providers := fs.String("providers", "", "comma-separated providers to scrape (default scrape.providers)")
	replay := fs.String("replay", "", "serve every request from a recorded folder instead of the network")
	record := fs.String("record", "", "save every response of this run to a folder (replayable with --replay)")
	dryRun := fs.Bool("dry-run", false, "print what would be loaded; load and spool nothing")
	if err := fs.parse(e, args, 0); err != nil {
		return err
	}
	cfg, err := fs.config(e)
	if err != nil {
		return err
	}
	if *replay != "" && *record != "" {
		return badUsage("--replay and --record exclude each other")
	}
	tty := isTerminal(e.stderr)
	logger := runLogger(e, tty)
	sources, err := buildSources(cfg, e, logger, selection.List(*providers), sourceOptions{recordDir: *record, replayDir: *replay})
	if err != nil {
		return &usageError{err: err}
	}
	var sink pipeline.Sink
	var history pipeline.History
	if !*dryRun {
		st := newLazyStore(cfg.ClickHouse, logger, hooks.onLoadStep)
		defer st.Close()
		sink, history = st, st
	}
	opts := pipeline.Options{Logger: logger, DryRun: *dryRun, OnStage: hooks.onStage, Redactor: e.secrets}
	if *replay != "" {
		// The same recording always gets the same run id, so replaying it twice loads it once.
		if opts.RunID, err = replayRunID(*replay); err != nil {
			return badUsage("--replay: %v", err)
		}
	}
	if tty {
		opts.Progress = func(p pipeline.ProviderReport) { printProgress(e.stderr, p) }
	}
	runner, err := pipeline.New(pipelineConfig(cfg), sources, sink, history, opts)
	if err != nil {
		return &usageError{err: err}
	}
	rep, err := runner.Run(ctx)
	if errors.Is(err, pipeline.ErrBusy) {
		return fmt.Errorf("%w: not starting a second run", err)
	}
	if err != nil {
		return err
	}
	if *dryRun {
		printDryRun(e.stdout, rep)
	}
	printSummary(e.stdout, rep)
	return scrapeOutcome(rep)
}

// scrapeOutcome is a scrape's result as an exit code: the run's status, raised to partial while
// batches wait in the spool and to quarantined while its quarantine holds any (a failed run
// stays failed); the error says why.
func scrapeOutcome(rep pipeline.Report) error {
	code := exitFailed
	switch rep.Status {
	case schema.RunOK:
		code = exitOK
	case schema.RunPartial:
		code = exitPartial
	}
	var why []error
	if rep.Waiting > 0 {
		// The data is safe in the spool, but the operator should know the store did not take it.
		why = append(why, fmt.Errorf("%d batches wait in the spool for the next run (ClickHouse did not take them)", rep.Waiting))
		if code == exitOK {
			code = exitPartial
		}
	}
	if rep.Quarantined > 0 {
		why = append(why, fmt.Errorf("%d batches are in quarantine in %s: they will not load until moved back into the spool folder; their .failures files say why (docs/operations.md)",
			rep.Quarantined, rep.QuarantineDir))
		if code != exitFailed {
			code = exitQuarantined
		}
	}
	if code == exitOK {
		return nil
	}
	return withCode(code, errors.Join(why...))
}

// replayRunID derives a run id from a recorded folder's contents: "replay-" and the start of a
// SHA-256 over every file's path and bytes.
func replayRunID(dir string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", filepath.ToSlash(rel), len(b))
		h.Write(b)
		return nil
	})
	if err != nil {
		return "", err
	}
	return "replay-" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

func pipelineConfig(cfg config.Config) pipeline.Config {
	return pipeline.Config{
		Parallelism:        cfg.Scrape.Parallelism,
		SourceTimeout:      cfg.Scrape.SourceTimeout.Std(),
		SourceTimeoutMax:   cfg.Scrape.SourceTimeoutMax.Std(),
		LoadTimeout:        cfg.Scrape.LoadTimeout.Std(),
		MinOfferRatio:      cfg.Scrape.MinOfferRatio,
		MaxPricePerGPUHour: decimal.NewFromFloat(cfg.Scrape.MaxPricePerGPUHour),
		OutlierFactor:      cfg.Scrape.OutlierFactor,
		SpoolDir:           cfg.Scrape.SpoolDir,
		LockWait:           cfg.Scrape.LockWait.Std(),
	}
}

// runLogger logs warnings and errors as text on a terminal (progress lines carry the rest), and
// everything from info up as JSON otherwise, for log collectors.
func runLogger(e env, tty bool) *slog.Logger {
	if tty {
		return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return slog.New(slog.NewJSONHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func printProgress(w io.Writer, p pipeline.ProviderReport) {
	line := fmt.Sprintf("%-10s %-8s %5d offers loaded", textcell.Clean(p.Provider, textcell.NameWidth), p.Status, p.Loaded)
	if n := total(p.Rejected); n > 0 {
		line += fmt.Sprintf(", %d rejected", n)
	}
	if p.Spooled {
		line += ", spooled"
	}
	line += fmt.Sprintf("  (%s)", p.Duration.Round(1e7))
	if p.Error != "" {
		line += "\n           " + textcell.Clean(p.Error, textcell.TextWidth)
	}
	fmt.Fprintln(w, line)
}

func printSummary(w io.Writer, rep pipeline.Report) {
	for _, r := range rep.Replayed {
		switch {
		case r.Quarantined:
			fmt.Fprintf(w, "spooled batch %s moved to quarantine: %s\n", r.File, textcell.Clean(r.Error, textcell.TextWidth))
		case r.Error != "":
			fmt.Fprintf(w, "spooled batch %s still not loadable: %s\n", r.File, textcell.Clean(r.Error, textcell.TextWidth))
		case r.Skipped:
			fmt.Fprintf(w, "spooled batch %s was already stored: skipped\n", r.File)
		default:
			fmt.Fprintf(w, "loaded spooled batch %s\n", r.File)
		}
	}
	fmt.Fprintf(w, "run %s: %s\n", rep.RunID, rep.Status)
	t := textcell.NewTable(w, 160)
	t.Row("PROVIDER", "STATUS", "PARSED", "LOADED", "REJECTED", "SPOOLED", "ERROR")
	for _, p := range rep.Providers {
		t.Row(p.Provider, string(p.Status), strconv.Itoa(p.Parsed), strconv.Itoa(p.Loaded), strconv.Itoa(total(p.Rejected)), strconv.FormatBool(p.Spooled), p.Error)
	}
	_ = t.Flush()
}

func printDryRun(w io.Writer, rep pipeline.Report) {
	var offers []schema.Offer
	for _, b := range rep.Batches {
		offers = append(offers, b.Offers...)
	}
	sort.SliceStable(offers, func(i, j int) bool {
		if offers[i].GPUModel != offers[j].GPUModel {
			return offers[i].GPUModel < offers[j].GPUModel
		}
		return offers[i].PriceUSDPerGPUHour.LessThan(offers[j].PriceUSDPerGPUHour)
	})
	fmt.Fprintf(w, "dry run: %d offers would be loaded\n", len(offers))
	writeOffersTable(w, offers)
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// newLazyStore is the pipeline's sink and history on ClickHouse, opened on first use and reopened
// after a failure (store.Lazy), so a scrape started while ClickHouse is down still runs and
// spools. onLoadStep is the store's store.Options.OnLoadStep (the kill tests stop the process
// there); nil in gpucost itself.
func newLazyStore(c config.ClickHouseConfig, logger *slog.Logger, onLoadStep func(step string)) *store.Lazy {
	return store.NewLazy(c.DSN, store.Options{Logger: logger, Cluster: c.Cluster, OnLoadStep: onLoadStep})
}
