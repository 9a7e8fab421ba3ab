package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/pipeline"
	"github.com/gpucost/gpucost/reparse"
	"github.com/gpucost/gpucost/scrapers"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/store"
)

var reparseHelp = `Re-derive stored runs with today's parsers: the offers of every run observed in
[--from, --to) are parsed again from the run's raw payloads, validated as a scrape validates
them, and replace the stored ones, with the daily rollups, final rows and latest view built from
them. Each month is swapped whole (ALTER TABLE … REPLACE PARTITION), so queries see a month as
it was or as re-derived, never half of each. Every offer row records the parser that produced it
(parser_version).

--from and --to take a date, a time or an age such as 30d. --providers limits it to some of
` + strings.Join(scrapers.StoredParsers(), ", ") + ` (default all of them). --dry-run reports what would change
(offers added, removed, repriced or changed, by provider, with examples) and writes nothing.

A run keeps its stored offers (exit 3) when today's parser does not read every payload of it that
gave offers, or gives fewer offers than scrape.min_offer_ratio of those stored. Only runs whose
load completed are re-derived (not a batch waiting in the spool, not imports). It is safe to stop
and run again: an interrupted re-derivation is completed by the next. It takes the scrape run
lock (scrape.spool_dir), so no scrape or import loads meanwhile; it runs on a single server, not
a cluster. docs/operations.md has more.

--output json writes the report in an envelope (gpucost.rederivations/v1) as its one item:
dry_run, the months, and by provider the runs, the offers before and after, on a dry run the
offers added, removed, repriced and changed with examples, and the runs kept and why; its query
is --from and --to resolved, the providers and --dry-run.`

// reparseQuery is what gpucost reparse --output json echoes of its request.
type reparseQuery struct {
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Providers []string  `json:"providers"`
	DryRun    bool      `json:"dry_run"`
}

func reparseCommand(e env) *cobra.Command {
	var (
		cf                                  configFlag
		fromFlag, toFlag, providers, output string
		dryRun                              bool
		outputCheck                         func() error
	)
	cmd := &cobra.Command{
		Use:   "reparse --from WHEN [--to WHEN] [--providers LIST] [--dry-run]",
		Short: "re-derive stored runs' offers from their raw payloads with today's parsers",
		Long:  reparseHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			now := time.Now()
			from, err := selection.When(fromFlag, now)
			if err != nil {
				return badUsage("--from: %v", err)
			}
			to, err := selection.When(toFlag, now)
			if err != nil {
				return badUsage("--to: %v", err)
			}
			if !from.Before(to) {
				return badUsage("--from %s is not before --to %s", from.Format(time.RFC3339), to.Format(time.RFC3339))
			}
			if err := outputCheck(); err != nil {
				return err
			}
			cfg, err := cf.load(e)
			if err != nil {
				return err
			}
			var names []string
			for _, p := range strings.Split(providers, ",") {
				if p = strings.TrimSpace(p); p == "" {
					continue
				}
				if !slices.Contains(scrapers.StoredParsers(), p) {
					return badUsage("--providers: no parser for the stored payloads of %q (want some of %s)", p, strings.Join(scrapers.StoredParsers(), ", "))
				}
				names = append(names, p)
			}
			unlock, err := pipeline.Lock(ctx, cfg.Scrape.SpoolDir, cfg.Scrape.LockWait.Std(), "reparse")
			if err != nil {
				return err
			}
			defer unlock()
			logger := newLogger(e.stderr, cfg.Log)
			s, err := openStore(ctx, cfg.ClickHouse, store.Options{Logger: logger})
			if err != nil {
				return err
			}
			defer s.Close()
			rep, err := reparse.Run(ctx, s, reparse.Options{
				From: from, To: to, Providers: names, DryRun: dryRun,
				Validation: cfg.Scrape.Pipeline(), Redactor: e.secrets, Logger: logger,
			})
			if err != nil {
				return err
			}
			if output == "json" {
				if len(names) == 0 {
					names = scrapers.StoredParsers()
				}
				q := reparseQuery{From: from.UTC(), To: to.UTC(), Providers: names, DryRun: dryRun}
				err = export.WriteJSON(e.stdout, export.Envelope[reparse.Report]{Schema: export.RederivationsSchema, Query: q, Items: []reparse.Report{rep}})
			} else {
				err = rep.Write(e.stdout)
			}
			if err != nil {
				return fmt.Errorf("writing the report: %w", err)
			}
			return rep.Err()
		},
	}
	cf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&fromFlag, "from", "", "start of the range of runs: a date, a time or an age like 30d (required)")
	fl.StringVar(&toFlag, "to", "now", "end of the range (exclusive)")
	fl.StringVar(&providers, "providers", "", "comma-separated providers (default every provider with a parser)")
	completeList(cmd, "providers", scrapers.StoredParsers()...)
	fl.BoolVar(&dryRun, "dry-run", false, "report what would change; write nothing")
	outputCheck = outputFlag(cmd, &output, "table", "json")
	return cmd
}
