package costmodel_test

import (
	"math"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/costmodel"
)

func usd(s string) decimal.Decimal { return decimal.RequireFromString(s) }

// dollars rounds to the whole dollar, as the guides print their tables.
func dollars(d decimal.Decimal) string { return "$" + d.Round(0).String() }

// The guides' example: an A100 at $1.39/h around the clock against the same GPU billed only for
// its busy time (docs/economics.md §1).
func TestServerlessTableOfTheGuide(t *testing.T) {
	rate := usd("1.39")
	persistent, err := costmodel.Persistent(rate, costmodel.Usage{Utilization: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if got := dollars(persistent); got != "$1015" {
		t.Errorf("persistent: %s a month, the guide says $1,015", got)
	}
	serverless := costmodel.Serverless{Rate: rate}
	for _, tt := range []struct {
		utilization float64
		want        string
	}{{0.2, "$203"}, {0.5, "$507"}, {0.8, "$812"}} {
		got, err := serverless.Monthly(costmodel.Usage{Utilization: tt.utilization})
		if err != nil {
			t.Fatal(err)
		}
		if dollars(got) != tt.want {
			t.Errorf("serverless at %.0f%%: %s (%s), the guide says %s", tt.utilization*100, dollars(got), got, tt.want)
		}
		if !got.LessThan(persistent) {
			t.Errorf("serverless at the persistent rate costs %s at %.0f%%, not less than %s", got, tt.utilization*100, persistent)
		}
	}
}

func TestServerlessBreakEven(t *testing.T) {
	persistent := usd("1.39")
	for _, tt := range []struct {
		name string
		s    costmodel.Serverless
		u    costmodel.Usage
		want float64
	}{
		// A serverless rate 1.48× the persistent one puts the break-even near the guides' 65–70%.
		{"premium rate", costmodel.Serverless{Rate: usd("2.0572")}, costmodel.Usage{}, 0.6757},
		{"same rate: serverless never dearer", costmodel.Serverless{Rate: persistent}, costmodel.Usage{}, 1},
		{"cheaper rate", costmodel.Serverless{Rate: usd("1.00")}, costmodel.Usage{}, 1},
		// 300 wakes a month, each paying a 60 s cold start: 5 billed hours, 0.68% of the month.
		{"cold starts", costmodel.Serverless{Rate: usd("2.0572"), ColdStart: time.Minute}, costmodel.Usage{Wakes: 300}, 0.6757 - 5.0/730},
		// Wakes billed 10 minutes at least: 300 × 10 min = 50 h a month, far below the busy
		// hours at the break-even (493 h), so the minimum changes nothing.
		{"minimum billing below the break-even", costmodel.Serverless{Rate: usd("2.0572"), MinimumBilled: 10 * time.Minute}, costmodel.Usage{Wakes: 300}, 0.6757},
		// A service up 100 hours a month with 600 wakes billed 15 minutes each: the minimum
		// alone (150 h) costs more than running persistently the 100 hours.
		{"minimum billing above persistent", costmodel.Serverless{Rate: usd("2.0572"), MinimumBilled: 15 * time.Minute}, costmodel.Usage{Hours: 100, Wakes: 600}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.s.BreakEven(persistent, tt.u)
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(got-tt.want) > 0.0005 {
				t.Fatalf("break-even at %.4f, want %.4f", got, tt.want)
			}
			// The two ways of paying cost the same at the break-even, and switch there.
			if got <= 0 || got >= 1 {
				return
			}
			at := func(util float64) (serverless, persistentCost decimal.Decimal) {
				u := tt.u
				u.Utilization = util
				s, err := tt.s.Monthly(u)
				if err != nil {
					t.Fatal(err)
				}
				p, err := costmodel.Persistent(persistent, u)
				if err != nil {
					t.Fatal(err)
				}
				return s, p
			}
			if s, p := at(got - 0.01); !s.LessThan(p) {
				t.Errorf("just below the break-even serverless costs %s, persistent %s", s, p)
			}
			if s, p := at(got + 0.01); !s.GreaterThan(p) {
				t.Errorf("just above the break-even serverless costs %s, persistent %s", s, p)
			}
		})
	}
}

// The guides' H100: bought for about $25,000, rented for about $3.15/h (docs/economics.md §2).
func TestRentOrBuyOfTheGuide(t *testing.T) {
	h100 := costmodel.Ownership{Purchase: usd("25000"), Years: 3}
	rent := usd("3.15")

	hours, months, ok, err := h100.BreakEven(rent, costmodel.Usage{Utilization: 1})
	if err != nil || !ok {
		t.Fatalf("break-even: ok %v, %v", ok, err)
	}
	if math.Round(hours) != 7937 || math.Round(months) != 11 {
		t.Errorf("around the clock: %.1f h, %.2f months; the guide says ≈7,937 h, ≈11 months", hours, months)
	}
	hours60, months60, ok, err := h100.BreakEven(rent, costmodel.Usage{Utilization: 0.6})
	if err != nil || !ok {
		t.Fatalf("break-even at 60%%: ok %v, %v", ok, err)
	}
	if math.Round(hours60) != 7937 || math.Round(months60) != 18 {
		t.Errorf("at 60%%: %.1f h, %.2f months; the guide says ≈7,937 h, ≈18 months", hours60, months60)
	}

	// Three years of ownership with power ($0.07/h at 700 W and $0.10/kWh), cooling ($0.02/h:
	// PUE 9/7) and maintenance ($0.01/h).
	h100.Watts, h100.ElectricityPerKWh, h100.PUE, h100.OperationsPerMonth = 700, usd("0.10"), 9.0/7, usd("7.30")
	m, err := h100.Month(costmodel.Usage{Utilization: 1})
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]decimal.Decimal{"power": m.Power, "cooling": m.Cooling} {
		want := map[string]string{"power": "0.07", "cooling": "0.02"}[name]
		if h := got.Div(decimal.NewFromInt(730)).Round(4); !h.Equal(usd(want)) {
			t.Errorf("%s $%s/h, the guide says $%s", name, h, want)
		}
	}
	effective, err := h100.EffectiveHourly(costmodel.Usage{Utilization: 1})
	if err != nil {
		t.Fatal(err)
	}
	if got := effective.Round(2); !got.Equal(usd("1.05")) {
		t.Errorf("3-year effective cost $%s/h (%s), the guide says about $1.05", got, effective)
	}

	// Running costs push the break-even later: the rent saved each hour is $3.15 less $0.10.
	hours, _, _, _ = h100.BreakEven(rent, costmodel.Usage{Utilization: 1})
	if want := 25000 / (3.15 - 0.10); math.Abs(hours-want) > 1 {
		t.Errorf("with running costs: %.0f h, want %.0f", hours, want)
	}
}

