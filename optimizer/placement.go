package optimizer

import (
	"fmt"
	"math"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/schema"
)

// placement renders a kept candidate.
func (p *planner) placement(w *Workload, variants []variant, cand *candidate) Placement {
	o := p.opts
	off, c, ev := cand.ref.offer, cand.class, cand.eval
	k := decimal.NewFromInt(int64(ev.offersRented))
	price := off.PriceUSDPerHour.Mul(k)
	pl := Placement{
		Provider:           off.Provider,
		Region:             off.Region,
		OfferID:            off.OfferID,
		Tier:               off.Tier,
		GPUModel:           c.model.Name,
		GPUCount:           c.gpusPerOffer * ev.offersRented,
		GPUsPerNode:        min(c.gpusPerOffer, o.MaxGPUsPerNode),
		Nodes:              ev.nodes,
		PriceType:          c.priceType,
		Precision:          variants[cand.variantIdx].precision,
		IntraNode:          c.intraNode,
		InterNode:          c.interNode,
		PriceUSDPerHour:    price,
		PriceUSDPerGPUHour: price.DivRound(decimal.NewFromInt(int64(c.gpusPerOffer*ev.offersRented)), schema.PriceDecimals),
		PriceSource:        PriceMarket,
		HoursPerMonth:      decimal.New(int64(math.Round(ev.hoursMonth*100)), -2),
		CostUSDPerMonth:    decimal.New(cand.cents, -2),
		ObservedAt:         off.ObservedAt,
		Notes:              []string{},
	}
	if w.Kind == Inference {
		pl.DecodeTokensPerSecond = math.Round(ev.decodeSpeed*10) / 10
	}
	if ev.hoursRun > 0 {
		h := decimal.NewFromFloat(ev.hoursRun)
		pl.HoursPerRun = &h
		p.runCost(w, &pl)
	}
	pl.UnitCost = p.unitCost(w, &pl, ev.decodeSpeed, max(c.gpusPerOffer/max(ev.tensorParallel, 1), 1))
	pl.Notes = p.notes(w, variants, cand.variantIdx, c, ev, cand.ref)
	if months, ok := c.priceType.TermMonths(); ok {
		pl.Notes = append(pl.Notes, fmt.Sprintf("%s: a commitment of %s, billed every hour of it (%s a month): %s for the term",
			c.priceType, schema.TermText(months), money.USD(pl.CostUSDPerMonth), money.USD(pl.CostUSDPerMonth.Mul(decimal.NewFromFloat(months)))))
	}
	return pl
}

// runCost sets the cost of one run of a job placed at pl (its HoursPerRun set): the run's
// hours at the price, or on a commitment, which bills the whole month, the month's cost over
// its runs.
func (p *planner) runCost(w *Workload, pl *Placement) {
	if pl.HoursPerRun == nil {
		return
	}
	run := pl.PriceUSDPerHour.Mul(*pl.HoursPerRun).Round(2)
	if pl.PriceType.Committed() {
		run = pl.CostUSDPerMonth.Div(decimal.NewFromFloat(p.runs(w))).Round(2)
	}
	pl.CostUSDPerRun = &run
}

