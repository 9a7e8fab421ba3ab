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
	p := &planner{opts: &opts, now: now, k: 1 + opts.Alternatives}
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
	p.m = buildMarket(in.Offers, now, p.opts, need)
	p.models = make([]modelState, len(p.m.models))

	plan := &Plan{
		GeneratedAt:       now,
		Options:           opts,
		Teams:             make([]TeamPlan, 0, len(in.Workloads.Teams)),
		ExcludedProviders: p.m.excluded,
		Market:            p.m.summary,
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
	opts   *Options
	now    time.Time
	m      *market
	k      int // candidates kept: 1 + alternatives
	models []modelState
	top    []candidate
}

func (p *planner) plan(w *Workload) WorkloadPlan {
	o := p.opts
	vs := o.size(w)
	wp := WorkloadPlan{Name: w.Name, Kind: w.Kind, Alternatives: []Placement{}, Rejected: []Rejection{}, Caveats: []string{}}
	for i := range vs {
		s := vs[i].sizing
		s.Fits = make([]Fit, 0, len(p.m.models))
		for _, md := range p.m.models {
			s.Fits = append(s.Fits, o.fit(w, &vs[i], md))
		}
		wp.Sizing = append(wp.Sizing, roundSizing(s))
	}

	clear(p.models)
	p.top = p.top[:0]
	pol := policyOf(w)
	allowedProvider := func(pr string) bool {
		return (len(w.Providers) == 0 || slices.Contains(w.Providers, strings.ToLower(pr))) &&
			!slices.Contains(w.ExcludeProviders, strings.ToLower(pr))
	}
	for _, c := range p.m.visit {
		ms := &p.models[c.modelIdx]
		// The cheapest variant that passes the class checks.
		best, bestVi := eval{}, -1
		for vi := range vs {
			ev, st := p.evalClass(w, vs, vi, c)
			if st == stOK {
				if bestVi < 0 || ev.f < best.f {
					best, bestVi = ev, vi
				}
				continue
			}
			if !ms.feasible {
				p.noteReject(ms, rejection{st: st, tie: rejTie(c), c: c, vi: vi})
			}
		}
		if bestVi < 0 {
			continue
		}
		pruneClass := len(p.top) == p.k && c.minPrice*best.f > p.top[p.k-1].cost+pruneMargin
		if pruneClass && ms.feasible {
			continue
		}
		for bi := range c.buckets {
			b := &c.buckets[bi]
			if !allowedProvider(b.provider) {
				if !ms.feasible {
					p.noteReject(ms, rejection{st: stProvider, c: c, vi: bestVi, off: b.offers[0].o})
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
				cost := ref.price * best.f
				if len(p.top) == p.k && cost > p.top[p.k-1].cost+pruneMargin {
					ms.feasible = true
					break
				}
				if st := offerCheck(&pol, ref, best.k); st != stOK {
					if !ms.feasible {
						p.noteReject(ms, rejection{st: st, c: c, vi: bestVi, off: ref.o, extra: best.k})
					}
					continue
				}
				ms.feasible = true
				cand := candidate{cost: cost, off: ref, c: c, ev: best, vi: bestVi}
				p.insert(&cand)
				if o.DistinctAlternatives {
					break
				}
			}
		}
	}

	if len(p.top) > 0 {
		wp.Status = StatusOK
		rec := p.placement(w, vs, &p.top[0])
		wp.Recommended = &rec
		for i := 1; i < len(p.top); i++ {
			wp.Alternatives = append(wp.Alternatives, p.placement(w, vs, &p.top[i]))
		}
	}
	for i := range p.models {
		ms := &p.models[i]
		if ms.feasible || ms.rej.st == stNone {
			continue
		}
		wp.Rejected = append(wp.Rejected, p.explain(w, vs, ms.rej))
	}
	if wp.Recommended == nil {
		wp.Status = StatusNoFit
		wp.Reason = p.noFitReason(w, vs, wp.Rejected)
	}
	p.current(w, vs, &wp)
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
	for pr := range p.m.providers {
		if strings.EqualFold(pr, name) {
			return true
		}
	}
	return false
}

func (p *planner) isStale(name string) bool {
	for pr := range p.m.stale {
		if strings.EqualFold(pr, name) {
			return true
		}
	}
	return false
}
