package optimizer

import (
	"fmt"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/money"
)

// advise adds the workload's advice on how it pays: each rule adds one piece when it applies.
func (p *planner) advise(w *Workload, variants []variant, wp *WorkloadPlan) {
	if a, ok := p.pricingAdvice(w, variants, wp); ok {
		wp.Advice = append(wp.Advice, a)
	}
}

// pricingAdvice says why the recommendation pays another way than today's placement: for busy
// time only (serverless) instead of every hour, or a commitment instead of the hourly price.
// It applies when the recommendation is serverless or committed and today's placement (if
// any) is paid otherwise, and compares the recommendation with the cheapest placement the
// search costed that is paid the other way.
func (p *planner) pricingAdvice(w *Workload, variants []variant, wp *WorkloadPlan) (Advice, bool) {
	rec := wp.Recommended
	if rec == nil {
		return Advice{}, false
	}
	way := paymentOf(rec.PriceType)
	if way == payInstance || (wp.Current != nil && paymentOf(wp.Current.PriceType) == way) {
		return Advice{}, false
	}
	name := func(pl *Placement) string {
		return fmt.Sprintf("%s %s ×%d at %s/h", pl.Provider, pl.GPUModel, pl.GPUCount, money.Price(pl.PriceUSDPerHour))
	}
	if way == payServerless {
		text := fmt.Sprintf("Pay for busy time only: serverless (%s) bills %s h a month, the busy hours and cold starts: %s",
			name(rec), rec.HoursPerMonth, money.USD(rec.CostUSDPerMonth))
		if at, _, inst, ok := p.serverlessBreakEven(w); ok {
			other := p.placement(w, variants, inst)
			text += fmt.Sprintf(", against %s for the cheapest instance, billed all %s h it is up (%s); %s",
				money.USD(other.CostUSDPerMonth), other.HoursPerMonth, name(&other), breakEvenVerdict(w, at))
		}
		return Advice{Kind: AdvicePricing, Text: text + "."}, true
	}
	text := fmt.Sprintf("Commit: %s is a %s price, billed every hour of the month, busy or not: %s a month", name(rec), rec.PriceType, money.USD(rec.CostUSDPerMonth))
	if months, ok := rec.PriceType.TermMonths(); ok {
		text = fmt.Sprintf("Commit for %s: %s bills every hour of it, busy or not: %s a month, %s for the term", rec.PriceType.Term(), name(rec),
			money.USD(rec.CostUSDPerMonth), money.USD(rec.CostUSDPerMonth.Mul(decimal.NewFromFloat(months))))
	}
	if hourly := p.cheapestBilled[payInstance]; hourly != nil {
		other := p.placement(w, variants, hourly)
		text += fmt.Sprintf(", against %s at the cheapest hourly price (%s, %s)", money.USD(other.CostUSDPerMonth), name(&other), other.PriceType)
	}
	return Advice{Kind: AdvicePricing, Text: text + "."}, true
}