// unitCost prices one unit of the workload's finished work on a placement: a million output
// tokens at the planned concurrency (inference; replicas × concurrency × decode speed, in the
// busy hours: a service's hours billed and idle are paid for by the tokens of its busy ones), a
// run (training), a unit of custom work or an hour of it on the reference GPUs. Nil when the
// workload says too little to count its work.
func (p *planner) unitCost(w *Workload, pl *Placement, speed float64, replicas int) *UnitCost {
	switch {
	case w.Kind == Inference && w.Concurrency > 0 && speed > 0:
		perHour := speed * float64(w.Concurrency) * float64(replicas) * 3600
		usd := pl.PriceUSDPerHour.Mul(decimal.NewFromInt(1_000_000)).Div(decimal.NewFromFloat(perHour))
		if w.service() {
			// Billed hours per busy hour: 1 for an instance busy whenever it is up. A service
			// measured idle makes no tokens to price.
			busy := decimal.NewFromFloat(w.busy() * p.hoursPerMonth(w))
			if !busy.IsPositive() {
				return nil
			}
			if billed := pl.HoursPerMonth; !billed.Equal(busy) {
				usd = usd.Mul(billed).Div(busy)
			}
		}
		return &UnitCost{Unit: "1M output tokens", USD: usd.Round(6)}
	case w.Kind.Training() && pl.CostUSDPerRun != nil:
		return &UnitCost{Unit: "run", USD: *pl.CostUSDPerRun}
	case w.Kind == Custom && w.UnitsPerMonth > 0:
		unit := w.Unit
		if unit == "" {
			unit = "unit"
		}
		return &UnitCost{Unit: unit, USD: pl.CostUSDPerMonth.Div(decimal.NewFromFloat(w.UnitsPerMonth)).Round(6)}
	case w.Kind == Custom && w.ReferenceGPU != "" && w.HoursPerMonth > 0:
		nRef := w.ReferenceGPUs
		if nRef == 0 {
			nRef = max(w.GPUs, 1)
		}
		return &UnitCost{Unit: fmt.Sprintf("hour of work on %d× %s", nRef, w.ReferenceGPU),
			USD: pl.CostUSDPerMonth.Div(decimal.NewFromFloat(w.HoursPerMonth)).Round(6)}
	}
	return nil
}

// payment is a way of paying for GPUs, as the billing note and the pricing advice weigh them.
type payment int

// Ways of paying: an instance rented by the hour, a serverless deployment billed for its busy
// hours, a commitment (a term or reservation) billed every hour of the month.
const (
	payInstance payment = iota
	payServerless
	payCommitted
	payments // how many ways there are
)

// paymentOf is the way an offer of price type pt is paid.
func paymentOf(pt schema.PriceType) payment {
	switch {
	case pt == schema.Serverless:
		return payServerless
	case pt.Committed():
		return payCommitted
	}
	return payInstance
}

// cheapestPersistent is the cheaper of the cheapest instance and the cheapest commitment the
// search costed: the cheapest placement billed every hour it is up; nil when there is none.
func (p *planner) cheapestPersistent() *candidate {
	inst, term := p.cheapestBilled[payInstance], p.cheapestBilled[payCommitted]
	if inst == nil || (term != nil && term.floatCost < inst.floatCost) {
		return term
	}
	return inst
}

// billingNote weighs the two ways of paying for a service's GPUs, each at the cheapest
// feasible placement the search costed: an instance, billed every hour it is up, and a
// serverless deployment, billed for its busy hours and cold starts. It says where the
// break-even utilization lies and where the workload is; "" for a job, or when the search
// found a feasible placement of one kind only (the other is dearer than every one kept, or
// not on the market).
func (p *planner) billingNote(w *Workload) string {
	at, srv, inst, ok := p.serverlessBreakEven(w)
	if !ok {
		return ""
	}
	return fmt.Sprintf("serverless (%s, busy hours and cold starts) against an instance (%s, every hour): %s", describe(srv), describe(inst), breakEvenVerdict(w, at))
}

// breakEvenVerdict says in words where the break-even utilization at lies and where service w
// is: "serverless is cheaper below 68% utilization; this workload: 20% busy".
func breakEvenVerdict(w *Workload, at float64) string {
	workload := fmt.Sprintf("this workload: %.0f%% busy", w.busy()*100)
	switch {
	case w.Utilization > 0:
	case w.Measured != nil:
		workload += " (measured)"
	default:
		workload = "this workload: busy whenever it is up (set utilization if it is not)"
	}
	switch {
	case at <= 0:
		return "serverless costs more at any utilization (its minimum billing); " + workload
	case at >= 1:
		return "serverless costs less at any utilization; " + workload
	}
	return fmt.Sprintf("serverless is cheaper below %.0f%% utilization; %s", at*100, workload)
}

