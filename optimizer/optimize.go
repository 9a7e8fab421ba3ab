package optimizer

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// Input is everything a plan is made from. Optimize reads it and changes nothing.
type Input struct {
	// Now is the plan time: freshness is measured against it and it becomes
	// Plan.GeneratedAt. Required (the optimizer never reads the clock).
	Now time.Time
	// Workloads is the parsed workloads file.
	Workloads *File
	// Offers are today's offers (the latest offer per key), scraped or imported, from any
	// number of providers. An offer's price holds until its ValidUntil, or for
	// Options.MaxOfferAgeHours after its ObservedAt when the source gave no end: older offers
	// are left out and counted (Plan.Market.Stale), and a provider with no fresh offer is
	// listed in Plan.ExcludedProviders.
	Offers []schema.Offer
}

// Optimize plans every workload of in.Workloads on in.Offers. It fails only on unusable
// input (no time, invalid options, a workload that ParseWorkloads would have rejected); a
// workload that nothing fits gets status no_fit and a reason.
func Optimize(in Input, opts Options) (*Plan, error) {
	if in.Now.IsZero() {
		return nil, errors.New("optimize: Input.Now is required")
	}
	if err := opts.Validate(); err != nil {
		return nil, fmt.Errorf("optimize: %w", err)
	}
	if err := in.Workloads.validate(); err != nil {
		return nil, fmt.Errorf("optimize: %w", err)
	}
	now := in.Now.UTC()
	p := &planner{opts: &opts, now: now, keep: 1 + opts.Alternatives}
	need := make(map[currentKey]bool)
	for _, t := range in.Workloads.Teams {
		for _, w := range t.Workloads {
			if c := w.Current; c != nil {
				if m, ok := gpus.Lookup(c.GPUModel); ok {
					need[currentKey{c.Provider, m.Name, c.PriceType}] = true
				}
			}
		}
	}
	p.market = buildMarket(in.Offers, now, p.opts, need)
	p.modelStates = make([]modelState, len(p.market.models))

	plan := &Plan{
		GeneratedAt:       now,
		Options:           opts,
		Teams:             make([]TeamPlan, 0, len(in.Workloads.Teams)),
		ExcludedProviders: p.market.excluded,
		Market:            p.market.summary,
	}
	if plan.ExcludedProviders == nil {
		plan.ExcludedProviders = []ExcludedProvider{}
	}
	for _, t := range in.Workloads.Teams {
		tp := TeamPlan{Name: t.Name, Email: t.Email, Workloads: make([]WorkloadPlan, 0, len(t.Workloads))}
		for i := range t.Workloads {
			wp := p.plan(&t.Workloads[i])
			tp.Workloads = append(tp.Workloads, wp)
			tp.Totals.add(&tp.Workloads[len(tp.Workloads)-1])
		}
		tp.Totals.finish()
		plan.Totals.merge(tp.Totals)
		plan.Teams = append(plan.Teams, tp)
	}
	plan.Totals.finish()
	return plan, nil
}

type planner struct {
	opts        *Options
	now         time.Time
	market      *market
	keep        int // candidates kept: 1 + alternatives
	modelStates []modelState
	top         []candidate
}

