// Package delivery gets the weekly savings report to the teams. It builds the week's report
// from the store (the plan of the day through package plans, the scrape run log, the price
// history of every GPU model the plan names, the plan stored a week earlier to compare with),
// writes it as files, and mails each team its own report once per week: a send log says who
// has been sent which week, a rerun skips them unless forced, and a dry run writes each
// message as an .eml file instead. The outcome of a mailing is one word, ok, partial or
// failed, which `gpucost report` maps to its exit code and the weekly job of `gpucost serve`
// reports as its status.
//
// It reads nothing of its own: the store comes in as Store and SendLog, the mail transport as
// Sender (package smtpmail is the SMTP one), the reader of GPU utilization as Options.Measurer
// (package gpuusage is the Prometheus one), the settings as Options. Options is a struct of
// this package, not package config's Config: delivery needs six settings (the workloads file,
// the planning options, the chart span, the sender address, the dashboard's address, the
// redactor) out of a configuration that also holds the scrapers, the server and the SMTP
// credentials, and taking the few it needs keeps it free of the YAML layout and lets a test or
// another caller fill them directly. cmd/gpucost/report.go fills Options from the configuration.
package delivery

import (
	"context"
	"log/slog"
	"slices"
	"time"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/plans"
	"github.com/gpucost/gpucost/redact"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/schema"
)

// Store is what building a report reads of the store: the latest offers and the newest good
// run of each provider to plan on (plans.Offers), the last run of each provider for the
// caveats, the daily price history for the market section and the charts, and the plan stored
// a week earlier (PlanAsOf: the rows of the newest plan made at or before a time, nil when
// none) for each team's "since last week". *store.Store is one.
type Store interface {
	plans.Offers
	LastRuns(ctx context.Context) ([]schema.ScrapeRun, error)
	History(ctx context.Context, q schema.HistoryQuery) ([]schema.HistoryPoint, error)
	PlanAsOf(ctx context.Context, t time.Time) ([]schema.PlanRow, error)
}

// Options are a delivery's settings.
type Options struct {
	// Workloads is the teams' workloads file (optimize.workloads).
	Workloads string
	// Planning are the optimizer's options (optimize.options).
	Planning optimizer.Options
	// Measurer reads how busy each workload's GPUs were (prometheus.url); nil measures nothing.
	Measurer plans.Measurer
	// HistoryWeeks is how many weeks the charts span (report.history_weeks).
	HistoryWeeks int
	// From is the sender of the emails, an RFC 5322 address (report.smtp.from).
	From string
	// DashboardURL is linked from every email (report.dashboard_url); "" links nothing.
	DashboardURL string
	// Secrets scrubs the files written: reports, charts and the .eml files of a dry run. Nil
	// scrubs nothing.
	Secrets *redact.Redactor
	// Logger gets a line per team mailed; nil means discard.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

func (o Options) now() time.Time {
	if o.Now == nil {
		return time.Now()
	}
	return o.Now()
}

func (o Options) logger() *slog.Logger {
	if o.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return o.Logger
}

// Build makes the report of week (zero: this week): it plans the workloads on the latest
// offers, and reads the run log, the price history of every GPU model in the plan and the plan
// stored a week before now (by `gpucost optimize`), which each team is compared with. The plan
// is always made on the latest offers; week names the market's "now" and the charts' end.
func Build(ctx context.Context, s Store, week report.Week, o Options) (*report.Report, error) {
	wl, err := plans.ReadWorkloads(o.Workloads)
	if err != nil {
		return nil, err
	}
	last, err := s.LastRuns(ctx)
	if err != nil {
		return nil, err
	}
	now := o.now().UTC().Truncate(time.Second)
	today, err := plans.Make(ctx, s, plans.Measuring{Measurer: o.Measurer, Logger: o.logger()}, wl, o.Planning, now)
	if err != nil {
		return nil, err
	}
	plan, offers, good := today.Plan, today.Offers, today.GoodRuns
	if week.ID == "" {
		week = report.WeekOf(now)
	}
	lastWeek, err := s.PlanAsOf(ctx, now.AddDate(0, 0, -7))
	if err != nil {
		return nil, err
	}
	in := report.Input{Plan: plan, Now: now, Week: week.Start, Runs: last, GoodRuns: good, LastWeek: lastWeek}
	asOf := now
	if week.End.After(now) {
		in.Offers = offers // the market now is today's offers; a past week's comes from history
	} else {
		asOf = week.End
	}
	opts := report.DefaultOptions()
	opts.HistoryWeeks = o.HistoryWeeks
	opts.MaxOfferAge = time.Duration(plan.Options.MaxOfferAgeHours * float64(time.Hour))
	end := asOf.UTC().Truncate(24*time.Hour).AddDate(0, 0, 1)
	from := end.AddDate(0, 0, -7*opts.HistoryWeeks-9)
	for _, model := range planModels(plan) {
		points, err := s.History(ctx, schema.HistoryQuery{Selection: schema.Selection{GPUModels: []string{model}}, From: from, To: end, Interval: schema.Day})
		if err != nil {
			return nil, err
		}
		in.History = append(in.History, points...)
	}
	return report.Build(in, opts)
}

// planModels lists the GPU models of every current and recommended placement of a plan.
func planModels(p *optimizer.Plan) []string {
	var out []string
	for _, t := range p.Teams {
		for _, w := range t.Workloads {
			for _, pl := range []*optimizer.Placement{w.Current, w.Recommended} {
				if pl != nil && pl.GPUModel != "" && !slices.Contains(out, pl.GPUModel) {
					out = append(out, pl.GPUModel)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
