package optimizer

import (
	"fmt"
	"math"
	"strings"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/schema"
	"github.com/shopspring/decimal"
)

// current prices the workload's current placement at today's market (or the price paid),
// costs it with the same model on the node shape it runs on, and fills the savings.
func (p *planner) current(w *Workload, variants []variant, wp *WorkloadPlan) {
	cur := w.Current
	if cur == nil {
		return
	}
	o := p.opts
	nodeGPUs := min(cur.GPUCount, o.MaxGPUsPerNode)
	pl := Placement{
		Provider:    cur.Provider,
		Region:      cur.Region,
		GPUModel:    cur.GPUModel,
		GPUCount:    cur.GPUCount,
		GPUsPerNode: nodeGPUs,
		Nodes:       ceilDiv(cur.GPUCount, o.MaxGPUsPerNode),
		PriceType:   cur.PriceType,
		IntraNode:   schema.IntraUnknown,
		InterNode:   schema.InterUnknown,
		PriceSource: PriceNone,
		Notes:       []string{},
	}
	wp.Current = &pl
	model, ok := gpus.Lookup(cur.GPUModel)
	if !ok {
		wp.Caveats = append(wp.Caveats, "current placement not priced: "+unknownGPU(cur.GPUModel)+"; its memory and speed are not known")
		return
	}
	// The offer it is priced from: the cheapest per GPU of the provider, model and price type
	// (and region), of the placement's own shape when there is one, else of its node's.
	shape := func(off *schema.Offer) int {
		switch int(off.GPUCount) {
		case cur.GPUCount:
			return 0
		case nodeGPUs:
			return 1
		}
		return 2
	}
	var match *schema.Offer
	for _, off := range p.market.currentOffers(currentKey{cur.Provider, model.Name, cur.PriceType}) {
		if cur.Region != "" && !strings.EqualFold(cur.Region, off.Region) {
			continue
		}
		if match == nil || shape(off) < shape(match) {
			match = off
		}
	}
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
		switch {
		case match.Holds(p.now, p.market.maxAge):
		case match.ValidUntil != nil:
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement priced from a %s price that held until %s (its valid_until)",
				cur.Provider, match.ValidUntil.UTC().Format("2006-01-02 15:04 UTC")))
		default:
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement priced from a %s price observed %s ago, which no longer holds (max_offer_age_hours %s)",
				cur.Provider, formatAge(p.now.Sub(match.ObservedAt)), trimFloat(o.MaxOfferAgeHours)))
		}
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

	// The node it runs on: the fabric the matching node offer publishes, else the one the
	// model's board carries; InfiniBand between nodes, since it runs across them today.
	intra := schema.IntraPCIe
	switch {
	case nodeGPUs == 1:
	case match != nil && shape(match) < 2 && match.IntraNode != schema.IntraUnknown && match.IntraNode != "":
		intra = match.IntraNode
	case model.BoardFabric:
		intra = model.BoardIntraNode()
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
	} else if match != nil && shape(match) == 0 {
		pl.InterNode = match.InterNode
	}

	// Cost it: the preferred precision the GPUs compute and hold, else the first they
	// compute, on one offer of all its GPUs.
	vi, fits := -1, false
	for i := range variants {
		if variants[i].precision != "" && model.Computes(variants[i].precision) != nil {
			continue
		}
		if vi < 0 {
			vi = i
		}
		if n, ok := o.minGPUs(w, &variants[i], model.VRAMGB); ok && n <= cur.GPUCount {
			vi, fits = i, true
			break
		}
	}
	computes := vi >= 0
	vi = max(vi, 0)
	v := variants[vi]
	pl.Precision = v.precision
	if !computes {
		why := model.Computes(v.precision)
		v.precision = bestPrecision(model, v.precision)
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("today's %s has %v (%s): costed at its %s rate", model.Name, why, precisionUse(w, variants[vi].precision), v.precision))
	}
	if !fits {
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement does not fit by this sizing: %d× %s has %s GB, %s GB needed",
			cur.GPUCount, model.Name, formatGB(float64(cur.GPUCount)*model.VRAMGB), formatGB(o.neededGB(w, &v, cur.GPUCount))))
	}
	spot := cur.PriceType.Interruptible()
	var hoursMonth, speed float64
	replicas := 1
	switch {
	case w.Kind.Training():
		linkedIntra, _ := reach(model, intra, shardGroup(o, w, &v, model, nodeGPUs))
		h, _ := p.trainHours(&v, model, cur.GPUCount, linkedIntra, pl.Nodes > 1, spot)
		hr := max(roundHours(h), 0.01)
		hd := decimal.NewFromFloat(hr)
		pl.HoursPerRun = &hd
		if w.DeadlineHours > 0 && hr > w.DeadlineHours {
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("the current placement takes %s h per run, more than the %s h deadline", trimFloat(hr), trimFloat(w.DeadlineHours)))
		}
		hoursMonth = roundHours(hr * p.runs(w))
		if pl.PriceSource != PriceNone {
			run := pl.PriceUSDPerHour.Mul(hd).Round(2)
			pl.CostUSDPerRun = &run
		}
	case w.Kind == Inference:
		tp := cur.GPUCount
		if n, ok := o.minGPUs(w, &v, model.VRAMGB); ok && n <= cur.GPUCount {
			tp = n
		}
		replicas = max(cur.GPUCount/tp, 1)
		tpIntra, _ := reach(model, intra, tp)
		speed = p.decodeSpeed(&v, model, tp, tpIntra)
		pl.DecodeTokensPerSecond = math.Round(speed*10) / 10
		hoursMonth = p.hoursPerMonth(w)
		if w.ReferenceGPU != "" {
			hoursMonth = p.inferenceJobHours(w, variants, vi, model, cur.GPUCount, tp, tpIntra, spot)
		}
		hoursMonth = roundHours(hoursMonth)
	case w.ReferenceGPU != "":
		if err := scaleByPrecision(w, model); err != nil {
			wp.Caveats = append(wp.Caveats, fmt.Sprintf("today's %s has %v (the work scales by its %s rate): costed at its %s rate", model.Name, err, w.ScaleBy, bestPrecision(model, Precision(w.ScaleBy))))
		}
		linkedIntra, _ := reach(model, intra, shardGroup(o, w, &v, model, nodeGPUs))
		hoursMonth = roundHours(p.customHours(w, model, cur.GPUCount, linkedIntra, pl.Nodes > 1, spot))
	default:
		hoursMonth = roundHours(p.hoursPerMonth(w))
	}
	pl.HoursPerMonth = decimal.NewFromFloat(hoursMonth)
	if pl.PriceSource == PriceNone {
		wp.Caveats = append(wp.Caveats, fmt.Sprintf("current placement not priced: no %s %s %s offer today and no paid price given", cur.Provider, model.Name, cur.PriceType))
		return
	}
	pl.CostUSDPerMonth = pl.PriceUSDPerHour.Mul(pl.HoursPerMonth).Round(2)
	pl.UnitCost = p.unitCost(w, &pl, speed, replicas)
	if wp.Recommended != nil {
		s := &Savings{USDPerMonth: pl.CostUSDPerMonth.Sub(wp.Recommended.CostUSDPerMonth)}
		s.Percent = percent(s.USDPerMonth, pl.CostUSDPerMonth)
		wp.Savings = s
		if s.USDPerMonth.IsNegative() {
			wp.Caveats = append(wp.Caveats, "the current placement costs less than any feasible offer (a paid price below market, or it breaks a constraint or the sizing)")
		}
	}
}
