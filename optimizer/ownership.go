package optimizer

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/costmodel"
	"github.com/gpucost/gpucost/gpus"
	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/schema"
)

// OwnershipOptions are what owning GPUs costs besides buying them, for the rent-or-buy case of
// every workload (WorkloadPlan.Ownership) and `gpucost tco` (docs/economics.md §2–§3). The
// defaults reproduce the buying guides' H100: $0.10/kWh, cooling $0.02 on $0.07 an hour of
// power, maintenance $0.01 an hour, written off over three years; what the guides' example
// leaves out (colocation, network and storage) is 0 until set.
type OwnershipOptions struct {
	// ElectricityUSDPerKWh is the price of a kilowatt-hour. Default 0.10 (the guides' H100).
	ElectricityUSDPerKWh float64 `json:"electricity_usd_per_kwh" yaml:"electricity_usd_per_kwh"`
	// PUE is the facility's power usage effectiveness: the power drawn per watt the GPU draws,
	// cooling included (1 = no overhead). Default 1.3 (the guides' cooling of $0.02 an hour on
	// $0.07 of power is 1.29).
	PUE float64 `json:"pue" yaml:"pue"`
	// ColocationUSDPerKWMonth is the rent of a kilowatt of rack power a month, paid on the
	// GPU's TDP busy or idle. Default 0: hardware in a room already paid for, as in the
	// guides' example; set a colocation site's price.
	ColocationUSDPerKWMonth float64 `json:"colocation_usd_per_kw_month" yaml:"colocation_usd_per_kw_month"`
	// OperationsUSDPerGPUMonth is maintenance and operations per GPU a month. Default 7.30
	// (the guides' $0.01 an hour over 730 hours).
	OperationsUSDPerGPUMonth float64 `json:"operations_usd_per_gpu_month" yaml:"operations_usd_per_gpu_month"`
	// InfrastructureUSDPerGPUMonth is each GPU's share of the network and storage around it a
	// month (switches, uplinks, disks, backup). Default 0: the guides name them in their TCO
	// but give no figure.
	InfrastructureUSDPerGPUMonth float64 `json:"infrastructure_usd_per_gpu_month" yaml:"infrastructure_usd_per_gpu_month"`
	// DepreciationYears is the write-off period: the purchase less its residual is spread over
	// it, and owning pays only when the purchase is paid back within it. Default 3 (the
	// guides' three years).
	DepreciationYears float64 `json:"depreciation_years" yaml:"depreciation_years"`
	// PurchasePoint is the price taken from a catalog purchase range: low, mid or high.
	// Default mid.
	PurchasePoint gpus.RangePoint `json:"purchase_point" yaml:"purchase_point"`
	// Residual is the share of the purchase a GPU resells for after the write-off, 0 up to but
	// not 1, for every GPU; nil (the default) takes each GPU's typical residual from the
	// catalog, an assumption (docs/gpus.md §3.3).
	Residual *float64 `json:"residual" yaml:"residual"`
}

// uncounted names the costs of owning left at zero, which the guides' example leaves out and
// a real site pays: "" when both are set.
func (o OwnershipOptions) uncounted() string {
	switch {
	case o.ColocationUSDPerKWMonth == 0 && o.InfrastructureUSDPerGPUMonth == 0:
		return "colocation, network and storage"
	case o.ColocationUSDPerKWMonth == 0:
		return "colocation"
	case o.InfrastructureUSDPerGPUMonth == 0:
		return "network and storage"
	}
	return ""
}

// defaultOwnership returns the documented ownership defaults.
func defaultOwnership() OwnershipOptions {
	return OwnershipOptions{
		ElectricityUSDPerKWh:     0.10,
		PUE:                      1.3,
		OperationsUSDPerGPUMonth: 7.30,
		DepreciationYears:        3,
		PurchasePoint:            gpus.RangeMid,
	}
}

