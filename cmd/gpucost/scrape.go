package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/scrapers"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/store"
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
		if opts.RunID, err = scrapers.ReplayRunID(*replay); err != nil {
			return badUsage("--replay: %v", err)
		}
	}
	if tty {
		opts.Progress = func(p pipeline.ProviderReport) { pipeline.WriteProgress(e.stderr, p) }
	}
	runner, err := pipeline.New(cfg.Scrape.Pipeline(), sources, sink, history, opts)
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
		offers := rep.Offers()
		fmt.Fprintf(e.stdout, "dry run: %d offers would be loaded\n", len(offers))
		if err := export.Offers(e.stdout, export.Table, offers); err != nil {
			return err
		}
	}
	if err := pipeline.WriteSummary(e.stdout, rep); err != nil {
		return err
	}
	return rep.Err()
}

// runLogger logs warnings and errors as text on a terminal (progress lines carry the rest), and
// everything from info up as JSON otherwise, for log collectors.
func runLogger(e env, tty bool) *slog.Logger {
	if tty {
		return slog.New(slog.NewTextHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return slog.New(slog.NewJSONHandler(e.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// newLazyStore is the pipeline's sink and history on ClickHouse, opened on first use and reopened
// after a failure (store.Lazy), so a scrape started while ClickHouse is down still runs and
// spools. onLoadStep is the store's store.Options.OnLoadStep (the kill tests stop the process
// there); nil in gpucost itself.
func newLazyStore(c config.ClickHouseConfig, logger *slog.Logger, onLoadStep func(step string)) *store.Lazy {
	return store.NewLazy(c.DSN, store.Options{Logger: logger, Cluster: c.Cluster, OnLoadStep: onLoadStep})
}