func (p *planner) plan(w *Workload) WorkloadPlan {
	o := p.opts
	variants := o.size(w)
	wp := WorkloadPlan{Name: w.Name, Kind: w.Kind, Alternatives: []Placement{}, Rejected: []Rejection{}, Caveats: []string{}}
	for i := range variants {
		s := variants[i].sizing
		s.Fits = make([]Fit, 0, len(p.market.models))
		for _, md := range p.market.models {
			s.Fits = append(s.Fits, o.fit(w, &variants[i], md))
		}
		wp.Sizing = append(wp.Sizing, roundSizing(s))
	}

	clear(p.modelStates)
	p.top = p.top[:0]
	pol := policyOf(w)
	allowedProvider := func(pr string) bool {
		return (len(w.Providers) == 0 || slices.Contains(w.Providers, strings.ToLower(pr))) &&
			!slices.Contains(w.ExcludeProviders, strings.ToLower(pr))
	}
	for _, c := range p.market.visitOrder {
		ms := &p.modelStates[c.modelIndex]
		// The cheapest variant that passes the class checks.
		best, bestVi := eval{}, -1
		for vi := range variants {
			ev, st := p.evalClass(w, variants, vi, c)
			if st == stageOK {
				if bestVi < 0 || ev.offerHours < best.offerHours {
					best, bestVi = ev, vi
				}
				continue
			}
			if !ms.feasible {
				p.noteReject(ms, rejection{stage: st, closeness: closenessOf(c), class: c, variantIdx: vi})
			}
		}
		if bestVi < 0 {
			continue
		}
		pruneClass := len(p.top) == p.keep && c.minPrice*best.offerHours > p.top[p.keep-1].floatCost+pruneMargin
		if pruneClass && ms.feasible {
			continue
		}
		for bi := range c.buckets {
			b := &c.buckets[bi]
			if !allowedProvider(b.provider) {
				if !ms.feasible {
					p.noteReject(ms, rejection{stage: stageProvider, class: c, variantIdx: bestVi, offer: b.offers[0].offer})
				}
				continue
			}
			if pruneClass {
				// Feasible by class but dearer than every candidate kept. Region and
				// availability are not checked, so such a model is never listed as rejected.
				ms.feasible = true
				break
			}
			for _, ref := range b.offers {
				cost := ref.price * best.offerHours
				if len(p.top) == p.keep && cost > p.top[p.keep-1].floatCost+pruneMargin {
					ms.feasible = true
					break
				}
				if st := offerCheck(&pol, ref, best.offersRented); st != stageOK {
					if !ms.feasible {
						p.noteReject(ms, rejection{stage: st, class: c, variantIdx: bestVi, offer: ref.offer, offersNeeded: best.offersRented})
					}
					continue
				}
				ms.feasible = true
				cand := candidate{floatCost: cost, ref: ref, class: c, eval: best, variantIdx: bestVi}
				p.insert(&cand)
				if o.DistinctAlternatives {
					break
				}
			}
		}
	}

	if len(p.top) > 0 {
		wp.Status = StatusOK
		rec := p.placement(w, variants, &p.top[0])
		wp.Recommended = &rec
		for i := 1; i < len(p.top); i++ {
			wp.Alternatives = append(wp.Alternatives, p.placement(w, variants, &p.top[i]))
		}
	}
	for i := range p.modelStates {
		ms := &p.modelStates[i]
		if ms.feasible || ms.furthest.stage == stageNone {
			continue
		}
		wp.Rejected = append(wp.Rejected, p.explain(w, variants, ms.furthest))
	}
	if wp.Recommended == nil {
		wp.Status = StatusNoFit
		wp.Reason = p.noFitReason(w, variants, wp.Rejected)
	}
	p.current(w, variants, &wp)
	p.caveats(w, &wp)
	return wp
}

// caveats adds workload-level warnings that do not belong to one placement.
func (p *planner) caveats(w *Workload, wp *WorkloadPlan) {
	for _, pr := range w.Providers {
		if !p.hasProvider(pr) {
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("provider %q in providers has no offers", pr))
		} else if p.isStale(pr) {
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("provider %q in providers is excluded for freshness", pr))
		}
	}
	if wp.Recommended != nil && wp.Recommended.PriceType.Interruptible() && w.Kind == Inference && w.ReferenceGPU == "" {
		wp.Caveats = append(wp.Caveats, "recommended capacity is spot: interruptions take the service down until it is rescheduled")
	}
}

func (p *planner) hasProvider(name string) bool {
	for pr := range p.market.providers {
		if strings.EqualFold(pr, name) {
			return true
		}
	}
	return false
}

func (p *planner) isStale(name string) bool {
	for pr := range p.market.staleProviders {
		if strings.EqualFold(pr, name) {
			return true
		}
	}
	return false
}
