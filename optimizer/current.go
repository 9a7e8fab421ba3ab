package optimizer

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
	"github.com/shopspring/decimal"
)

// currentPlacement is a workload's placement today while it is priced and costed.
type currentPlacement struct {
	w        *Workload
	cur      *Current
	model    gpus.Model // the catalog model it runs on
	nodeGPUs int        // GPUs in each of its nodes
	// match is the offer it is priced from at today's market, nil when none matches.
	match *schema.Offer
	pl    *Placement // what the plan reports, filled step by step
}

// current prices the workload's current placement at today's market (or the price paid),
// costs it with the same model on the node shape it runs on, and fills the savings.
func (p *planner) current(w *Workload, variants []variant, wp *WorkloadPlan) {
	cur := w.Current
	if cur == nil {
		return
	}
	c := &currentPlacement{w: w, cur: cur, nodeGPUs: min(cur.GPUCount, p.opts.MaxGPUsPerNode)}
	c.pl = p.newCurrentPlacement(c)
	wp.Current = c.pl
	model, ok := gpus.Lookup(cur.GPUModel)
	if !ok {
		wp.Caveats = append(wp.Caveats, "current placement not priced: "+unknownGPU(cur.GPUModel)+"; its memory and speed are not known")
		return
	}
	c.model = model
	c.match = p.matchingOffer(c)
	p.priceCurrent(c, wp)
	intra := c.fabric()
	hoursMonth, speed, replicas := p.costCurrent(c, variants, intra, wp)
	c.pl.HoursPerMonth = decimal.NewFromFloat(p.billed(w, cur.PriceType, hoursMonth))
	if c.pl.PriceSource == PriceNone {
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement not priced: no %s %s %s offer today and no paid price given", cur.Provider, model.Name, cur.PriceType))
		return
	}
	c.pl.CostUSDPerMonth = c.pl.PriceUSDPerHour.Mul(c.pl.HoursPerMonth).Round(2)
	p.runCost(w, c.pl)
	c.pl.UnitCost = p.unitCost(w, c.pl, speed, replicas)
	fillSavings(wp)
}

// newCurrentPlacement is the placement as the workload states it, not priced yet, on nodes
// of at most Options.MaxGPUsPerNode GPUs whose links are not known.
func (p *planner) newCurrentPlacement(c *currentPlacement) *Placement {
	cur := c.cur
	return &Placement{
		Provider:    cur.Provider,
		Region:      cur.Region,
		GPUModel:    cur.GPUModel,
		GPUCount:    cur.GPUCount,
		GPUsPerNode: c.nodeGPUs,
		Nodes:       ceilDiv(cur.GPUCount, p.opts.MaxGPUsPerNode),
		PriceType:   cur.PriceType,
		IntraNode:   schema.IntraUnknown,
		InterNode:   schema.InterUnknown,
		PriceSource: PriceNone,
		Notes:       []string{},
	}
}

// offerShape says how an offer's size matches a current placement, best first.
type offerShape int

// Offer shapes, best first.
const (
	shapeOwn   offerShape = iota // as many GPUs as the placement
	shapeNode                    // as many GPUs as one of its nodes
	shapeOther                   // any other count
)

// shape is how an offer's GPU count matches the current placement.
func (c *currentPlacement) shape(off *schema.Offer) offerShape {
	switch int(off.GPUCount) {
	case c.cur.GPUCount:
		return shapeOwn
	case c.nodeGPUs:
		return shapeNode
	}
	return shapeOther
}

// matchingOffer is the offer today's placement is priced from: the cheapest per GPU of its
// provider, model and price type (and region, when it names one), of the placement's own
// shape when there is one, else of its node's, else of any; nil when the market has none.
func (p *planner) matchingOffer(c *currentPlacement) *schema.Offer {
	cur := c.cur
	var match *schema.Offer
	for _, off := range p.market.currentOffers(currentKey{cur.Provider, c.model.Name, cur.PriceType}) {
		if cur.Region != "" && !strings.EqualFold(cur.Region, off.Region) {
			continue
		}
		if match == nil || c.shape(off) < c.shape(match) {
			match = off
		}
	}
	return match
}