// Network and storage are paid every month, busy or idle, like operations: around the clock
// $36.50 a month is $0.05 of every hour the H100 saves renting at $3.15.
func TestInfrastructureIsARunningCost(t *testing.T) {
	h100 := costmodel.Ownership{Purchase: usd("25000"), Years: 3, InfrastructurePerMonth: usd("36.50")}
	m, err := h100.Month(costmodel.Usage{Utilization: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !m.Infrastructure.Equal(usd("36.50")) || !m.Running().Equal(usd("36.50")) || !m.Total().Equal(m.Depreciation.Add(usd("36.50"))) {
		t.Errorf("infrastructure $%s, running $%s, total $%s: want $36.50 in both", m.Infrastructure, m.Running(), m.Total())
	}
	hours, _, ok, err := h100.BreakEven(usd("3.15"), costmodel.Usage{Utilization: 1})
	if want := 25000 / (3.15 - 0.05); err != nil || !ok || math.Abs(hours-want) > 1 {
		t.Errorf("break-even after %.0f h (ok %v, %v), want %.0f", hours, ok, err, want)
	}
}

func TestOwningPaysBackOnlyWithinItsLife(t *testing.T) {
	// The H100 at 20% utilization: 146 busy hours a month save $459.90 of rent, paid back after
	// 54.4 months, longer than its 3-year life.
	h100 := costmodel.Ownership{Purchase: usd("25000"), Years: 3}
	_, months, ok, err := h100.BreakEven(usd("3.15"), costmodel.Usage{Utilization: 0.2})
	if err != nil || ok || math.Round(months) != 54 {
		t.Errorf("at 20%%: paid back after %.1f months, ok %v (%v); want 54 months, past the write-off", months, ok, err)
	}
}

func TestOwningNeverPays(t *testing.T) {
	card := costmodel.Ownership{Purchase: usd("1600"), Watts: 450, ElectricityPerKWh: usd("0.30"), PUE: 1.5,
		ColocationPerKWMonth: usd("150"), OperationsPerMonth: usd("40"), Years: 3, Residual: 0.2}
	// An RTX 4090 rented for $0.27/h busy 10% of the month: 73 h × $0.27 = $19.71 saved against
	// $122.29 of running costs.
	_, _, ok, err := card.BreakEven(usd("0.27"), costmodel.Usage{Utilization: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	if ok {
		t.Error("owning pays although the rent saved does not cover the running costs")
	}
	m, err := card.Month(costmodel.Usage{Utilization: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	// Depreciation 1600 × 0.8 / 36; colocation 0.45 kW × $150; energy 32.85 kWh × $0.30 and half
	// as much again for cooling.
	want := map[string]string{"depreciation": "35.56", "colocation": "67.50", "power": "9.86", "cooling": "4.93", "operations": "40.00"}
	got := map[string]decimal.Decimal{"depreciation": m.Depreciation, "colocation": m.Colocation, "power": m.Power, "cooling": m.Cooling, "operations": m.Operations}
	for k, w := range want {
		if g := got[k].StringFixed(2); g != w {
			t.Errorf("%s $%s a month, want $%s", k, g, w)
		}
	}
}

func TestBadInputIsRefused(t *testing.T) {
	good := costmodel.Ownership{Purchase: usd("25000"), Years: 3}
	for name, o := range map[string]costmodel.Ownership{
		"no purchase":             {Years: 3},
		"no years":                {Purchase: usd("25000")},
		"PUE below 1":             {Purchase: usd("25000"), Years: 3, PUE: 0.9},
		"residual whole":          {Purchase: usd("25000"), Years: 3, Residual: 1},
		"negative power":          {Purchase: usd("25000"), Years: 3, ElectricityPerKWh: usd("-0.1")},
		"negative infrastructure": {Purchase: usd("25000"), Years: 3, InfrastructurePerMonth: usd("-1")},
	} {
		if _, err := o.Month(costmodel.Usage{Utilization: 0.5}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for name, u := range map[string]costmodel.Usage{
		"utilization above 1": {Utilization: 1.2},
		"negative hours":      {Hours: -1},
		"more than a month":   {Hours: 800},
		"negative wakes":      {Wakes: -3},
	} {
		if _, err := good.Month(u); err == nil {
			t.Errorf("%s: accepted by Month", name)
		}
		if _, err := costmodel.Persistent(usd("1"), u); err == nil {
			t.Errorf("%s: accepted by Persistent", name)
		}
	}
	if _, err := good.EffectiveHourly(costmodel.Usage{}); err == nil {
		t.Error("an effective hourly cost with no busy hours")
	}
	if _, err := (costmodel.Serverless{}).BreakEven(usd("1"), costmodel.Usage{}); err == nil {
		t.Error("a break-even with no serverless rate")
	}
}
