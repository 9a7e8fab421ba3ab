package optimizer_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/schema"
)

// h100At is one H100 SXM offered on demand at perGPU dollars an hour, in a node of count.
func h100At(perGPU string, count uint16) []schema.Offer {
	return offers(offerSpec{provider: "p", id: "h100", model: "H100-SXM-80GB", gpus: count, pt: schema.OnDemand, perGPU: perGPU, intra: schema.IntraNVSwitch})
}

// renderJob is work measured on one H100 that takes it hours a month, wherever it runs (its
// hours do not scale): a job busy all its hours.
func renderJob(hours float64) string {
	return fmt.Sprintf(`- name: render
  kind: custom
  min_vram_gb_per_gpu: 40
  gpus: 1
  reference_gpu: H100-SXM-80GB
  scale_by: none
  hours_per_month: %g
  gpus_allowed: [H100-SXM-80GB]
`, hours)
}

// guideOptions are the default options without the running costs the guides' break-even
// leaves out, and with no residual, as the guides count.
func guideOptions() optimizer.Options {
	opts := optimizer.DefaultOptions()
	opts.Ownership.ElectricityUSDPerKWh, opts.Ownership.OperationsUSDPerGPUMonth = 0, 0
	none := 0.0
	opts.Ownership.Residual = &none
	return opts
}

// TestOwnershipOfTheGuideInThePlan: the guides' H100, bought for $25,000 against renting one at
// $3.15 an hour for the hours it works. A job busy 60% of the month (438 h) rents it 438 h and
// breaks even after 25,000 ÷ 3.15 = 7,937 busy hours, 18.1 months: within the three-year
// write-off, so the plan advises buying. The same H100 busy around the clock breaks even after
// the same hours, 10.9 months.
func TestOwnershipOfTheGuideInThePlan(t *testing.T) {
	for _, tt := range []struct {
		hours  float64
		months float64
		advice string
	}{
		{438, 25000 / 3.15 / 438, "Buying 1 H100-SXM-80GB (about $25,000) pays for itself in 18 months at 60% busy: $694.44 a month to own against $1,379.70 to rent (before colocation, network and storage, which optimize.options.ownership does not set)"},
		{730, 25000 / 3.15 / 730, "Buying 1 H100-SXM-80GB (about $25,000) pays for itself in 11 months at 100% busy: $694.44 a month to own against $2,299.50 to rent (before colocation, network and storage, which optimize.options.ownership does not set)"},
	} {
		t.Run(fmt.Sprintf("%g h", tt.hours), func(t *testing.T) {
			wp := planOne(t, renderJob(tt.hours), h100At("3.15", 1), guideOptions())
			c := wp.Ownership
			if c == nil {
				t.Fatalf("no ownership case; recommended %s", placementID(wp.Recommended))
			}
			if c.BreakEvenHours == nil || math.Round(*c.BreakEvenHours) != 7937 || math.Abs(*c.BreakEvenMonths-tt.months) > 0.05 {
				t.Errorf("break-even after %v h, %v months; the guide says 7,937 h, %.1f months", deref(c.BreakEvenHours), deref(c.BreakEvenMonths), tt.months)
			}
			// $25,000 over 36 months; the rental is $3.15 for each busy hour.
			if !c.Own.Total.Equal(decimal.RequireFromString("694.44")) || !c.RentUSDPerGPUHour.Equal(decimal.RequireFromString("3.15")) {
				t.Errorf("own $%s a month, rent $%s a GPU-hour; want $694.44 and $3.15", c.Own.Total, c.RentUSDPerGPUHour)
			}
			if !c.Pays || c.Reason != "" || len(wp.Advice) != 1 || wp.Advice[0].Kind != optimizer.AdviceOwnership || wp.Advice[0].Text != tt.advice {
				t.Errorf("pays %v (%q), advice %+v\nwant %q", c.Pays, c.Reason, wp.Advice, tt.advice)
			}
		})
	}
}

