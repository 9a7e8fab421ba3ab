package optimizer

import (
	"errors"
	"fmt"
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
	need := currentKeysNeeded(in.Workloads)
	p.market = buildMarket(in.Offers, now, p.opts, need, opts.AllowCommitments || in.Workloads.commits())
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

// commits reports whether any workload of f may take a term price (commit_up_to).
func (f *File) commits() bool {
	for _, t := range f.Teams {
		for _, w := range t.Workloads {
			if w.CommitUpToMonths > 0 {
				return true
			}
		}
	}
	return false
}

// currentKeysNeeded lists the provider, catalog model and price type of every current
// placement in f: the market keeps those offers, stale or not, to price them.
func currentKeysNeeded(f *File) map[currentKey]bool {
	need := make(map[currentKey]bool)
	for _, t := range f.Teams {
		for _, w := range t.Workloads {
			if c := w.Current; c != nil {
				if m, ok := gpus.Lookup(c.GPUModel); ok {
					need[currentKey{c.Provider, m.Name, c.PriceType}] = true
				}
			}
		}
	}
	return need
}

// planner plans one workload after another on one market. What it holds between workloads
// is scratch space, cleared for each.
type planner struct {
	opts   *Options
	now    time.Time
	market *market
	keep   int // candidates kept: 1 + alternatives
	// modelStates is, per GPU model of the market (market.models), whether the workload has
	// a feasible offer of it and otherwise its furthest rejection.
	modelStates []modelState
	top         []candidate // the cheapest candidates so far, at most keep, cheapest first
	// cheapestBilled is, per way of paying (payment), the cheapest feasible candidate the
	// search costed: what the billing note and the pricing advice weigh.
	cheapestBilled [payments]*candidate
}

// plan makes the plan of one workload: its sizing, the cheapest feasible placements on the
// market, why each GPU model without one is rejected, its current placement, savings and
// caveats, and what the measured utilization of today's GPUs says.
func (p *planner) plan(w *Workload) WorkloadPlan {
	variants := p.opts.size(w)
	wp := WorkloadPlan{Name: w.Name, Kind: w.Kind, Sizing: p.sizings(w, variants), Alternatives: []Placement{}, Rejected: []Rejection{}, Caveats: []string{}, Advice: []Advice{}}
	p.search(w, variants)
	p.report(w, variants, &wp)
	p.current(w, variants, &wp)
	p.caveats(w, &wp)
	p.measured(w, &wp)
	p.advise(w, variants, &wp)
	p.ownership(w, &wp)
	return wp
}

// sizings reports each variant's sizing, with its fit on every GPU model on the market.
func (p *planner) sizings(w *Workload, variants []variant) []Sizing {
	var out []Sizing
	for i := range variants {
		s := variants[i].sizing
		s.Fits = make([]Fit, 0, len(p.market.models))
		for _, md := range p.market.models {
			s.Fits = append(s.Fits, p.opts.fit(w, &variants[i], md))
		}
		out = append(out, roundSizing(s))
	}
	return out
}

// search visits the market's classes cheapest per GPU first and keeps the cheapest
// candidates in p.top, recording in p.modelStates which GPU models had a feasible offer
// and, for the others, the rejection that got furthest.
func (p *planner) search(w *Workload, variants []variant) {
	clear(p.modelStates)
	p.top = p.top[:0]
	p.cheapestBilled = [payments]*candidate{}
	pol := policyOf(w)
	for _, c := range p.market.visitOrder {
		p.searchClass(w, variants, &pol, c)
	}
}

// searchClass costs class c at its cheapest variant that passes the class checks and walks
// its buckets of allowed providers. A class whose cheapest offer at that cost is dearer
// than every candidate kept is pruned: its model counts as feasible and no offer is
// checked.
func (p *planner) searchClass(w *Workload, variants []variant, pol *policy, c *class) {
	ms := &p.modelStates[c.modelIndex]
	best, bestVi := p.bestVariant(w, variants, c, ms)
	if bestVi < 0 {
		return
	}
	pruneClass := len(p.top) == p.keep && c.minPrice*best.offerHours > p.top[p.keep-1].floatCost+pruneMargin
	if pruneClass && ms.feasible {
		return
	}
	for bi := range c.buckets {
		b := c.buckets[bi]
		if !providerAllowed(w, b.provider) {
			if !ms.feasible {
				p.noteReject(ms, rejection{stage: stageProvider, class: c, variantIdx: bestVi, offer: b.offers[0].offer})
			}
			continue
		}
		if pruneClass {
			// Feasible by class but dearer than every candidate kept. Region and
			// availability are not checked, so such a model is never listed as rejected.
			ms.feasible = true
			return
		}
		p.searchBucket(pol, c, b, best, bestVi, ms)
	}
}

// bestVariant evaluates class c for every variant and returns the cheapest that passes the
// class checks, with its index (-1 when none does), noting the rejections of the others
// while the model has no feasible offer.
func (p *planner) bestVariant(w *Workload, variants []variant, c *class, ms *modelState) (eval, int) {
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
	return best, bestVi
}

// searchBucket walks one provider's offers of class c, cheapest first, costed as best:
// each offer that passes the per-offer checks becomes a candidate, until the offers are
// dearer than every candidate kept (or after the first, with
// Options.DistinctAlternatives, as the rest would be the same placement).
func (p *planner) searchBucket(pol *policy, c *class, b *bucket, best eval, bestVi int, ms *modelState) {
	for _, ref := range b.offers {
		cost := ref.price * best.offerHours
		if len(p.top) == p.keep && cost > p.top[p.keep-1].floatCost+pruneMargin {
			ms.feasible = true
			return
		}
		if st := offerCheck(pol, ref, best.offersRented); st != stageOK {
			if !ms.feasible {
				p.noteReject(ms, rejection{stage: st, class: c, variantIdx: bestVi, offer: ref.offer, offersNeeded: best.offersRented})
			}
			continue
		}
		ms.feasible = true
		cand := candidate{floatCost: cost, ref: ref, class: c, eval: best, variantIdx: bestVi,
			cents: monthlyCents(ref, best.offersRented, best.hoursMonth)}
		if kind := paymentOf(c.priceType); p.cheapestBilled[kind] == nil || cost < p.cheapestBilled[kind].floatCost {
			kept := cand
			p.cheapestBilled[kind] = &kept
		}
		p.insert(&cand)
		if p.opts.DistinctAlternatives {
			return
		}
	}
}

// report turns the kept candidates into the recommendation and its alternatives, and each
// GPU model without a feasible offer into a rejection with its reason. With no
// recommendation the workload's status is no_fit, with the reason.
func (p *planner) report(w *Workload, variants []variant, wp *WorkloadPlan) {
	if len(p.top) > 0 {
		wp.Status = StatusOK
		rec := p.placement(w, variants, &p.top[0])
		if note := p.billingNote(w); note != "" {
			rec.Notes = append(rec.Notes, note)
		}
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

// hasProvider reports whether any offer on the market is of the provider (in any case).
func (p *planner) hasProvider(name string) bool {
	for pr := range p.market.providers {
		if strings.EqualFold(pr, name) {
			return true
		}
	}
	return false
}

// isStale reports whether the provider (in any case) is excluded for freshness.
func (p *planner) isStale(name string) bool {
	for pr := range p.market.staleProviders {
		if strings.EqualFold(pr, name) {
			return true
		}
	}
	return false
}
