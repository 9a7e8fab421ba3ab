package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/config"
	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/gpuusage"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/plans"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/store"
)

const optimizeHelp = `Plan every team's workloads on today's offers: for each workload, the cheapest provider, GPU,
count and price type that fits its memory, interconnect and interruption needs, priced per unit
of finished work, and the monthly savings against what it runs on now. The plan is printed and
stored in the plans table (one row per workload per run), so savings can be followed over time.

Offers are the newest observation of each offer, scraped or imported. A price holds until its
valid_until (an imported table may give one), else for optimize.options.max_offer_age_hours
(24 by default) after it was observed; older offers are left out, a provider with none that
holds is reported as excluded, and when age is why nothing fits the reason says so. Every
assumption of the plan is an option in optimize.options (gpucost config print shows them). A
workload nothing fits is reported with the reason, not an error.

With prometheus.url set, each workload whose current placement has a metrics_selector is
measured first: the average busy share of its GPUs over prometheus.window (a week) before now,
from the DCGM exporter's DCGM_FI_DEV_GPU_UTIL (prometheus.query). The plan carries it
(measured_utilization) with advice on how to pay at that level, and a service that states no
utilization is planned at the measured share. Prometheus down, or a selector that matches
nothing, leaves that workload unmeasured with a caveat saying why; the plan is made anyway.

Each workload also gets advice where some applies (docs/economics.md §3): what its GPUs were
measured doing, a way of paying that wins over today's (serverless, a term; with the
break-even), and owning its GPUs when that pays within their write-off (gpucost tco shows the
whole rent-or-buy case).

The plan is written as the weekly report writes it: --output table a line per workload, the
organisation's totals and the advice, markdown the report's organisation, workloads and advice,
csv the report's CSV (the columns of gpucost report --output csv). json is the envelope of
/api/v1/plans (gpucost.plans/v1): an item per workload, first the columns of the plans table
the plan is stored as (what the API serves of it), then what only the plan as made holds: both
placements whole, the alternatives, the rejected GPU models and why, the sizing, the caveats,
the measured utilization, the advice and the rent-or-buy case. Its query holds the workloads
file, whether the plan was stored and the options it was made with.

Without a workloads file (no --workloads, optimize.workloads empty) the plan is of the sample
teams built into gpucost (plans/workloads.sample.yaml documents every field), and a note on
stderr says so. --quiet prints nothing when the plan is made and stored: for cron.`

func optimizeCommand(e env) *cobra.Command {
	var (
		cf                configFlag
		workloads, output string
		noStore, quiet    bool
		outputCheck       func() error
	)
	cmd := &cobra.Command{
		Use:   "optimize [flags]",
		Short: "plan each team's workloads on the cheapest fitting offers; store and print the plan",
		Long:  optimizeHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := outputCheck(); err != nil {
				return err
			}
			format := planFormats[output]
			return quietly(e, quiet, func(e env) error {
				cfg, err := cf.load(e)
				if err != nil {
					return err
				}
				useWorkloads(e, &cfg, "optimize", workloads)
				plan, err := optimizeOnce(cmd.Context(), cfg, e, newLogger(e.stderr, cfg.Log), !noStore)
				if err != nil {
					return err
				}
				if output == "json" {
					q := optimizeQuery{PlansQuery: export.NewPlansQuery(nil), Workloads: plans.Source(cfg.Optimize.Workloads), Stored: !noStore, Options: plan.Options}
					return export.WriteJSON(e.stdout, export.Envelope[optimizer.PlanItem]{Schema: export.PlansSchema, Query: q,
						Items: plan.Items(plans.RunID(plan.GeneratedAt))})
				}
				return report.WritePlan(e.stdout, plan, format)
			})
		},
	}
	cf.add(cmd)
	fl := cmd.Flags()
	fl.StringVar(&workloads, "workloads", "", "workloads file (default optimize.workloads; none: the sample teams built in)")
	must(cmd.MarkFlagFilename("workloads", "yaml", "yml"))
	outputCheck = outputFlag(cmd, &output, "table", "json", "csv", "markdown")
	fl.BoolVar(&noStore, "no-store", false, "print the plan without storing it")
	quietFlag(cmd, &quiet, "the plan is made and stored")
	return cmd
}

// optimizeQuery is what gpucost optimize --output json echoes of its request: the query of
// /api/v1/plans (every team), the workloads planned, whether the plan was stored, and the
// options it was made with (optimize.options, defaults filled in).
type optimizeQuery struct {
	export.PlansQuery
	Workloads string            `json:"workloads"` // the file, or plans.SampleName
	Stored    bool              `json:"stored"`
	Options   optimizer.Options `json:"options"`
}

// useWorkloads sets the workloads file of cfg to the one --workloads names, if any, and says on
// stderr when the command plans the sample teams built in (no file named anywhere).
func useWorkloads(e env, cfg *config.Config, command, flag string) {
	if flag != "" {
		cfg.Optimize.Workloads = flag
	}
	if cfg.Optimize.Workloads == "" {
		fmt.Fprintf(e.stderr, "gpucost %s: planning the sample teams built in; name yours with --workloads FILE\n", command)
	}
}

// optimizeOnce reads the workloads and today's offers, measures the workloads' GPUs when
// Prometheus is configured, plans, and stores the plan when storePlan is set.
func optimizeOnce(ctx context.Context, cfg config.Config, e env, logger *slog.Logger, storePlan bool) (*optimizer.Plan, error) {
	wl, err := plans.ReadWorkloads(cfg.Optimize.Workloads)
	if err != nil {
		return nil, err
	}
	m, err := newMeasurer(cfg.Prometheus, e.getenv)
	if err != nil {
		return nil, err
	}
	s, err := openStore(ctx, cfg.ClickHouse, store.Options{Logger: logger})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	now := time.Now().UTC().Truncate(time.Second)
	today, err := plans.Make(ctx, s, plans.Measuring{Measurer: m, Logger: logger}, wl, cfg.Optimize.Options, now)
	if err != nil {
		return nil, err
	}
	if storePlan {
		if err := plans.Save(ctx, s, today.Plan, now); err != nil {
			return today.Plan, err
		}
	}
	return today.Plan, nil
}

// newMeasurer is the reader of GPU utilization of the prometheus section, its token read from
// the variable or the file the section names; nil when no URL is set.
func newMeasurer(c config.PrometheusConfig, getenv func(string) string) (plans.Measurer, error) {
	if c.URL == "" {
		return nil, nil
	}
	token, err := c.BearerToken(getenv)
	if err != nil {
		return nil, err
	}
	r, err := gpuusage.New(gpuusage.Config{URL: c.URL, Query: c.Query, Window: c.Window.Std(), Timeout: c.Timeout.Std(), BearerToken: token})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// planFormats maps --output to the report's plan formats; json is an envelope of the plan's
// items.
var planFormats = map[string]report.Format{"table": report.FormatText, "csv": report.FormatCSV, "markdown": report.FormatMarkdown}