// serverlessBreakEven is the utilization below which the cheapest feasible serverless
// placement the search costed for a service (srv) costs less than the cheapest feasible one
// billed every hour it is up (inst: an instance or a commitment), 0 at none and 1 at any. ok is
// false for a job, or when the search found a feasible placement of one kind only (the other
// is dearer than every one kept, or not on the market).
func (p *planner) serverlessBreakEven(w *Workload) (at float64, srv, inst *candidate, ok bool) {
	inst, srv = p.cheapestPersistent(), p.cheapestBilled[payServerless]
	if !w.service() || inst == nil || srv == nil {
		return 0, nil, nil, false
	}
	at, err := p.serverless(candidateRate(srv)).BreakEven(candidateRate(inst), p.usage(w))
	if err != nil {
		return 0, nil, nil, false
	}
	return at, srv, inst, true
}

// candidateRate is the hourly price of a candidate: its offer's, times the offers rented.
func candidateRate(c *candidate) decimal.Decimal {
	return c.ref.offer.PriceUSDPerHour.Mul(decimal.NewFromInt(int64(c.eval.offersRented)))
}

// describe names a candidate as the notes and the advice do: "verda H100-SXM-80GB ×1 at
// $3.58/h".
func describe(c *candidate) string {
	return fmt.Sprintf("%s %s ×%d at %s/h", c.ref.offer.Provider, c.class.model.Name, c.class.gpusPerOffer*c.eval.offersRented, money.Price(candidateRate(c)))
}

// notes say what a placement's numbers assume, so a reader can check them by hand.
func (p *planner) notes(w *Workload, variants []variant, variantIdx int, c *class, ev eval, ref offerRef) []string {
	o := p.opts
	notes := []string{}
	if pol := policyOf(w); !located(&pol, ref) {
		notes = append(notes, fmt.Sprintf("%s does not publish where this offer runs: check it is in %s", ref.offer.Provider, where(&pol)))
	}
	if c.model.HostCPU == gpus.ARM64 {
		notes = append(notes, "the Grace host CPU is aarch64: x86-only containers and wheels do not run")
	}
	if ev.tpOnPCIe {
		notes = append(notes, fmt.Sprintf("tensor parallel ×%d over PCIe: about %.0f%% less throughput than with NVLink", ev.tensorParallel, (1-o.scaling(c.model, ev.tensorParallel, schema.IntraPCIe)/o.Scaling.NVLink)*100))
	}
	if ev.offersRented > 1 && ref.available < 0 {
		notes = append(notes, fmt.Sprintf("%d nodes needed; the provider does not publish availability", ev.offersRented))
	}
	spot := c.priceType.Interruptible()
	switch {
	case w.Kind.Training() || w.ReferenceGPU != "": // a job, or work measured on a reference GPU
		if spot {
			notes = append(notes, fmt.Sprintf("spot: hours include %.0f%% for checkpoints and restarts", o.SpotRestartOverhead*100))
		}
	case spot:
		notes = append(notes, "spot capacity can be reclaimed: keep a fallback for serving")
	}
	if w.Kind.Training() {
		v := &variants[variantIdx]
		notes = append(notes, fmt.Sprintf("%.3g FLOPs / (%d × %g %s TFLOPS × MFU %.2f × scaling %.3g) = %.2f h per run",
			v.flops, c.gpusPerOffer*ev.offersRented, c.model.TFLOPS.Of(v.precision), v.precision, o.mfu(c.model.FormFactor), ev.scalingEff, ev.hoursRun/spotFactor(o, spot)))
		if w.DeadlineHours > 0 {
			notes = append(notes, fmt.Sprintf("deadline %s h per run", trimFloat(w.DeadlineHours)))
		}
	}
	return notes
}