// validate reports every out-of-range ownership option, each named as Options.Validate names
// its own ("option ownership.pue: ...").
func (o OwnershipOptions) validate() []error {
	var errs []error
	bad := func(name, format string, args ...any) {
		errs = append(errs, fmt.Errorf("option ownership.%s: %s", name, fmt.Sprintf(format, args...)))
	}
	for _, d := range []struct {
		name  string
		value float64
	}{
		{"electricity_usd_per_kwh", o.ElectricityUSDPerKWh},
		{"colocation_usd_per_kw_month", o.ColocationUSDPerKWMonth},
		{"operations_usd_per_gpu_month", o.OperationsUSDPerGPUMonth},
		{"infrastructure_usd_per_gpu_month", o.InfrastructureUSDPerGPUMonth},
	} {
		if !(d.value >= 0) {
			bad(d.name, "%v must not be negative", d.value)
		}
	}
	if !(o.PUE >= 1 && o.PUE <= 3) {
		bad("pue", "%v not in [1, 3]", o.PUE)
	}
	if !(o.DepreciationYears > 0 && o.DepreciationYears <= 20) {
		bad("depreciation_years", "%v not in (0, 20]", o.DepreciationYears)
	}
	if !slices.Contains(gpus.RangePoints, o.PurchasePoint) {
		bad("purchase_point", "%q: want %s", o.PurchasePoint, schema.List(gpus.RangePoints))
	}
	if r := o.Residual; r != nil && !(*r >= 0 && *r < 1) {
		bad("residual", "%v not in [0, 1)", *r)
	}
	return errs
}

// OwnershipCase weighs buying GPUs against renting them: the purchase, a month of owning them
// by cost, a month of the rental, what an hour of work costs each way, and when the purchase
// has paid for itself. Money is in dollars, for all the GPUs unless a name says per GPU.
type OwnershipCase struct {
	GPUModel string `json:"gpu_model"`
	GPUCount int    `json:"gpu_count"`
	// Condition is whether the catalog prices new GPUs or used ones; empty for a price given
	// by the caller.
	Condition         gpus.Condition  `json:"condition,omitempty"`
	PurchaseUSDPerGPU decimal.Decimal `json:"purchase_usd_per_gpu"`
	PurchaseUSD       decimal.Decimal `json:"purchase_usd"`
	// PurchaseGrade is how well the catalog's price is sourced (docs/gpus.md §3.3); empty for
	// a price given by the caller. PurchaseBasis says where the price comes from, in words.
	PurchaseGrade gpus.Grade `json:"purchase_grade,omitempty"`
	PurchaseBasis string     `json:"purchase_basis"`
	// Residual is the share of the purchase the GPUs resell for after DepreciationYears.
	Residual          float64 `json:"residual"`
	DepreciationYears float64 `json:"depreciation_years"`
	// BusyHoursPerMonth is the hours a month each GPU works; Utilization is that share of
	// the month (Options.HoursPerMonth).
	BusyHoursPerMonth float64 `json:"busy_hours_per_month"`
	Utilization       float64 `json:"utilization"`
	// Own is a month of owning the GPUs, by cost.
	Own OwnedCosts `json:"own_usd_per_month"`
	// RentUSDPerMonth is a month of the rental the purchase is weighed against; RentBasis says
	// what that rental is.
	RentUSDPerMonth decimal.Decimal `json:"rent_usd_per_month"`
	RentBasis       string          `json:"rent_basis"`
	// OwnUSDPerGPUHour is what an hour of one GPU's work costs owned: a month of owning over
	// its busy hours (the effective hourly cost). RentUSDPerGPUHour is the rental over the
	// same hours.
	OwnUSDPerGPUHour  decimal.Decimal `json:"own_usd_per_gpu_hour"`
	RentUSDPerGPUHour decimal.Decimal `json:"rent_usd_per_gpu_hour"`
	// BreakEvenMonths is when the rent saved, less the running costs of owning, has paid the
	// purchase (rounded to 0.1), and BreakEvenHours the busy hours of each GPU by then; nil
	// when it never does: the rent saved does not cover the running costs, or the work needs
	// more hours than a month has.
	BreakEvenMonths *float64 `json:"break_even_months"`
	BreakEvenHours  *float64 `json:"break_even_hours"`
	// Pays says owning pays: the purchase is paid back within the write-off period and a month
	// costs less owned than rented. Reason says why it does not, in one line.
	Pays   bool   `json:"pays"`
	Reason string `json:"reason,omitempty"`
}