// TestOwningAnAlwaysOnServiceSavesTheWholeRental: an endpoint on 8 H100s up around the clock
// but busy 60% of it. Renting, the instance is billed every hour (8 × $3.15 × 730 =
// $18,396 a month); owning, the cards idle 40% of the month at no energy cost. Each GPU's
// share of the rent, less its running costs, pays its $25,000 back: the break-even does not
// wait for busy hours, as it would renting by the hour.
func TestOwningAnAlwaysOnServiceSavesTheWholeRental(t *testing.T) {
	wp := planOne(t, `- name: video
  kind: custom
  min_vram_gb_per_gpu: 80
  gpus: 8
  interconnect: nvlink
  utilization: 60%
`, h100At("3.15", 8), optimizer.DefaultOptions())
	c := wp.Ownership
	if c == nil || c.GPUCount != 8 || !c.PurchaseUSD.Equal(decimal.NewFromInt(200000)) || c.BusyHoursPerMonth != 438 || c.Utilization != 0.6 {
		t.Fatalf("case %+v: want 8 H100s bought for $200,000, busy 438 h a month (60%%)", c)
	}
	// Running costs of one card a month at the defaults: 0.7 kW × 438 h × $0.10, cooling 30% of
	// that, $7.30 of operations.
	running := 0.7*438*0.10*1.3 + 7.30
	wantMonths := 25000 / (3.15*730 - running)
	if c.BreakEvenMonths == nil || math.Abs(*c.BreakEvenMonths-wantMonths) > 0.05 || !c.RentUSDPerMonth.Equal(decimal.RequireFromString("18396")) {
		t.Errorf("break-even after %v months against $%s a month; want %.1f against $18,396", deref(c.BreakEvenMonths), c.RentUSDPerMonth, wantMonths)
	}
	// Depreciation: $25,000 less the catalog's 20% residual over 36 months, for 8 cards.
	if want := decimal.NewFromFloat(8 * (25000*0.8/36 + running)).Round(2); c.Own.Total.Sub(want).Abs().GreaterThan(decimal.RequireFromString("0.05")) {
		t.Errorf("own $%s a month, want about $%s", c.Own.Total, want)
	}
	if len(wp.Advice) != 1 || !strings.HasPrefix(wp.Advice[0].Text, "Buying 8 H100-SXM-80GB (about $200,000) pays for itself in 11 months at 60% busy: ") {
		t.Errorf("advice %+v", wp.Advice)
	}
}

// TestOwningDoesNotPayUnder100HoursAMonth: the guides' rule "under 100 h a month, always
// rent", from the arithmetic. The H100 at $3.15 busy 80 h a month saves $252 of rent, $237.42
// after its running costs: $25,000 takes 105 months to pay back, past the write-off. No
// advice.
func TestOwningDoesNotPayUnder100HoursAMonth(t *testing.T) {
	wp := planOne(t, renderJob(80), h100At("3.15", 1), optimizer.DefaultOptions())
	c := wp.Ownership
	if c == nil {
		t.Fatal("no ownership case")
	}
	saved := 3.15*80 - (0.7*80*0.10*1.3 + 7.30)
	if c.Pays || c.BreakEvenMonths == nil || math.Round(*c.BreakEvenMonths) != math.Round(25000/saved) {
		t.Errorf("pays %v after %v months, want not (%.0f months)", c.Pays, deref(c.BreakEvenMonths), 25000/saved)
	}
	if c.Reason != fmt.Sprintf("it pays for itself only after %.1f months, past its 3-year write-off", 25000/saved) || len(wp.Advice) != 0 {
		t.Errorf("reason %q, advice %+v", c.Reason, wp.Advice)
	}

	// Cheaper still: at $0.10 an hour, 50 hours a month save $5 of rent, less than the
	// running costs. It never pays, and there is no break-even.
	wp = planOne(t, renderJob(50), h100At("0.10", 1), optimizer.DefaultOptions())
	if c := wp.Ownership; c == nil || c.Pays || c.BreakEvenMonths != nil ||
		c.Reason != "the rent it saves ($5.00 a month) does not cover the running costs of owning ($11.85 a month)" {
		t.Errorf("case %+v", c)
	}
}

// TestNoOwnershipWithoutAPurchasePrice: the A16 has no purchase price in the catalog, so the
// plan weighs no purchase; nor when nothing fits.
func TestNoOwnershipWithoutAPurchasePrice(t *testing.T) {
	offs := offers(offerSpec{provider: "p", id: "a16", model: "A16-16GB", gpus: 1, perGPU: "0.20"})
	wp := planOne(t, "- name: small\n  kind: custom\n  min_vram_gb_per_gpu: 8\n", offs, optimizer.DefaultOptions())
	if wp.Recommended == nil || wp.Ownership != nil {
		t.Errorf("recommended %s, ownership %+v: want the A16, and no case", placementID(wp.Recommended), wp.Ownership)
	}
	wp = planOne(t, "- name: big\n  kind: custom\n  min_vram_gb_per_gpu: 100\n", offs, optimizer.DefaultOptions())
	if wp.Recommended != nil || wp.Ownership != nil {
		t.Errorf("nothing fits, yet ownership %+v", wp.Ownership)
	}
}

