package optimizer

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
)

// explain turns the furthest rejection of a GPU model into a sentence.
func (p *planner) explain(w *Workload, variants []variant, r rejection) Rejection {
	e := p.newExplanation(w, variants, r)
	return Rejection{GPUModel: r.class.model.Name, GPUCount: e.g, Stage: r.stage.String(), Reason: p.reason(&e)}
}

// explanation is what the reason for a rejection is phrased from.
type explanation struct {
	w        *Workload
	variants []variant
	r        rejection
	c        *class   // the class rejected
	v        *variant // the variant it was rejected for
	g        int      // GPUs per offer of the class
	n        int      // the fewest GPUs that hold the variant (minGPUs)
	ok       bool     // some count of GPUs holds it
	prec     string   // " fp8" when the workload has several variants, else ""
}

// newExplanation gathers what the reasons for rejection r are phrased from.
func (p *planner) newExplanation(w *Workload, variants []variant, r rejection) explanation {
	e := explanation{w: w, variants: variants, r: r, c: r.class, v: &variants[r.variantIdx], g: r.class.gpusPerOffer}
	if len(variants) > 1 {
		e.prec = " " + string(e.v.precision)
	}
	e.n, e.ok = p.opts.minGPUs(w, e.v, e.c.vram)
	return e
}

// head names the configuration a reason is about: "H100-SXM-80GB ×8 fp8".
func (e *explanation) head(n int) string {
	return fmt.Sprintf("%s ×%d%s", e.c.model.Name, n, e.prec)
}

// reason says in one sentence why the rejection's check failed.
func (p *planner) reason(e *explanation) string {
	switch e.r.stage {
	case stageGPU, stagePrecision:
		_, why := gpuCheck(e.w, e.v, e.c.model)
		return fmt.Sprintf("%s: %s", e.head(e.g), why)
	case stageMemory:
		return p.memoryReason(e)
	case stageInterconnect:
		return p.interconnectReason(e)
	case stageMultiNode:
		return p.multiNodeReason(e)
	case stagePriceType:
		return priceTypeReason(e)
	case stageThroughput:
		intra, _ := reach(e.c.model, e.c.intraNode, max(e.n, 1))
		speed := p.decodeSpeed(e.v, e.c.model, max(e.n, 1), intra)
		return fmt.Sprintf("%s: ~%.0f tokens/s per sequence < %s needed", e.head(max(e.n, 1)), speed, trimFloat(e.w.MinDecodeTokensPerSecond))
	case stageDeadline:
		return p.deadlineReason(e)
	case stageProvider, stageHost, stageRegion, stageAvailability:
		return offerReason(e)
	}
	return ""
}

// memoryReason says why the class's GPUs do not hold the work: too little VRAM per GPU or
// in one offer, VRAM used up by what every GPU pays, or more GPUs than one node has for
// work that does not span nodes.
func (p *planner) memoryReason(e *explanation) string {
	o, w, c, g, n := p.opts, e.w, e.c, e.g, e.n
	switch {
	case w.Kind == Custom && c.vram < w.MinVRAMGBPerGPU:
		return fmt.Sprintf("%s: %s GB per GPU < %s GB needed per GPU", e.head(g), formatGB(c.vram), formatGB(w.MinVRAMGBPerGPU))
	case w.Kind == Custom && n > g && w.GPUs > g:
		return fmt.Sprintf("%s: only %d in the offer, %d needed in one node", e.head(g), g, w.GPUs)
	case w.Kind == Custom:
		return fmt.Sprintf("%s: %s GB < %s GB needed in one node", e.head(g), formatGB(float64(g)*c.vram), formatGB(w.MinTotalVRAMGB))
	case !e.ok:
		return fmt.Sprintf("%s: %s GB per GPU is used up by the %s GB every GPU needs (overhead, activations)", e.head(g), formatGB(c.vram), formatGB(e.v.perGPU))
	case w.Kind == Inference && n > o.MaxGPUsPerNode:
		return fmt.Sprintf("%s: needs %d GPUs, more than one node of %d holds; inference does not span nodes", e.head(g), n, o.MaxGPUsPerNode)
	}
	return fmt.Sprintf("%s: %s GB < %s GB needed", e.head(g), formatGB(float64(g)*c.vram), formatGB(o.neededGB(w, e.v, g)))
}