// OwnedCosts is a month of owning GPUs by cost (costmodel.OwnedMonth for all of them), each
// rounded to the cent; Total is their sum.
type OwnedCosts struct {
	Depreciation   decimal.Decimal `json:"depreciation"`
	Power          decimal.Decimal `json:"power"`
	Cooling        decimal.Decimal `json:"cooling"`
	Colocation     decimal.Decimal `json:"colocation"`
	Operations     decimal.Decimal `json:"operations"`
	Infrastructure decimal.Decimal `json:"infrastructure"`
	Total          decimal.Decimal `json:"total"`
}

// OwnershipQuery is a rent-or-buy question: GPUs of a catalog model, busy some hours a month,
// bought or rented for that work.
type OwnershipQuery struct {
	GPUModel string // a catalog model
	GPUs     int    // how many, 1 or more
	// PurchaseUSDPerGPU is the price of one GPU; nil takes the catalog's at
	// OwnershipOptions.PurchasePoint.
	PurchaseUSDPerGPU *decimal.Decimal
	// BusyHoursPerMonth is the hours a month each GPU works.
	BusyHoursPerMonth float64
	// RentUSDPerMonth is what renting the GPUs for that work costs a month, all of them;
	// RentBasis says what that rental is, in words.
	RentUSDPerMonth decimal.Decimal
	RentBasis       string
}

// RentedByTheHour is the question of GPUs busy utilization of hours a month and rented only
// for those busy hours, at perGPUHour each (on demand, as the buying guides count: 25,000 ÷
// 3.15 = 7,937 busy hours whatever the month), or bought: `gpucost tco`'s calculator. A nil
// purchase takes the catalog's price.
func RentedByTheHour(model string, count int, hours, utilization float64, perGPUHour decimal.Decimal, purchase *decimal.Decimal) OwnershipQuery {
	busy := hours * utilization
	return OwnershipQuery{GPUModel: model, GPUs: count, PurchaseUSDPerGPU: purchase, BusyHoursPerMonth: busy,
		RentUSDPerMonth: perGPUHour.Mul(decimal.NewFromFloat(busy)).Mul(decimal.NewFromInt(int64(count))),
		RentBasis:       fmt.Sprintf("%s an hour of each GPU, for its %s busy hours a month", money.Price(perGPUHour), trimFloat(busy))}
}

// Own weighs owning the GPUs of q against renting them, with the ownership options: the
// plan's case for each workload (WorkloadPlan.Ownership) and `gpucost tco`'s calculator.
func (o Options) Own(q OwnershipQuery) (*OwnershipCase, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return o.own(q)
}

