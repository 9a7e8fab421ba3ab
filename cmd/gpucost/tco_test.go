package main

import (
	"encoding/csv"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/store/storetest"
)

// guideConfig is a configuration whose ownership counts what the guides' break-even counts:
// no running costs and no residual value.
const guideConfig = "optimize:\n  options:\n    ownership:\n      electricity_usd_per_kwh: 0\n      operations_usd_per_gpu_month: 0\n      residual: 0\n"

// tcoCase runs gpucost tco with args and --output json and decodes the one case it prints, the
// calculator's row (no team, no workload).
func tcoCase(t *testing.T, args ...string) optimizer.OwnershipCase {
	t.Helper()
	code, out := runCLI(append([]string{"tco", "--output", "json"}, args...)...)
	if code != exitOK {
		t.Fatalf("tco %v: exit %d\n%s", args, code, out)
	}
	rows := itemsOf[report.OwnershipRow](t, []byte(stdoutOf(out)))
	if len(rows) != 1 || rows[0].Team != "" || rows[0].Workload != "" || rows[0].Ownership == nil {
		t.Fatalf("tco %v: %d rows %+v, want the calculator's one case\n%s", args, len(rows), rows, out)
	}
	return *rows[0].Ownership
}

// TestTCOCalculatorOfTheGuide: the guides' H100, from the same inputs. Bought at the catalog's
// $25,000 against $3.15 an hour: 25,000 ÷ 3.15 = 7,937 busy hours, about 11 months around the
// clock and about 18 at 60% utilization (or 438 hours a month). Written off over three years
// with power at 700 W and $0.10/kWh ($0.07/h), cooling at PUE 1.3 ($0.02/h) and maintenance
// of $7.30 a month ($0.01/h), an hour of its work costs $1.05. No store is read: the rent is
// given.
func TestTCOCalculatorOfTheGuide(t *testing.T) {
	dir := t.TempDir()
	guide := writeFile(t, dir, "guide.yaml", guideConfig)
	for _, tt := range []struct {
		name   string
		args   []string
		months float64
	}{
		{"around the clock", nil, 10.9},
		{"60% utilization", []string{"--utilization", "60%"}, 18.1},
		{"438 hours a month", []string{"--hours-per-month", "438"}, 18.1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := tcoCase(t, append([]string{"--gpu", "H100-SXM-80GB", "--rent", "3.15", "--config", guide}, tt.args...)...)
			if c.BreakEvenHours == nil || *c.BreakEvenHours != 7937 || *c.BreakEvenMonths != tt.months || !c.Pays {
				t.Errorf("break-even after %v h, %v months, pays %v; the guide says 7,937 h, %.1f months", deref(c.BreakEvenHours), deref(c.BreakEvenMonths), c.Pays, tt.months)
			}
			if !c.PurchaseUSD.Equal(decimal.NewFromInt(25000)) || !c.RentUSDPerGPUHour.Equal(decimal.RequireFromString("3.15")) {
				t.Errorf("bought for $%s, rented at $%s a GPU-hour; want the catalog's $25,000 and $3.15", c.PurchaseUSD, c.RentUSDPerGPUHour)
			}
		})
	}

	// The effective cost over three years: the default running costs, no residual.
	noResidual := writeFile(t, dir, "residual.yaml", "optimize:\n  options:\n    ownership:\n      residual: 0\n")
	c := tcoCase(t, "--gpu", "H100-SXM-80GB", "--rent", "3.15", "--config", noResidual)
	perHour := func(d decimal.Decimal) float64 { return d.InexactFloat64() / 730 }
	if p, cool := perHour(c.Own.Power), perHour(c.Own.Cooling); math.Round(p*100) != 7 || math.Round(cool*100) != 2 {
		t.Errorf("power $%.4f/h, cooling $%.4f/h; the guide says $0.07 and $0.02", p, cool)
	}
	if !c.OwnUSDPerGPUHour.Round(2).Equal(decimal.RequireFromString("1.05")) {
		t.Errorf("an hour of work owned over 3 years costs $%s; the guide says about $1.05", c.OwnUSDPerGPUHour)
	}

	// The table says the same to a reader.
	code, out := runCLI("tco", "--gpu", "H100-SXM-80GB", "--rent", "3.15", "--utilization", "60%", "--config", guide)
	for _, want := range []string{"H100-SXM-80GB ×1 bought for $25,000", "busy 438 h a month each (60% of the month)",
		"break-even: after 7,937 busy hours of each GPU, 18.1 months", "owning pays: $694.44 a month to own against $1,379.70 to rent"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("table (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
}

// TestTCOCalculatorDoesNotPayUnder100Hours: the guides' "under 100 h a month, always rent".
func TestTCOCalculatorDoesNotPayUnder100Hours(t *testing.T) {
	c := tcoCase(t, "--gpu", "H100-SXM-80GB", "--rent", "3.15", "--hours-per-month", "90")
	if c.Pays || !strings.Contains(c.Reason, "past its 3-year write-off") {
		t.Errorf("90 h a month: pays %v, %q", c.Pays, c.Reason)
	}
	code, out := runCLI("tco", "--gpu", "H100-SXM-80GB", "--rent", "3.15", "--hours-per-month", "90", "--output", "csv")
	rows, err := csv.NewReader(strings.NewReader(stdoutOf(out))).ReadAll()
	if code != exitOK || err != nil || len(rows) != 2 || !slices.Equal(rows[0], report.OwnershipCSVHeader) {
		t.Fatalf("csv: exit %d, %v, %d rows\n%s", code, err, len(rows), out)
	}
	if pays := rows[1][slices.Index(rows[0], "pays")]; pays != "false" {
		t.Errorf("csv pays %q", pays)
	}
}

func TestTCOFlagsAreChecked(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--count", "2"}, "--count is a flag of the calculator: give --gpu too"},
		{[]string{"--gpu", "H100-SXM-80GB", "--workloads", "w.yaml"}, "give one of them"},
		{[]string{"--gpu", "H100"}, `--gpu: unknown GPU model "H100" (did you mean`},
		{[]string{"--gpu", "A16-16GB", "--rent", "1"}, "--gpu A16-16GB: the catalog has no purchase price for it: give --purchase"},
		{[]string{"--gpu", "H100-SXM-80GB", "--count", "0"}, "--count 0: want 1 to 100000 GPUs"},
		{[]string{"--gpu", "H100-SXM-80GB", "--utilization", "150%"}, `--utilization: utilization "150%": want a share`},
		{[]string{"--gpu", "H100-SXM-80GB", "--hours-per-month", "800"}, "--hours-per-month 800: want more than 0 and at most 744"},
		{[]string{"--gpu", "H100-SXM-80GB", "--rent", "cheap"}, `--rent "cheap": want dollars per GPU-hour`},
		{[]string{"--gpu", "H100-SXM-80GB", "--rent", "3", "--purchase", "-5"}, `--purchase "-5": want dollars per GPU`},
		{[]string{"--output", "yaml"}, `--output "yaml": want table, json or csv`},
	} {
		code, out := runCLI(append([]string{"tco"}, tt.args...)...)
		if code != exitUsage || !strings.Contains(out, tt.want) {
			t.Errorf("tco %v: exit %d, want %d with %q\n%s", tt.args, code, exitUsage, tt.want, out)
		}
	}
	// A price for a GPU the catalog does not price.
	c := tcoCase(t, "--gpu", "A16-16GB", "--rent", "0.5", "--purchase", "$3000", "--count", "4")
	if c.PurchaseBasis != "given" || !c.PurchaseUSD.Equal(decimal.NewFromInt(12000)) {
		t.Errorf("4 A16s at a given $3,000: %s, bought for $%s", c.PurchaseBasis, c.PurchaseUSD)
	}
}

