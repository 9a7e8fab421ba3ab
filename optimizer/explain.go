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
	o := p.opts
	c, v := r.class, &variants[r.variantIdx]
	g := c.gpusPerOffer
	prec := ""
	if len(variants) > 1 {
		prec = " " + string(v.precision)
	}
	head := func(n int) string { return fmt.Sprintf("%s ×%d%s", c.model.Name, n, prec) }
	out := Rejection{GPUModel: c.model.Name, GPUCount: g, Stage: r.stage.String()}
	n, ok := o.minGPUs(w, v, c.vram)
	switch r.stage {
	case stageGPU, stagePrecision:
		_, why := gpuCheck(w, v, c.model)
		out.Reason = fmt.Sprintf("%s: %s", head(g), why)
	case stageMemory:
		switch {
		case w.Kind == Custom && c.vram < w.MinVRAMGBPerGPU:
			out.Reason = fmt.Sprintf("%s: %s GB per GPU < %s GB needed per GPU", head(g), formatGB(c.vram), formatGB(w.MinVRAMGBPerGPU))
		case w.Kind == Custom && n > g && w.GPUs > g:
			out.Reason = fmt.Sprintf("%s: only %d in the offer, %d needed in one node", head(g), g, w.GPUs)
		case w.Kind == Custom:
			out.Reason = fmt.Sprintf("%s: %s GB < %s GB needed in one node", head(g), formatGB(float64(g)*c.vram), formatGB(w.MinTotalVRAMGB))
		case !ok:
			out.Reason = fmt.Sprintf("%s: %s GB per GPU is used up by the %s GB every GPU needs (overhead, activations)", head(g), formatGB(c.vram), formatGB(v.perGPU))
		case w.Kind == Inference && n > o.MaxGPUsPerNode:
			out.Reason = fmt.Sprintf("%s: needs %d GPUs, more than one node of %d holds; inference does not span nodes", head(g), n, o.MaxGPUsPerNode)
		default:
			out.Reason = fmt.Sprintf("%s: %s GB < %s GB needed", head(g), formatGB(float64(g)*c.vram), formatGB(o.neededGB(w, v, g)))
		}
	case stageInterconnect:
		inNode := min(g, max(n, 1))
		if w.Kind == Inference {
			inNode = max(n, 1)
		}
		switch {
		case w.Kind == Custom && w.Interconnect == LinkNVSwitch && c.intraNode != schema.IntraNVSwitch:
			out.Reason = fmt.Sprintf("%s: no NVSwitch (%s), the workload asks for nvswitch", head(g), c.intraNode)
		case c.intraNode == schema.IntraUnknown && w.Kind == Inference:
			out.Reason = fmt.Sprintf("%s: interconnect not published: tensor parallelism is never planned on a link nobody vouches for", head(inNode))
		case c.intraNode == schema.IntraUnknown:
			out.Reason = fmt.Sprintf("%s: interconnect not published, so not NVLink, and %s", head(g), needsLink(w))
		case c.intraNode.Linked() && inNode > c.model.NVLinkDomain:
			out.Reason = fmt.Sprintf("%s: its %s joins %d GPUs, not the %d the work is split over; %s", head(g), c.model.Topology, c.model.NVLinkDomain, inNode, needsLink(w))
		case w.Kind == Inference && !c.model.PeerToPeer && !o.InferenceTPRequiresNVLink:
			out.Reason = fmt.Sprintf("%s: %s", head(inNode), noPeerToPeer(c.model))
		default:
			out.Reason = fmt.Sprintf("%s: no NVLink, %s", head(g), needsLink(w))
		}
	case stageMultiNode:
		k := max(ceilDiv(n, g), 2)
		if c.interNode.RDMA() {
			out.Reason = fmt.Sprintf("%s: needs %d nodes, more than the %d allowed", head(g), k, o.MaxNodes)
		} else {
			out.Reason = fmt.Sprintf("%s: needs %d nodes (%d GPUs), and the offer has no InfiniBand/RoCE between nodes (%s)", head(g), k, n, c.interNode)
		}
	case stagePriceType:
		if c.priceType.Interruptible() {
			out.Reason = fmt.Sprintf("%s: only %s offers, and the workload is not interruptible", head(g), c.priceType)
		} else {
			out.Reason = fmt.Sprintf("%s: only %s offers, which need a commitment", head(g), c.priceType)
		}
	case stageThroughput:
		intra, _ := reach(c.model, c.intraNode, max(n, 1))
		speed := p.decodeSpeed(v, c.model, max(n, 1), intra)
		out.Reason = fmt.Sprintf("%s: ~%.0f tokens/s per sequence < %s needed", head(max(n, 1)), speed, trimFloat(w.MinDecodeTokensPerSecond))
	case stageDeadline:
		spot := c.priceType.Interruptible()
		switch w.Kind {
		case Inference:
			intra, _ := reach(c.model, c.intraNode, max(n, 1))
			h := p.inferenceJobHours(w, variants, r.variantIdx, c.model, g, max(n, 1), intra, spot)
			out.Reason = fmt.Sprintf("%s: %s h of work a month at this throughput, more than the %s h in a month", head(g), trimFloat(roundHours(h)), trimFloat(o.HoursPerMonth))
			return out
		case Custom:
			intra, _ := reach(c.model, c.intraNode, min(g, max(n, 1)))
			h := p.customHours(w, c.model, g, intra, false, spot)
			out.Reason = fmt.Sprintf("%s: %s h of work a month at its %s, more than the %s h in a month", head(g), trimFloat(roundHours(h)), w.ScaleBy, trimFloat(o.HoursPerMonth))
			return out
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
		h, _ := p.trainHours(v, c.model, used, intra, used > min(g, o.MaxGPUsPerNode), spot)
		out.Reason = fmt.Sprintf("%s: %s h per run > %s h %s", head(used), trimFloat(roundHours(h)), trimFloat(deadline), what)
		if c.interNode.RDMA() {
			out.Reason += fmt.Sprintf(" on %d nodes, the most allowed", o.MaxNodes)
		} else {
			out.Reason += "; more nodes need InfiniBand/RoCE"
		}
	case stageProvider:
		out.Reason = fmt.Sprintf("%s: offered by %s, which the workload does not allow", head(g), r.offer.Provider)
	case stageHost:
		pol := policyOf(w)
		switch {
		case pol.tiers != nil && !slices.Contains(pol.tiers, r.offer.Tier):
			out.Reason = fmt.Sprintf("%s: only on %s hosts at %s; %s", head(g), r.offer.Tier, r.offer.Provider, tierPolicy(w, pol.tiers))
		default:
			out.Reason = fmt.Sprintf("%s: host reliability %.3g at %s < %.3g (min_reliability)", head(g), *r.offer.Reliability, r.offer.Provider, pol.minReliability)
		}
	case stageRegion:
		out.Reason = fmt.Sprintf("%s: offered in %s (%s), where the workload does not run", head(g), location(r.offer), r.offer.Provider)
	case stageAvailability:
		if r.offer.AvailableCount != nil && *r.offer.AvailableCount == 0 {
			out.Reason = fmt.Sprintf("%s: none available at %s", head(g), r.offer.Provider)
		} else {
			out.Reason = fmt.Sprintf("%s: %d nodes needed, %d available at %s", head(g), r.offersNeeded, *r.offer.AvailableCount, r.offer.Provider)
		}
	}
	return out
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
			formatGB(v.sharded), formatGB(v.perGPU), p.opts.Utilization*100)
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
