package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/scrapers"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/statusline"
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

On a terminal, a progress line on stderr says how many providers are done, how many offers were
read so far and how long the run has taken (a live Vast scrape takes minutes); it is gone before
the summary. Logs go to stderr in the format of the log section (log.level, log.format).

The summary says what became of each provider's batch: stored; already stored (the same
recording replayed again: nothing new); spooled (it waits in the spool: ClickHouse was down);
quarantined; none (the provider failed). Its first line, "run ID: OUTCOME: …", agrees with the
exit code: ok, already loaded or dry run (0); spooled or partial (3); quarantined (5); failed
(1). --output json writes the summary in an envelope (gpucost.runs/v1) as its one item (outcome,
message, stored, waiting, the providers and the spooled batches of earlier runs), its query the
providers scraped, --replay, --record and --dry-run; csv a row per provider.

--quiet prints nothing when the run exits 0 and everything otherwise, so a crontab line mails
only when something needs a look.`

// scrapeHooks are the points where a fault-injection test stops a scrape: each stage of a
// batch's load (pipeline.Options.OnStage) and each step of the store's part of it
// (store.Options.OnLoadStep). Both nil in gpucost itself.
type scrapeHooks struct {
	onStage    func(stage string)
	onLoadStep func(step string)
}

// scrapeFlags are scrape's flags.
type scrapeFlags struct {
	cf                        configFlag
	providers, replay, record string
	output                    string
	dryRun, quiet             bool
}

func scrapeCommand(e env, hooks scrapeHooks) *cobra.Command {
	var (
		f           scrapeFlags
		outputCheck func() error
	)
	cmd := &cobra.Command{
		Use:   "scrape [flags]",
		Short: "run one scrape of every enabled provider into ClickHouse",
		Long:  scrapeHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputCheck(); err != nil {
				return err
			}
			if f.replay != "" && f.record != "" {
				return badUsage("--replay and --record exclude each other")
			}
			return quietly(e, f.quiet, func(e env) error { return scrape(cmd.Context(), e, f, hooks) })
		},
	}
	f.cf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.providers, "providers", "", "comma-separated providers to scrape (default scrape.providers)")
	fl.StringVar(&f.replay, "replay", "", "serve every request from a recorded folder instead of the network")
	must(cmd.MarkFlagDirname("replay"))
	fl.StringVar(&f.record, "record", "", "save every response of this run to a folder (replayable with --replay)")
	must(cmd.MarkFlagDirname("record"))
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would be loaded; load and spool nothing")
	outputCheck = outputFlag(cmd, &f.output, "table", "json", "csv")
	quietFlag(cmd, &f.quiet, "every provider is scraped and stored")
	completeSelection(cmd)
	return cmd
}

// scrapeQuery is what gpucost scrape --output json echoes of its request: the providers
// scraped (--providers, else scrape.providers), and where their answers came from or went.
type scrapeQuery struct {
	Providers []string `json:"providers"`
	Replay    string   `json:"replay"` // the recorded folder read instead of the network; "" for none
	Record    string   `json:"record"` // the folder the answers were recorded into; "" for none
	DryRun    bool     `json:"dry_run"`
}

// scrape runs one scrape and prints its summary in --output.
func scrape(ctx context.Context, e env, f scrapeFlags, hooks scrapeHooks) error {
	cfg, err := f.cf.load(e)
	if err != nil {
		return err
	}
	var line *statusline.Line
	logTo := e.stderr
	if e.stderrTTY {
		// Log lines go above the progress line, which is taken away before the summary.
		line = statusline.New(e.stderr, progressWidth)
		logTo = line
	}
	logger := newLogger(logTo, cfg.Log)
	sources, err := buildSources(cfg, e, logger, selection.List(f.providers), sourceOptions{recordDir: f.record, replayDir: f.replay})
	if err != nil {
		return &usageError{err: err}
	}
	var sink pipeline.Sink
	var history pipeline.History
	if !f.dryRun {
		st := newLazyStore(cfg.ClickHouse, logger, hooks.onLoadStep)
		defer st.Close()
		sink, history = st, st
	}
	opts := pipeline.Options{Logger: logger, DryRun: f.dryRun, OnStage: hooks.onStage, Redactor: e.secrets}
	if f.replay != "" {
		// The same recording always gets the same run id, so replaying it twice loads it once.
		if opts.RunID, err = scrapers.ReplayRunID(f.replay); err != nil {
			return badUsage("--replay: %v", err)
		}
	}
	if line != nil {
		p := startProgress(ctx, line, time.Now())
		defer p.stop()
		opts.Progress = p.set
	}
	runner, err := pipeline.New(cfg.Scrape.Pipeline(), sources, sink, history, opts)
	if err != nil {
		return &usageError{err: err}
	}
	rep, err := runner.Run(ctx)
	if line != nil {
		line.Clear()
	}
	if errors.Is(err, pipeline.ErrBusy) {
		return fmt.Errorf("%w: not starting a second run", err)
	}
	if err != nil {
		return err
	}
	switch f.output {
	case "json":
		q := scrapeQuery{Providers: make([]string, len(sources)), Replay: f.replay, Record: f.record, DryRun: f.dryRun}
		for i, s := range sources {
			q.Providers[i] = s.Name()
		}
		err = export.WriteJSON(e.stdout, export.Envelope[pipeline.Summary]{Schema: export.RunsSchema, Query: q, Items: []pipeline.Summary{rep.Summary()}})
	case "csv":
		err = pipeline.WriteSummaryCSV(e.stdout, rep)
	default:
		if f.dryRun {
			offers := rep.Offers()
			fmt.Fprintf(e.stdout, "dry run: %d offers would be loaded\n", len(offers))
			if err := export.Offers(e.stdout, export.Table, offers); err != nil {
				return err
			}
		}
		err = pipeline.WriteSummary(e.stdout, rep)
	}
	if err != nil {
		return fmt.Errorf("writing the summary: %w", err)
	}
	return rep.Err()
}

// progressWidth is the width of scrape's progress line: it fits an 80-column terminal.
const progressWidth = 79

// progress draws a scrape's progress line: providers done of all, offers read so far and the
// time since the start, redrawn as the sources read and every second in between.
type progress struct {
	line    *statusline.Line
	started time.Time
	mu      sync.Mutex
	last    pipeline.Progress
	done    chan struct{}
	stopped sync.WaitGroup
}

// startProgress draws the progress line of a run started at started until stop.
func startProgress(ctx context.Context, line *statusline.Line, started time.Time) *progress {
	p := &progress{line: line, started: started, done: make(chan struct{})}
	p.stopped.Add(1)
	go func() {
		defer p.stopped.Done()
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-p.done:
				return
			case <-tick.C:
				p.draw()
			}
		}
	}()
	return p
}

// set is the pipeline's Options.Progress.
func (p *progress) set(pp pipeline.Progress) {
	p.mu.Lock()
	p.last = pp
	p.mu.Unlock()
	p.draw()
}

func (p *progress) draw() {
	p.mu.Lock()
	pp := p.last
	p.mu.Unlock()
	if pp.Sources == 0 {
		return // nothing read yet
	}
	elapsed := time.Since(p.started).Truncate(time.Second)
	p.line.Set(fmt.Sprintf("scraping: %d of %d providers done, %s offers so far, %s elapsed",
		pp.Done, pp.Sources, money.Thousands(strconv.Itoa(pp.Offers)), elapsed))
}

// stop ends the redraws.
func (p *progress) stop() {
	close(p.done)
	p.stopped.Wait()
}

// newLazyStore is the pipeline's sink and history on ClickHouse, opened on first use and reopened
// after a failure (store.Lazy), so a scrape started while ClickHouse is down still runs and
// spools. onLoadStep is the store's store.Options.OnLoadStep (the kill tests stop the process
// there); nil in gpucost itself.
func newLazyStore(c config.ClickHouseConfig, logger *slog.Logger, onLoadStep func(step string)) *store.Lazy {
	return store.NewLazy(c.DSN, store.Options{Logger: logger, Cluster: c.Cluster, OnLoadStep: onLoadStep})
}
