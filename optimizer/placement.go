package optimizer

import (
	"fmt"
	"math"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/gpus"
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
		run := price.Mul(h).Round(2)
		pl.HoursPerRun, pl.CostUSDPerRun = &h, &run
	}
	pl.UnitCost = p.unitCost(w, &pl, ev.decodeSpeed, max(c.gpusPerOffer/max(ev.tensorParallel, 1), 1))
	pl.Notes = p.notes(w, variants, cand.variantIdx, c, ev, cand.ref)
	return pl
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
			// Billed hours per busy hour: 1 for an instance busy whenever it is up.
			busy := decimal.NewFromFloat(w.busy() * p.hoursPerMonth(w))
			if billed := pl.HoursPerMonth; !billed.Equal(busy) && busy.IsPositive() {
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

// billingNote weighs the two ways of paying for a service's GPUs of class c's model, at the
// cheapest per-GPU price of each on the market: an instance billed every hour it is up
// (on-demand), and a serverless deployment billed for its busy hours and cold starts. It
// says where the break-even utilization lies against the workload's; "" when the market has
// only one of the two.
func (p *planner) billingNote(w *Workload, c *class) string {
	instance := p.market.cheapestPerGPU(c.model.Name, schema.OnDemand)
	serverless := p.market.cheapestPerGPU(c.model.Name, schema.Serverless)
	if instance == 0 || serverless == 0 {
		return ""
	}
	u := p.usage(w)
	at, err := p.serverless(serverless).BreakEven(decimal.NewFromFloat(instance), u)
	if err != nil {
		return ""
	}
	pct := func(f float64) string { return fmt.Sprintf("%.0f%%", f*100) }
	if c.priceType == schema.Serverless {
		return fmt.Sprintf("serverless: billed %s h a month for %s busy of %s h and %.0f cold starts; a %s instance on demand (from $%.4g/GPU-h against $%.4g) is cheaper above %s utilization",
			trimFloat(roundHours(p.serverless(0).BilledHours(u))), pct(u.Utilization), trimFloat(u.Hours), u.Wakes, c.model.Name, instance, serverless, pct(at))
	}
	return fmt.Sprintf("serverless %s (from $%.4g/GPU-h against $%.4g on demand) bills busy time only: cheaper below %s utilization; this workload: %s",
		c.model.Name, serverless, instance, pct(at), pct(u.Utilization))
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
	if w.service() {
		if note := p.billingNote(w, c); note != "" {
			notes = append(notes, note)
		}
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