// interconnectReason says why the link inside the class's nodes does not do: no NVSwitch
// where the work asks for it, an interconnect the source does not publish, a fabric whose
// domain is smaller than the GPUs the work is split over, or no NVLink and no PCIe
// peer-to-peer.
func (p *planner) interconnectReason(e *explanation) string {
	w, c, g := e.w, e.c, e.g
	inNode := min(g, max(e.n, 1))
	if w.Kind == Inference {
		inNode = max(e.n, 1)
	}
	switch {
	case w.Kind == Custom && w.Interconnect == LinkNVSwitch && c.intraNode != schema.IntraNVSwitch:
		return fmt.Sprintf("%s: no NVSwitch (%s), the workload asks for nvswitch", e.head(g), c.intraNode)
	case c.intraNode == schema.IntraUnknown && w.Kind == Inference:
		return fmt.Sprintf("%s: interconnect not published: tensor parallelism is never planned on a link nobody vouches for", e.head(inNode))
	case c.intraNode == schema.IntraUnknown:
		return fmt.Sprintf("%s: interconnect not published, so not NVLink, and %s", e.head(g), needsLink(w))
	case c.intraNode.Linked() && inNode > c.model.NVLinkDomain:
		return fmt.Sprintf("%s: its %s joins %d GPUs, not the %d the work is split over; %s", e.head(g), c.model.Topology, c.model.NVLinkDomain, inNode, needsLink(w))
	case w.Kind == Inference && !c.model.PeerToPeer && !p.opts.InferenceTPRequiresNVLink:
		return fmt.Sprintf("%s: %s", e.head(inNode), noPeerToPeer(c.model))
	}
	return fmt.Sprintf("%s: no NVLink, %s", e.head(g), needsLink(w))
}

// multiNodeReason says why the work cannot span the nodes it needs: more than allowed, or
// no InfiniBand/RoCE between them.
func (p *planner) multiNodeReason(e *explanation) string {
	c, g := e.c, e.g
	nodes := max(ceilDiv(e.n, g), 2)
	if c.interNode.RDMA() {
		return fmt.Sprintf("%s: needs %d nodes, more than the %d allowed", e.head(g), nodes, p.opts.MaxNodes)
	}
	return fmt.Sprintf("%s: needs %d nodes (%d GPUs), and the offer has no InfiniBand/RoCE between nodes (%s)", e.head(g), nodes, e.n, c.interNode)
}

// priceTypeReason says why the class's price type does not do: spot for work that is not
// interruptible, or a commitment.
func priceTypeReason(e *explanation) string {
	c := e.c
	if c.priceType.Interruptible() {
		return fmt.Sprintf("%s: only %s offers, and the workload is not interruptible", e.head(e.g), c.priceType)
	}
	if c.priceType == schema.Serverless {
		return fmt.Sprintf("%s: only serverless offers, which take a service, not a job", e.head(e.g))
	}
	months, term := c.priceType.TermMonths()
	switch {
	case !term:
		return fmt.Sprintf("%s: only %s offers, of a term not stated (allow_commitments admits them)", e.head(e.g), c.priceType)
	case e.w.CommitUpToMonths == 0:
		return fmt.Sprintf("%s: only %s offers, a commitment of %s, and the workload takes none (commit_up_to)", e.head(e.g), c.priceType, schema.TermText(months))
	}
	return fmt.Sprintf("%s: only %s offers, a commitment of %s, longer than the workload's commit_up_to of %s", e.head(e.g), c.priceType, schema.TermText(months), schema.TermText(e.w.CommitUpToMonths))
}

// deadlineReason says how long the work takes on the class: a month's work of an inference
// batch job or custom work that does not fit in a month, or a training run longer than its
// deadline even on as many nodes as it may rent.
func (p *planner) deadlineReason(e *explanation) string {
	o, w, c, g, n := p.opts, e.w, e.c, e.g, e.n
	spot := c.priceType.Interruptible()
	switch w.Kind {
	case Inference:
		intra, _ := reach(c.model, c.intraNode, max(n, 1))
		h := p.inferenceJobHours(w, e.variants, e.r.variantIdx, c.model, g, max(n, 1), intra, spot)
		return fmt.Sprintf("%s: %s h of work a month at this throughput, more than the %s h in a month", e.head(g), trimFloat(roundHours(h)), trimFloat(o.HoursPerMonth))
	case Custom:
		intra, _ := reach(c.model, c.intraNode, min(g, max(n, 1)))
		h := p.customHours(w, c.model, g, intra, false, spot)
		return fmt.Sprintf("%s: %s h of work a month at its %s, more than the %s h in a month", e.head(g), trimFloat(roundHours(h)), w.ScaleBy, trimFloat(o.HoursPerMonth))
	}
	deadline, what := o.MaxJobHours, "longest run a plan may propose (max_job_hours)"
	if w.DeadlineHours > 0 {
		deadline, what = w.DeadlineHours, "deadline"
	}
	used := g * max(ceilDiv(n, g), 1)
	if c.interNode.RDMA() {
		used = g * o.MaxNodes
	}
	intra, _ := reach(c.model, c.intraNode, min(g, used))
	h, _ := p.trainHours(e.v, c.model, used, intra, used > min(g, o.MaxGPUsPerNode), spot)
	reason := fmt.Sprintf("%s: %s h per run > %s h %s", e.head(used), trimFloat(roundHours(h)), trimFloat(deadline), what)
	if c.interNode.RDMA() {
		return reason + fmt.Sprintf(" on %d nodes, the most allowed", o.MaxNodes)
	}
	return reason + "; more nodes need InfiniBand/RoCE"
}