// own is Own on options already validated.
func (o *Options) own(q OwnershipQuery) (*OwnershipCase, error) {
	model, ok := gpus.Lookup(q.GPUModel)
	if !ok {
		return nil, fmt.Errorf("ownership: %s", unknownGPU(q.GPUModel))
	}
	switch {
	case q.GPUs < 1:
		return nil, fmt.Errorf("ownership: %d GPUs: want 1 or more", q.GPUs)
	case !(q.BusyHoursPerMonth > 0):
		return nil, errors.New("ownership: no busy hours a month to weigh owning against renting")
	case !q.RentUSDPerMonth.IsPositive():
		return nil, errors.New("ownership: the rental must cost something a month")
	case q.PurchaseUSDPerGPU != nil && !q.PurchaseUSDPerGPU.IsPositive():
		return nil, errors.New("ownership: the purchase price must be positive")
	}
	c := &OwnershipCase{GPUModel: model.Name, GPUCount: q.GPUs, DepreciationYears: o.Ownership.DepreciationYears,
		RentUSDPerMonth: q.RentUSDPerMonth.Round(2), RentBasis: q.RentBasis}
	if err := o.Ownership.purchase(model, q.PurchaseUSDPerGPU, c); err != nil {
		return nil, err
	}
	count := decimal.NewFromInt(int64(q.GPUs))
	c.PurchaseUSD = c.PurchaseUSDPerGPU.Mul(count)

	hours := o.HoursPerMonth
	busy := min(q.BusyHoursPerMonth, hours) // a GPU works no more hours than a month has
	c.BusyHoursPerMonth, c.Utilization = roundHours(busy), math.Round(busy/hours*1e4)/1e4
	card := o.Ownership.card(model, c.PurchaseUSDPerGPU, c.Residual)
	use := costmodel.Usage{Hours: hours, Utilization: busy / hours}
	month, err := card.Month(use)
	if err != nil {
		return nil, fmt.Errorf("ownership: %w", err)
	}
	c.Own = ownedCosts(month, count)
	gpuHours := decimal.NewFromFloat(busy).Mul(count) // the GPUs' busy hours a month
	c.RentUSDPerGPUHour = q.RentUSDPerMonth.Div(gpuHours).Round(4)
	c.OwnUSDPerGPUHour = month.Total().Div(decimal.NewFromFloat(busy)).Round(4)
	// The rent each busy hour of one GPU saves: the rental over the GPUs' busy hours.
	beHours, beMonths, paidInTime, err := card.BreakEven(q.RentUSDPerMonth.Div(gpuHours), use)
	if err != nil {
		return nil, fmt.Errorf("ownership: %w", err)
	}
	cheaper := c.Own.Total.LessThan(c.RentUSDPerMonth)
	switch {
	case q.BusyHoursPerMonth > hours:
		c.Reason = fmt.Sprintf("its work keeps each GPU busy %s h a month, more than a month's %s h: owning would take more GPUs than it rents",
			trimFloat(q.BusyHoursPerMonth), trimFloat(hours))
	case beMonths == 0:
		c.Reason = fmt.Sprintf("the rent it saves (%s a month) does not cover the running costs of owning (%s a month)",
			money.USD(c.RentUSDPerMonth), money.USD(c.Own.Total.Sub(c.Own.Depreciation)))
	case !paidInTime:
		c.Reason = fmt.Sprintf("it pays for itself only after %.1f months, past its %s-year write-off", beMonths, trimFloat(c.DepreciationYears))
	case !cheaper:
		c.Reason = fmt.Sprintf("%s a month to own against %s to rent", money.USD(c.Own.Total), money.USD(c.RentUSDPerMonth))
	}
	if q.BusyHoursPerMonth <= hours && beMonths > 0 {
		m, h := math.Round(beMonths*10)/10, math.Round(beHours)
		c.BreakEvenMonths, c.BreakEvenHours = &m, &h
	}
	c.Pays = c.Reason == ""
	return c, nil
}

// purchase sets the case's price of one GPU (given, else the catalog's at the purchase point),
// where it comes from, and the residual share (the options' override, else the catalog's
// assumption for the GPU, else none).
func (o *OwnershipOptions) purchase(model gpus.Model, given *decimal.Decimal, c *OwnershipCase) error {
	listed, ok := gpus.PurchaseOf(model.Name)
	switch {
	case given != nil:
		c.PurchaseUSDPerGPU, c.PurchaseBasis = *given, "given"
	case !ok:
		return fmt.Errorf("ownership: the catalog has no purchase price for %s: give one", model.Name)
	default:
		at, err := listed.At(o.PurchasePoint)
		if err != nil {
			return fmt.Errorf("ownership: %w", err)
		}
		c.PurchaseUSDPerGPU, c.Condition, c.PurchaseGrade = at, listed.Condition, listed.Grade
		c.PurchaseBasis = fmt.Sprintf("catalog: %s, seen %s, %s", priceRange(listed), listed.Seen, listed.Grade)
		if !listed.LowUSD.Equal(listed.HighUSD) {
			c.PurchaseBasis = fmt.Sprintf("catalog: %s of %s, seen %s, %s", o.PurchasePoint, priceRange(listed), listed.Seen, listed.Grade)
		}
	}
	switch {
	case o.Residual != nil:
		c.Residual = *o.Residual
	case ok:
		c.Residual = listed.Residual
	}
	return nil
}

