// Package plans makes the plan of the day: it reads the teams' workloads file, plans the
// workloads on the store's latest offers whose prices still hold (package optimizer does the
// planning, without I/O), and stores the plan, one row per workload per run, so savings can be
// followed over time. `gpucost optimize`, the nightly job of `gpucost serve` and the weekly
// report all plan through here.
package plans

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// Offers is what planning reads of the store: the latest offers with the fields planning and the
// report read (the store's LatestOffersToPlan leaves the others zero).
type Offers interface {
	LatestOffersToPlan(ctx context.Context, f schema.OfferFilter) ([]schema.Offer, error)
	LastGoodRuns(ctx context.Context) ([]schema.ScrapeRun, error)
}

// Sink stores plans.
type Sink interface {
	InsertPlan(ctx context.Context, rows []schema.PlanRow) error
}

// lately is how far back, beyond the time a price holds, planning reads offers: the optimizer
// sees the offers that stopped holding within the week (and the tables that expired within it),
// so it can say when age is why nothing fits; older ones (delisted long ago) stay in the store.
const lately = 7 * 24 * time.Hour

// ReadWorkloads reads and parses a workloads file. A file that cannot be read or parsed is an
// *optimizer.InputError naming it.
func ReadWorkloads(path string) (*optimizer.File, error) {
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

// Make plans wl on the latest offers of s whose prices still hold at now, with opts. file names
// the workloads in errors.
func Make(ctx context.Context, s Offers, file string, wl *optimizer.File, opts optimizer.Options, now time.Time) (Today, error) {
	lookBack := time.Duration(opts.MaxOfferAgeHours*float64(time.Hour)) + lately
	offers, err := s.LatestOffersToPlan(ctx, schema.OfferFilter{MaxAge: lookBack, ExpiredWithin: lately})
	if err != nil {
		return Today{}, err
	}
	good, err := s.LastGoodRuns(ctx)
	if err != nil {
		return Today{}, err
	}
	plan, err := optimizer.Optimize(optimizer.Input{Now: now, Workloads: wl, Offers: offers}, opts)
	if err != nil {
		return Today{}, fmt.Errorf("planning %s: %w", file, err)
	}
	return Today{Plan: plan, Offers: offers, GoodRuns: good}, nil
}

// Save stores the plan under the run id plan-TIME.
func Save(ctx context.Context, s Sink, plan *optimizer.Plan, now time.Time) error {
	return s.InsertPlan(ctx, plan.Rows("plan-"+now.UTC().Format("20060102T150405Z")))
}