// priceCurrent prices the placement at the matching offer's price per GPU, with a caveat
// when that price no longer holds, and then at the price the team pays when it gives one
// (keeping the market price beside it).
func (p *planner) priceCurrent(c *currentPlacement, wp *WorkloadPlan) {
	cur, pl, match := c.cur, c.pl, c.match
	count := decimal.NewFromInt(int64(cur.GPUCount))
	if match != nil {
		market := perGPUPrice(match)
		pl.PriceUSDPerGPUHour = market
		pl.PriceUSDPerHour = market.Mul(count)
		pl.PriceSource = PriceMarket
		pl.OfferID, pl.Tier, pl.ObservedAt = match.OfferID, match.Tier, match.ObservedAt
		if pl.Region == "" {
			pl.Region = match.Region
		}
		p.cautionExpiredMatch(c, wp)
		pl.MarketUSDPerGPUHour = &market
	}
	switch {
	case cur.PaidUSDPerGPUHour != nil:
		pl.PriceUSDPerGPUHour = *cur.PaidUSDPerGPUHour
		pl.PriceUSDPerHour = cur.PaidUSDPerGPUHour.Mul(count)
		pl.PriceSource = PricePaid
	case cur.PaidUSDPerHour != nil:
		pl.PriceUSDPerHour = *cur.PaidUSDPerHour
		pl.PriceUSDPerGPUHour = cur.PaidUSDPerHour.DivRound(count, schema.PriceDecimals)
		pl.PriceSource = PricePaid
	default:
		pl.MarketUSDPerGPUHour = nil // it is the price itself
	}
}

// cautionExpiredMatch adds a caveat when the matching offer's price no longer holds: the
// current placement is priced from every catalog offer, stale ones too.
func (p *planner) cautionExpiredMatch(c *currentPlacement, wp *WorkloadPlan) {
	match := c.match
	switch {
	case match.Holds(p.now, p.market.maxAge):
	case match.ValidUntil != nil:
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement priced from a %s price that held until %s (its valid_until)",
			c.cur.Provider, match.ValidUntil.UTC().Format("2006-01-02 15:04 UTC")))
	default:
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement priced from a %s price observed %s ago, which no longer holds (max_offer_age_hours %s)",
			c.cur.Provider, formatAge(p.now.Sub(match.ObservedAt)), trimFloat(p.opts.MaxOfferAgeHours)))
	}
}

// fabric sets and returns the links of the nodes the placement runs on: inside a node the
// fabric the matching offer of its own or its node's shape publishes, else the one the
// model's board carries, else PCIe; InfiniBand between nodes, since it runs across them
// today, unless the matching offer names its RDMA.
func (c *currentPlacement) fabric() schema.IntraNode {
	pl, match := c.pl, c.match
	intra := schema.IntraPCIe
	switch {
	case c.nodeGPUs == 1:
	case match != nil && c.shape(match) < shapeOther && match.IntraNode != schema.IntraUnknown && match.IntraNode != "":
		intra = match.IntraNode
	case c.model.BoardFabric:
		intra = c.model.BoardIntraNode()
	default:
		pl.Notes = append(pl.Notes, "intra-node link of today's nodes not known: PCIe assumed")
	}
	pl.IntraNode = intra
	if pl.Nodes > 1 {
		pl.InterNode = schema.InterInfiniBand
		switch {
		case match != nil && match.InterNode.RDMA():
			pl.InterNode = match.InterNode
		default:
			pl.Notes = append(pl.Notes, fmt.Sprintf("runs on %d nodes today: InfiniBand between them assumed", pl.Nodes))
		}
	} else if match != nil && c.shape(match) == shapeOwn {
		pl.InterNode = match.InterNode
	}
	return intra
}

// costCurrent costs today's placement with the model the offers are costed with, on its
// nodes' fabric intra: it returns the hours billed a month, and the decode speed and
// replicas a unit of inference is priced with.
func (p *planner) costCurrent(c *currentPlacement, variants []variant, intra schema.IntraNode, wp *WorkloadPlan) (hoursMonth, speed float64, replicas int) {
	w, model := c.w, c.model
	vi, v := p.currentVariant(c, variants, wp)
	spot := c.cur.PriceType.Interruptible()
	switch {
	case w.Kind.Training():
		return p.currentRunHours(c, &v, intra, spot, wp), 0, 1
	case w.Kind == Inference:
		return p.currentServingHours(c, variants, vi, &v, intra, spot)
	case w.ReferenceGPU != "":
		if err := scaleByPrecision(w, model); err != nil {
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("today's %s has %v (the work scales by its %s rate): costed at its %s rate", model.Name, err, w.ScaleBy, model.RunsAt(Precision(w.ScaleBy))))
		}
		linkedIntra, _ := reach(model, intra, shardGroup(p.opts, w, &v, model, c.nodeGPUs))
		return roundHours(p.customHours(w, model, c.cur.GPUCount, linkedIntra, c.pl.Nodes > 1, spot)), 0, 1
	}
	return roundHours(p.hoursPerMonth(w)), 0, 1
}