// priceRange writes a purchase range in whole dollars: "$45,000–50,000 new", "$25,000 new".
func priceRange(p gpus.Purchase) string {
	s := money.Whole(p.LowUSD)
	if !p.HighUSD.Equal(p.LowUSD) {
		s += "–" + money.Thousands(p.HighUSD.Round(0).String())
	}
	return s + " " + string(p.Condition)
}

// card is the cost model of owning one GPU of model bought at price, with the options'
// running costs and write-off. The options' dollar amounts become exact decimals here, the one
// place they enter the arithmetic (NewFromFloat keeps the shortest form: 0.1 is 0.10).
func (o *OwnershipOptions) card(model gpus.Model, price decimal.Decimal, residual float64) costmodel.Ownership {
	return costmodel.Ownership{
		Purchase:               price,
		Watts:                  float64(model.TDPWatts),
		ElectricityPerKWh:      decimal.NewFromFloat(o.ElectricityUSDPerKWh),
		PUE:                    o.PUE,
		ColocationPerKWMonth:   decimal.NewFromFloat(o.ColocationUSDPerKWMonth),
		OperationsPerMonth:     decimal.NewFromFloat(o.OperationsUSDPerGPUMonth),
		InfrastructurePerMonth: decimal.NewFromFloat(o.InfrastructureUSDPerGPUMonth),
		Years:                  o.DepreciationYears,
		Residual:               residual,
	}
}

// ownedCosts is a month of owning count GPUs, by cost, to the cent.
func ownedCosts(m costmodel.OwnedMonth, count decimal.Decimal) OwnedCosts {
	cents := func(d decimal.Decimal) decimal.Decimal { return d.Mul(count).Round(2) }
	c := OwnedCosts{Depreciation: cents(m.Depreciation), Power: cents(m.Power), Cooling: cents(m.Cooling),
		Colocation: cents(m.Colocation), Operations: cents(m.Operations), Infrastructure: cents(m.Infrastructure)}
	c.Total = c.Depreciation.Add(c.Power).Add(c.Cooling).Add(c.Colocation).Add(c.Operations).Add(c.Infrastructure)
	return c
}

// ownership weighs buying the recommended placement's GPUs against renting it, when the
// catalog has a purchase price for its GPU model, and advises buying when that pays. The GPUs
// work the hours of the recommendation's candidate (p.top[0], kept since the search) at the
// workload's busy share. It runs after the recommendation is made.
func (p *planner) ownership(w *Workload, wp *WorkloadPlan) {
	rec := wp.Recommended
	if rec == nil || len(p.top) == 0 {
		return
	}
	busy := p.top[0].eval.hoursWorked * w.busy()
	if _, ok := gpus.PurchaseOf(rec.GPUModel); !ok || busy == 0 {
		return // no price to weigh, or GPUs measured idle: nothing to own them for
	}
	c, err := p.opts.own(OwnershipQuery{GPUModel: rec.GPUModel, GPUs: rec.GPUCount,
		BusyHoursPerMonth: busy, RentUSDPerMonth: rec.CostUSDPerMonth,
		RentBasis: fmt.Sprintf("the recommendation: %s %s ×%d %s, %s h a month", rec.Provider, rec.GPUModel, rec.GPUCount, rec.PriceType, rec.HoursPerMonth)})
	if err != nil {
		wp.Caveats = append(wp.Caveats, "owning the recommended GPUs not weighed: "+err.Error())
		return
	}
	wp.Ownership = c
	if c.Pays {
		text := fmt.Sprintf("Buying %d %s (about %s) pays for itself in %.0f months at %.0f%% busy: %s a month to own against %s to rent",
			c.GPUCount, c.GPUModel, money.Whole(c.PurchaseUSD), *c.BreakEvenMonths, c.Utilization*100, money.USD(c.Own.Total), money.USD(c.RentUSDPerMonth))
		if missing := p.opts.Ownership.uncounted(); missing != "" {
			text += fmt.Sprintf(" (before %s, which optimize.options.ownership does not set)", missing)
		}
		wp.Advice = append(wp.Advice, Advice{Kind: AdviceOwnership, Text: text})
	}
}