// TestOwnWithAGivenPrice: the calculator's question for a GPU the catalog has no price for,
// and the limits of a month.
func TestOwnWithAGivenPrice(t *testing.T) {
	opts := optimizer.DefaultOptions()
	price := decimal.NewFromInt(3000)
	c, err := opts.Own(optimizer.OwnershipQuery{GPUModel: "A16-16GB", GPUs: 4, PurchaseUSDPerGPU: &price, BusyHoursPerMonth: 730, RentUSDPerMonth: decimal.NewFromInt(600)})
	if err != nil {
		t.Fatal(err)
	}
	// No residual without a catalog row: $12,000 over 36 months.
	if c.PurchaseBasis != "given" || c.Residual != 0 || !c.Own.Depreciation.Equal(decimal.RequireFromString("333.33")) {
		t.Errorf("basis %q, residual %v, depreciation $%s", c.PurchaseBasis, c.Residual, c.Own.Depreciation)
	}
	if _, err := opts.Own(optimizer.OwnershipQuery{GPUModel: "A16-16GB", GPUs: 1, BusyHoursPerMonth: 100, RentUSDPerMonth: decimal.NewFromInt(60)}); err == nil ||
		!strings.Contains(err.Error(), "no purchase price for A16-16GB") {
		t.Errorf("no price given or listed: %v", err)
	}
	c, err = opts.Own(optimizer.OwnershipQuery{GPUModel: "H100-SXM-80GB", GPUs: 1, BusyHoursPerMonth: 900, RentUSDPerMonth: decimal.NewFromInt(2835)})
	if err != nil || c.Pays || c.BreakEvenMonths != nil || !strings.Contains(c.Reason, "busy 900 h a month, more than a month's 730 h") {
		t.Errorf("900 busy hours a month: %+v, %v", c, err)
	}
}

func TestOwnershipOptionsAreValidated(t *testing.T) {
	for key, set := range map[string]func(*optimizer.OwnershipOptions){
		"ownership.pue":                     func(o *optimizer.OwnershipOptions) { o.PUE = 0.9 },
		"ownership.depreciation_years":      func(o *optimizer.OwnershipOptions) { o.DepreciationYears = 0 },
		"ownership.purchase_point":          func(o *optimizer.OwnershipOptions) { o.PurchasePoint = "median" },
		"ownership.electricity_usd_per_kwh": func(o *optimizer.OwnershipOptions) { o.ElectricityUSDPerKWh = -1 },
		"ownership.infrastructure_usd_per_gpu_month": func(o *optimizer.OwnershipOptions) {
			o.InfrastructureUSDPerGPUMonth = -5
		},
		"ownership.residual": func(o *optimizer.OwnershipOptions) { whole := 1.0; o.Residual = &whole },
	} {
		opts := optimizer.DefaultOptions()
		set(&opts.Ownership)
		if err := opts.Validate(); err == nil || !strings.Contains(err.Error(), "option "+key+": ") {
			t.Errorf("%s: %v", key, err)
		}
	}
}

// deref shows a nil float as "none".
func deref(f *float64) string {
	if f == nil {
		return "none"
	}
	return fmt.Sprint(*f)
}

// TestTheGuidesCalculator: the guides' H100 as `gpucost tco --gpu` asks it, rented by the hour
// for its busy hours at $3.15 or bought for the catalog's $25,000. At 60% of a month it breaks
// even after 7,937 busy hours, 18.1 months; around the clock after 10.9 months. Written off
// over three years with no residual, at the default running costs (700 W at $0.10/kWh, PUE
// 1.3, $7.30 a month of maintenance), an hour of its work costs $1.05.
func TestTheGuidesCalculator(t *testing.T) {
	rent := decimal.RequireFromString("3.15")
	c, err := guideOptions().Own(optimizer.RentedByTheHour("H100-SXM-80GB", 1, 730, 0.6, rent, nil))
	if err != nil {
		t.Fatal(err)
	}
	if math.Round(*c.BreakEvenHours) != 7937 || *c.BreakEvenMonths != 18.1 || !c.RentUSDPerMonth.Equal(decimal.RequireFromString("1379.7")) {
		t.Errorf("at 60%%: %v h, %v months, rent $%s a month; the guide says 7,937 h, 18.1 months, 438 h × $3.15", *c.BreakEvenHours, *c.BreakEvenMonths, c.RentUSDPerMonth)
	}
	if !strings.HasPrefix(c.RentBasis, "$3.15 an hour of each GPU, for its 438 busy hours a month") {
		t.Errorf("rent basis %q", c.RentBasis)
	}

	opts := optimizer.DefaultOptions()
	none := 0.0
	opts.Ownership.Residual = &none
	c, err = opts.Own(optimizer.RentedByTheHour("H100-SXM-80GB", 1, 730, 1, rent, nil))
	if err != nil {
		t.Fatal(err)
	}
	if *c.BreakEvenMonths != math.Round(25000/(3.15*730-(0.7*730*0.10*1.3+7.30))*10)/10 {
		t.Errorf("around the clock with running costs: %v months", *c.BreakEvenMonths)
	}
	if !c.OwnUSDPerGPUHour.Round(2).Equal(decimal.RequireFromString("1.05")) {
		t.Errorf("an hour of work owned costs $%s, the guide says $1.05", c.OwnUSDPerGPUHour)
	}
}
