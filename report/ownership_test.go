package report_test

import (
	"bytes"
	"encoding/csv"
	"slices"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/schema"
)

// TestOwnershipRendersUntrustedText: a provider's name reaches gpucost tco in the rental and
// the rent basis. The table writes it on one line without control sequences, the CSV so that
// a spreadsheet does not run it, and a workload the plan weighs no purchase for says why.
func TestOwnershipRendersUntrustedText(t *testing.T) {
	d := decimal.RequireFromString
	evil := evilProv + "\x1b[2J\r\nX-Injected: 1"
	rec := &optimizer.Placement{Provider: evil, GPUModel: "H100-SXM-80GB", GPUCount: 1, PriceType: schema.OnDemand, CostUSDPerMonth: d("2299.5")}
	months, hours := 10.9, 7937.0
	c := &optimizer.OwnershipCase{GPUModel: "H100-SXM-80GB", GPUCount: 1, PurchaseUSDPerGPU: d("25000"), PurchaseUSD: d("25000"),
		PurchaseBasis: "given", BusyHoursPerMonth: 730, Utilization: 1, Own: optimizer.OwnedCosts{Depreciation: d("694.44"), Total: d("694.44")},
		RentUSDPerMonth: d("2299.5"), RentBasis: "the recommendation: " + evil, OwnUSDPerGPUHour: d("0.9513"), RentUSDPerGPUHour: d("3.15"),
		BreakEvenMonths: &months, BreakEvenHours: &hours, Pays: true}
	plan := &optimizer.Plan{Teams: []optimizer.TeamPlan{{Name: "t", Workloads: []optimizer.WorkloadPlan{
		{Name: "chat", Status: optimizer.StatusOK, Recommended: rec, Ownership: c},
		{Name: "small", Status: optimizer.StatusOK, Recommended: &optimizer.Placement{Provider: "p", GPUModel: "A16-16GB", GPUCount: 1, PriceType: schema.OnDemand}},
		{Name: "huge", Status: optimizer.StatusNoFit, Reason: "needs 2 TB"},
	}}}}

	var text bytes.Buffer
	if err := report.WriteOwnership(&text, plan, report.FormatText); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteOwnershipCase(&text, c, report.FormatText); err != nil {
		t.Fatal(err)
	}
	if s := text.String(); strings.ContainsAny(s, "\x1b\r") || strings.Contains(s, "\nX-Injected") {
		t.Errorf("the table carries the provider's control characters:\n%q", s)
	}
	for _, want := range []string{"t/small: the catalog has no purchase price for A16-16GB", "t/huge: nothing fits: needs 2 TB", "10.9 mo"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the table lacks %q:\n%s", want, text.String())
		}
	}

	var b bytes.Buffer
	if err := report.WriteOwnership(&b, plan, report.FormatCSV); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(rows) != 4 {
		t.Fatalf("csv: %v, %d rows", err, len(rows))
	}
	if rental := rows[1][slices.Index(rows[0], "rental")]; !strings.HasPrefix(rental, "'=HYPERLINK") || strings.ContainsAny(rental, "\x1b\r\n") {
		t.Errorf("csv rental %q: want it defused", rental)
	}
	if why := rows[2][slices.Index(rows[0], "reason")]; why != "the catalog has no purchase price for A16-16GB" {
		t.Errorf("csv reason of the A16 workload: %q", why)
	}
}