// currentVariant chooses the variant today's GPUs are costed at: the preferred precision
// they compute and hold, else the first they compute, on one offer of all its GPUs. It
// returns its index and a copy, costed at the rate the GPU runs it at (gpus.Model.RunsAt) when the GPUs
// compute none of the precisions; caveats say so, and when the workload does not fit.
func (p *planner) currentVariant(c *currentPlacement, variants []variant, wp *WorkloadPlan) (int, variant) {
	w, model, cur := c.w, c.model, c.cur
	vi, fits := -1, false
	for i := range variants {
		if variants[i].precision != "" && model.Computes(variants[i].precision) != nil {
			continue
		}
		if vi < 0 {
			vi = i
		}
		if n, ok := p.opts.minGPUs(w, &variants[i], model.VRAMGB); ok && n <= cur.GPUCount {
			vi, fits = i, true
			break
		}
	}
	computes := vi >= 0
	vi = max(vi, 0)
	v := variants[vi]
	c.pl.Precision = v.precision
	if !computes {
		why := model.Computes(v.precision)
		v.precision = model.RunsAt(v.precision)
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("today's %s has %v (%s): costed at its %s rate", model.Name, why, precisionUse(w, variants[vi].precision), v.precision))
	}
	if !fits {
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement does not fit by this sizing: %d× %s has %s GB, %s GB needed",
			cur.GPUCount, model.Name, formatGB(float64(cur.GPUCount)*model.VRAMGB), formatGB(p.opts.neededGB(w, &v, cur.GPUCount))))
	}
	return vi, v
}

// currentRunHours is a training job's hours a month today: its runs × the hours of one run
// on all its GPUs, the state sharded over as many of a node's GPUs as hold it. It fills the
// hours and cost of a run, with a caveat when a run misses the deadline.
func (p *planner) currentRunHours(c *currentPlacement, v *variant, intra schema.IntraNode, spot bool, wp *WorkloadPlan) float64 {
	w, pl := c.w, c.pl
	linkedIntra, _ := reach(c.model, intra, shardGroup(p.opts, w, v, c.model, c.nodeGPUs))
	h, _ := p.trainHours(v, c.model, c.cur.GPUCount, linkedIntra, pl.Nodes > 1, spot)
	hr := max(roundHours(h), 0.01)
	hd := decimal.NewFromFloat(hr)
	pl.HoursPerRun = &hd
	if w.DeadlineHours > 0 && hr > w.DeadlineHours {
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("the current placement takes %s h per run, more than the %s h deadline", trimFloat(hr), trimFloat(w.DeadlineHours)))
	}
	return roundHours(hr * p.runs(w))
}

// currentServingHours is inference's hours a month today, with its decode speed and
// replicas: tensor parallelism over the fewest of its GPUs that hold the model (all of them
// when none do), the rest replicas; a batch job's hours scale from its reference GPU.
func (p *planner) currentServingHours(c *currentPlacement, variants []variant, vi int, v *variant, intra schema.IntraNode, spot bool) (hoursMonth, speed float64, replicas int) {
	w, model, cur := c.w, c.model, c.cur
	tp := cur.GPUCount
	if n, ok := p.opts.minGPUs(w, v, model.VRAMGB); ok && n <= cur.GPUCount {
		tp = n
	}
	replicas = max(cur.GPUCount/tp, 1)
	tpIntra, _ := reach(model, intra, tp)
	speed = p.decodeSpeed(v, model, tp, tpIntra)
	c.pl.DecodeTokensPerSecond = math.Round(speed*10) / 10
	hoursMonth = p.hoursPerMonth(w)
	if w.ReferenceGPU != "" {
		hoursMonth = p.inferenceJobHours(w, variants, vi, model, cur.GPUCount, tp, tpIntra, spot)
	}
	return roundHours(hoursMonth), speed, replicas
}

// fillSavings compares the priced current placement with the recommended one, with a caveat
// when today's costs less.
func fillSavings(wp *WorkloadPlan) {
	if wp.Recommended == nil {
		return
	}
	cost := wp.Current.CostUSDPerMonth
	s := &Savings{USDPerMonth: cost.Sub(wp.Recommended.CostUSDPerMonth)}
	s.Percent = percent(s.USDPerMonth, cost)
	wp.Savings = s
	if s.USDPerMonth.IsNegative() {
		wp.Caveats = append(wp.Caveats, "the current placement costs less than any feasible offer (a paid price below market, or it breaks a constraint or the sizing)")
	}
}