// offerReason says why the offer checked last does not do: its provider, its host's tier
// or reliability, where it runs, or how many are available.
func offerReason(e *explanation) string {
	off, g := e.r.offer, e.g
	switch e.r.stage {
	case stageProvider:
		return fmt.Sprintf("%s: offered by %s, which the workload does not allow", e.head(g), off.Provider)
	case stageHost:
		pol := policyOf(e.w)
		if pol.tiers != nil && !slices.Contains(pol.tiers, off.Tier) {
			return fmt.Sprintf("%s: only on %s hosts at %s; %s", e.head(g), off.Tier, off.Provider, tierPolicy(e.w, pol.tiers))
		}
		return fmt.Sprintf("%s: host reliability %.3g at %s < %.3g (min_reliability)", e.head(g), *off.Reliability, off.Provider, pol.minReliability)
	case stageRegion:
		return fmt.Sprintf("%s: offered in %s (%s), where the workload does not run", e.head(g), location(off), off.Provider)
	}
	if off.AvailableCount != nil && *off.AvailableCount == 0 {
		return fmt.Sprintf("%s: none available at %s", e.head(g), off.Provider)
	}
	return fmt.Sprintf("%s: %d nodes needed, %d available at %s", e.head(g), e.r.offersNeeded, *off.AvailableCount, off.Provider)
}

// noFitReason summarizes why nothing on the market fits: the sizing, then the closest GPU
// models, and the offers that would have fitted but whose prices no longer hold. (Readers put
// "nothing on the market fits" before it.)
func (p *planner) noFitReason(w *Workload, variants []variant, rejected []Rejection) string {
	expired, newest := p.expiredFitting(w, variants)
	if len(p.market.classes) == 0 {
		if p.market.summary.Stale > 0 {
			return fmt.Sprintf("no offer's price holds now: %d of the %d offers on the market are older than the %s h a price holds (optimize.options.max_offer_age_hours) or past their valid_until; scrape or import again, or raise the limit",
				p.market.summary.Stale, p.market.summary.Offers, trimFloat(p.opts.MaxOfferAgeHours))
		}
		return "no offers on the market (no offers given)"
	}
	v := &variants[len(variants)-1]
	var b strings.Builder
	if w.Kind == Custom {
		fmt.Fprintf(&b, "needs %s GB per GPU and %s GB in total", formatGB(w.MinVRAMGBPerGPU), formatGB(w.MinTotalVRAMGB))
	} else {
		fmt.Fprintf(&b, "needs %s GB across GPUs plus %s GB on each GPU, at %.0f%% utilization",
			formatGB(v.sharded), formatGB(v.perGPU), p.opts.GPUMemoryUtilization*100)
	}
	if expired > 0 {
		fmt.Fprintf(&b, "; %d offers of GPU models that would fit are left out because their prices no longer hold (the newest observed %s ago; optimize.options.max_offer_age_hours is %s)",
			expired, formatAge(p.now.Sub(newest)), trimFloat(p.opts.MaxOfferAgeHours))
	}
	// The rejections that got furthest first.
	sorted := slices.Clone(rejected)
	slices.SortStableFunc(sorted, func(a, b Rejection) int { return stageOf(b.Stage) - stageOf(a.Stage) })
	for i, r := range sorted {
		if i == 3 {
			break
		}
		if i == 0 {
			b.WriteString("; closest: ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(r.Reason)
	}
	return b.String()
}

// expiredFitting counts the offers left out for age whose GPU model would hold the workload,
// with the newest observation among them.
func (p *planner) expiredFitting(w *Workload, variants []variant) (offers int, newest time.Time) {
	for name, e := range p.market.expired {
		m, _ := gpus.Lookup(name)
		for i := range variants {
			if p.opts.fit(w, &variants[i], m).Feasible {
				offers += e.offers
				if e.newest.After(newest) {
					newest = e.newest
				}
				break
			}
		}
	}
	return offers, newest
}

// trimFloat formats hours and counts with at most two decimals: 504, 1670.7, 4.49.
func trimFloat(x float64) string { return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64) }
