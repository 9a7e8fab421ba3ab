// Package plans makes the plan of the day: it reads the teams' workloads file (or the sample
// teams built in, when none is named), measures how
// busy each workload's GPUs were when a measurer is given (package gpuusage reads Prometheus),
// plans the workloads on the store's latest offers whose prices still hold (package optimizer
// does the planning, without I/O), and stores the plan, one row per workload per run, so
// savings can be followed over time. `gpucost optimize`, the nightly job of `gpucost serve` and
// the weekly report all plan through here.
package plans

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// Offers is what planning reads of the store: the latest offers with the fields planning and the
// report read (the store's LatestOffersToPlan leaves the others zero).
type Offers interface {
	LatestOffersToPlan(ctx context.Context, f schema.OfferFilter) ([]schema.Offer, error)
	LastGoodRuns(ctx context.Context) ([]schema.ScrapeRun, error)
}

// Measurer reads how busy a placement's GPUs were. Measure returns the average utilization of
// the GPUs selector picks out (Prometheus label matchers without braces) over the measurer's
// window ending at end, or an error that says what failed, names the selector and holds no
// secret. It is called from several goroutines at once. *gpuusage.Reader is one.
type Measurer interface {
	Measure(ctx context.Context, selector string, end time.Time) (schema.GPUUsage, error)
}

// Measuring is how a plan measures its workloads' GPU utilization.
type Measuring struct {
	// Measurer reads it for every workload whose current placement has a metrics_selector;
	// nil measures nothing.
	Measurer Measurer
	// Logger is told of each measurement that failed; nil discards.
	Logger *slog.Logger
}

// measuredAtOnce is how many workloads are measured at once.
const measuredAtOnce = 4

// Sink stores plans.
type Sink interface {
	InsertPlan(ctx context.Context, rows []schema.PlanRow) error
}

// lately is how far back, beyond the time a price holds, planning reads offers: the optimizer
// sees the offers that stopped holding within the week (and the tables that expired within it),
// so it can say when age is why nothing fits; older ones (delisted long ago) stay in the store.
const lately = 7 * 24 * time.Hour

// sampleWorkloads are the sample teams, planned when no workloads file is named.
//
//go:embed workloads.sample.yaml
var sampleWorkloads []byte

// SampleName is the name the sample workloads go by in a plan and its errors.
const SampleName = "the sample workloads (built in)"

// Source names the workloads ReadWorkloads(path) reads, as plans and errors name them: the
// path, or SampleName for the built-in sample (path "").
func Source(path string) string {
	if path == "" {
		return SampleName
	}
	return path
}

// ReadWorkloads reads and parses a workloads file; an empty path reads the sample teams built
// into gpucost (workloads.sample.yaml, named SampleName). A file that cannot be read or parsed
// is an *optimizer.InputError naming it.
func ReadWorkloads(path string) (*optimizer.File, error) {
	if path == "" {
		return optimizer.ParseWorkloads(Source(path), sampleWorkloads)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &optimizer.InputError{File: path, Msg: fmt.Sprintf("reading workloads: %v", err)}
	}
	return optimizer.ParseWorkloads(path, data)
}

// Today is a plan made now, with what it was made from.
type Today struct {
	Plan     *optimizer.Plan
	Offers   []schema.Offer     // the offers read (the market the plan saw), with the fields planning reads
	GoodRuns []schema.ScrapeRun // the newest good run of each provider
}

// Make plans wl on the latest offers of s whose prices still hold at now, with opts, each
// workload with a metrics_selector measured first over the window before now (m). A failed
// measurement does not fail the plan: the workload is planned without it, its plan says why,
// and the failure is logged. Errors name the workloads as wl.Name does. wl is not changed.
func Make(ctx context.Context, s Offers, m Measuring, wl *optimizer.File, opts optimizer.Options, now time.Time) (Today, error) {
	lookBack := time.Duration(opts.MaxOfferAgeHours*float64(time.Hour)) + lately
	offers, err := s.LatestOffersToPlan(ctx, schema.OfferFilter{MaxAge: lookBack, ExpiredWithin: lately})
	if err != nil {
		return Today{}, err
	}
	good, err := s.LastGoodRuns(ctx)
	if err != nil {
		return Today{}, err
	}
	wl = m.measure(ctx, wl, now)
	plan, err := optimizer.Optimize(optimizer.Input{Now: now, Workloads: wl, Offers: offers}, opts)
	if err != nil {
		return Today{}, fmt.Errorf("planning %s: %w", wl.Name, err)
	}
	return Today{Plan: plan, Offers: offers, GoodRuns: good}, nil
}

// measure returns a copy of wl in which every workload whose current placement has a
// metrics_selector carries its measurement up to now (Workload.Measured), or why it has none
// (Workload.Unmeasured); wl itself when there is no measurer.
func (m Measuring) measure(ctx context.Context, wl *optimizer.File, now time.Time) *optimizer.File {
	if m.Measurer == nil {
		return wl
	}
	logger := m.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	out := *wl
	out.Teams = slices.Clone(wl.Teams)
	var g errgroup.Group
	g.SetLimit(measuredAtOnce)
	for i := range out.Teams {
		t := &out.Teams[i]
		t.Workloads = slices.Clone(t.Workloads)
		for j := range t.Workloads {
			w := &t.Workloads[j]
			if w.Current == nil || w.Current.MetricsSelector == "" {
				continue
			}
			g.Go(func() error {
				usage, err := m.Measurer.Measure(ctx, w.Current.MetricsSelector, now)
				if err != nil {
					logger.Warn("GPU utilization not measured", "team", t.Name, "workload", w.Name, "err", err)
					w.Unmeasured = err.Error()
					return nil
				}
				w.Measured = &usage
				return nil
			})
		}
	}
	g.Wait() // every measurement returns nil: a failure is the workload's, not the plan's
	return &out
}

// Save stores the plan under the run id RunID(now).
func Save(ctx context.Context, s Sink, plan *optimizer.Plan, now time.Time) error {
	return s.InsertPlan(ctx, plan.Rows(RunID(now)))
}

// RunID is the run id of the plan made at now: plan-TIME.
func RunID(now time.Time) string { return "plan-" + now.UTC().Format("20060102T150405Z") }