// TestTCOOnTheStore: the calculator's rent is today's cheapest on-demand offer of the GPU (not
// a spot price, not one that no longer holds), and without --gpu every workload of the file
// is planned and weighed: a job busy 438 h a month on the H100 pays for a purchase, one busy
// 60 h does not, and a GPU the catalog has no price for is not weighed.
func TestTCOOnTheStore(t *testing.T) {
	st := storetest.Open(t)
	dsn := storetest.DatabaseDSN(t, st.Database())
	dir := t.TempDir()
	now := time.Now().UTC()
	at := func(ago time.Duration) string { return now.Add(-ago).Format(time.RFC3339) }
	header := "provider,gpu,price_type,usd_per_gpu_hour,observed_at,gpu_count,region,valid_until\n"
	table := writeFile(t, dir, "prices.csv", header+
		"acme,H100-SXM-80GB,on_demand,3.15,"+at(time.Hour)+",1,us-east-1,\n"+
		"bigco,H100-SXM-80GB,on_demand,3.40,"+at(time.Hour)+",1,us-east-1,\n"+
		"acme,H100-SXM-80GB,spot,1.50,"+at(time.Hour)+",1,us-east-1,\n"+
		"oldco,H100-SXM-80GB,on_demand,2.00,"+at(72*time.Hour)+",1,us-east-1,\n"+
		"acme,A16-16GB,on_demand,0.30,"+at(time.Hour)+",1,us-east-1,\n")
	job := func(name string, hours int, gpu string) string {
		return fmt.Sprintf(`      - name: %s
        kind: custom
        min_vram_gb_per_gpu: 12
        reference_gpu: %s
        scale_by: none
        hours_per_month: %d
        gpus_allowed: [%s]
`, name, gpu, hours, gpu)
	}
	workloads := writeFile(t, dir, "workloads.yaml", "teams:\n  - name: render\n    email: render@example.com\n    workloads:\n"+
		job("steady", 438, "H100-SXM-80GB")+job("occasional", 60, "H100-SXM-80GB")+job("small", 200, "A16-16GB"))
	cfg := writeFile(t, dir, "gpucost.yaml", fmt.Sprintf("clickhouse:\n  dsn: %q\nscrape:\n  spool_dir: %q\noptimize:\n  workloads: %q\n", dsn, t.TempDir(), workloads)+strings.TrimPrefix(guideConfig, "optimize:\n"))
	if code, out := runCLI("import", "--config", cfg, table); code != exitOK {
		t.Fatalf("import: exit %d\n%s", code, out)
	}

	c := tcoCase(t, "--gpu", "H100-SXM-80GB", "--utilization", "60%", "--config", cfg)
	if !c.RentUSDPerGPUHour.Equal(decimal.RequireFromString("3.15")) || !strings.Contains(c.RentBasis, "today's cheapest on-demand offer, acme") ||
		*c.BreakEvenHours != 7937 || *c.BreakEvenMonths != 18.1 {
		t.Errorf("rent $%s (%s), break-even %v h, %v months: want acme's $3.15, 7,937 h, 18.1 months", c.RentUSDPerGPUHour, c.RentBasis, deref(c.BreakEvenHours), deref(c.BreakEvenMonths))
	}
	if code, out := runCLI("tco", "--gpu", "L40S-48GB", "--config", cfg); code != exitFailed || !strings.Contains(out, "no on-demand offer of L40S-48GB in the store holds today") {
		t.Errorf("no L40S on the market: exit %d\n%s", code, out)
	}

	code, out := runCLI("tco", "--output", "json", "--config", cfg)
	rows := itemsOf[report.OwnershipRow](t, []byte(stdoutOf(out)))
	if code != exitOK || len(rows) != 3 {
		t.Fatalf("tco: exit %d, %d rows\n%s", code, len(rows), out)
	}
	steady, occasional, small := rows[0].Ownership, rows[1].Ownership, rows[2]
	if steady == nil || !steady.Pays || steady.BusyHoursPerMonth != 438 || *steady.BreakEvenMonths != 18.1 || rows[0].Rental != "acme H100-SXM-80GB ×1 on-demand" {
		t.Errorf("steady: %+v on %q, want a purchase that pays after 18.1 months against acme's H100", steady, rows[0].Rental)
	}
	if occasional == nil || occasional.Pays || !strings.Contains(occasional.Reason, "only after 132.3 months") {
		t.Errorf("occasional: %+v, want no purchase (25,000 ÷ (60 × 3.15) = 132 months)", occasional)
	}
	if small.Ownership != nil || small.Why != "the catalog has no purchase price for A16-16GB" {
		t.Errorf("small: %+v", small)
	}
	code, out = runCLI("tco", "--config", cfg)
	for _, want := range []string{"render  steady", "yes", "render/occasional: it pays for itself only after 132.3 months", "render/small: the catalog has no purchase price"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Errorf("table (exit %d) lacks %q:\n%s", code, want, out)
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
