package report

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/textcell"
)

// OwnershipRow is one workload of `gpucost tco`: the rental the plan recommends against owning
// its GPUs (docs/economics.md §3). Ownership is nil when the plan weighs no purchase, and Why
// says why.
type OwnershipRow struct {
	Team     string `json:"team"`
	Workload string `json:"workload"`
	// Rental is the recommendation: provider, GPU × count and price type; empty when nothing
	// fits.
	Rental    string                   `json:"rental"`
	Ownership *optimizer.OwnershipCase `json:"ownership"`
	Why       string                   `json:"why,omitempty"`
}

// OwnershipRows lists every workload of the plan, in plan order, with its ownership case.
func OwnershipRows(plan *optimizer.Plan) []OwnershipRow {
	rows := []OwnershipRow{}
	for _, t := range plan.Teams {
		for _, w := range t.Workloads {
			row := OwnershipRow{Team: t.Name, Workload: w.Name, Ownership: w.Ownership}
			switch rec := w.Recommended; {
			case rec == nil:
				row.Why = "nothing fits: " + w.Reason
			default:
				row.Rental = fmt.Sprintf("%s %s %s", rec.Provider, gpus(rec.GPUModel, rec.GPUCount), priceTypeLabel(string(rec.PriceType)))
				if w.Ownership == nil {
					row.Why = "the catalog has no purchase price for " + rec.GPUModel
				}
			}
			rows = append(rows, row)
		}
	}
	return rows
}

// OwnershipCSVHeader is the header of `gpucost tco --output csv`: one row per workload, or the
// one row of the calculator (no team or workload). The case's JSON names, flattened.
var OwnershipCSVHeader = []string{
	"team", "workload", "rental", "gpu_model", "gpu_count", "condition", "purchase_usd_per_gpu", "purchase_usd",
	"purchase_grade", "residual", "depreciation_years", "busy_hours_per_month", "utilization",
	"own_depreciation_usd_per_month", "own_power_usd_per_month", "own_cooling_usd_per_month", "own_colocation_usd_per_month",
	"own_operations_usd_per_month", "own_infrastructure_usd_per_month", "own_usd_per_month", "rent_usd_per_month",
	"own_usd_per_gpu_hour", "rent_usd_per_gpu_hour", "break_even_months", "break_even_hours", "pays", "reason",
	"purchase_basis", "rent_basis",
}

// WriteOwnership writes the plan's rent-or-buy cases, one per workload, in format f: text a
// terminal table with the reasons owning does not pay below it, csv a row per workload under
// OwnershipCSVHeader. In JSON `gpucost tco` lists the rows (OwnershipRows) in an envelope.
func WriteOwnership(w io.Writer, plan *optimizer.Plan, f Format) error {
	rows := OwnershipRows(plan)
	switch f {
	case FormatCSV:
		return ownershipCSV(w, rows)
	case FormatText:
		return ownershipTable(w, rows)
	}
	return fmt.Errorf("rent or buy is written as text or csv, not %s", f)
}

// WriteOwnershipCase writes one rent-or-buy case (the calculator of `gpucost tco --gpu`) in
// format f: text a month of owning by cost beside the rental, the break-even and the verdict;
// csv one row under OwnershipCSVHeader. In JSON `gpucost tco --gpu` lists it as the one
// OwnershipRow, without a team or workload, in an envelope.
func WriteOwnershipCase(w io.Writer, c *optimizer.OwnershipCase, f Format) error {
	switch f {
	case FormatCSV:
		return ownershipCSV(w, []OwnershipRow{{Ownership: c}})
	case FormatText:
		return ownershipBreakdown(w, c)
	}
	return fmt.Errorf("rent or buy is written as text or csv, not %s", f)
}

func ownershipCSV(w io.Writer, rows []OwnershipRow) error {
	cw := textcell.NewCSVWriter(w)
	if err := cw.Write(OwnershipCSVHeader); err != nil {
		return fmt.Errorf("writing the rent-or-buy CSV: %w", err)
	}
	for _, r := range rows {
		if err := cw.Write(ownershipCSVRow(r)); err != nil {
			return fmt.Errorf("writing the rent-or-buy CSV: %w", err)
		}
	}
	if err := cw.Flush(); err != nil {
		return fmt.Errorf("writing the rent-or-buy CSV: %w", err)
	}
	return nil
}

func ownershipCSVRow(r OwnershipRow) []string {
	c := r.Ownership
	if c == nil {
		row := make([]string, len(OwnershipCSVHeader))
		row[0], row[1], row[2] = r.Team, r.Workload, r.Rental
		row[slices.Index(OwnershipCSVHeader, "reason")] = r.Why
		return row
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	opt := func(x *float64) string {
		if x == nil {
			return ""
		}
		return f(*x)
	}
	o := c.Own
	return []string{r.Team, r.Workload, r.Rental, c.GPUModel, strconv.Itoa(c.GPUCount), string(c.Condition),
		c.PurchaseUSDPerGPU.String(), c.PurchaseUSD.String(), string(c.PurchaseGrade), f(c.Residual), f(c.DepreciationYears),
		f(c.BusyHoursPerMonth), f(c.Utilization),
		o.Depreciation.String(), o.Power.String(), o.Cooling.String(), o.Colocation.String(), o.Operations.String(), o.Infrastructure.String(),
		o.Total.String(), c.RentUSDPerMonth.String(), c.OwnUSDPerGPUHour.String(), c.RentUSDPerGPUHour.String(),
		opt(c.BreakEvenMonths), opt(c.BreakEvenHours), strconv.FormatBool(c.Pays), c.Reason, c.PurchaseBasis, c.RentBasis}
}

// breakEven writes a break-even in months: "10.9 mo", or "never".
func breakEven(months *float64) string {
	if months == nil {
		return "never"
	}
	return strconv.FormatFloat(*months, 'f', 1, 64) + " mo"
}

// ownershipTable writes a line per workload and, below, why owning does not pay (or why it is
// not weighed) for each that it does not.
func ownershipTable(w io.Writer, rows []OwnershipRow) error {
	cols := []textcell.Column{{Head: "TEAM"}, {Head: "WORKLOAD"}, {Head: "BUY"}, {Head: "PURCHASE", Right: true}, {Head: "BUSY H", Right: true},
		{Head: "OWN $/MONTH", Right: true}, {Head: "RENT $/MONTH", Right: true}, {Head: "OWN $/GPU-H", Right: true, Point: true},
		{Head: "RENT $/GPU-H", Right: true, Point: true}, {Head: "BREAK-EVEN", Right: true}, {Head: "PAYS"}}
	row := func(cells ...string) {
		for j, cell := range cells {
			cols[j].Add(cell, 40)
		}
	}
	var notes []string
	for _, r := range rows {
		team, name := textcell.Clean(r.Team, 40), textcell.Clean(r.Workload, 40)
		c := r.Ownership
		if c == nil {
			row(team, name, "–", "", "", "", "", "", "", "", "–")
			notes = append(notes, fmt.Sprintf("%s/%s: %s", team, name, textcell.Clean(r.Why, textcell.TextWidth)))
			continue
		}
		pays := "yes"
		if !c.Pays {
			pays = "no"
			notes = append(notes, fmt.Sprintf("%s/%s: %s", team, name, textcell.Clean(c.Reason, textcell.TextWidth)))
		}
		row(team, name, gpus(c.GPUModel, c.GPUCount), money.Whole(c.PurchaseUSD), strconv.FormatFloat(c.BusyHoursPerMonth, 'f', -1, 64),
			usd(c.Own.Total), usd(c.RentUSDPerMonth), price(c.OwnUSDPerGPUHour), price(c.RentUSDPerGPUHour), breakEven(c.BreakEvenMonths), pays)
	}
	// Within TerminalWidth: an hour of one GPU's work, each way, goes first (the calculator,
	// gpucost tco --gpu, shows it), then the busy hours, then the purchase.
	dropped, err := textcell.Fit(w, cols, TerminalWidth, []textcell.Step{textcell.Drop("OWN $/GPU-H"), textcell.Drop("RENT $/GPU-H"),
		textcell.Shrink("WORKLOAD", 14), textcell.Drop("BUSY H"), textcell.Drop("PURCHASE")})
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("\n")
	legend := "RENT: the recommended rental as billed."
	if !slices.Contains(dropped, "BUSY H") {
		legend = "BUSY H: hours a month each GPU works. " + legend
	}
	if !slices.Contains(dropped, "OWN $/GPU-H") {
		legend += " $/GPU-H: an hour of one GPU's work."
	}
	if len(dropped) > 0 {
		legend += fmt.Sprintf(" Left out to fit %d columns: %s; --output csv or json has every column.", TerminalWidth, strings.Join(dropped, ", "))
	}
	textcell.Wrap(bw, legend, TerminalWidth, "", "")
	for _, n := range notes {
		textcell.Wrap(bw, n, TerminalWidth, "", "    ")
	}
	return bw.Flush()
}

// ownershipBreakdown writes one case: what is bought, a month of owning by cost beside the
// rental, an hour of work each way, the break-even and the verdict.
func ownershipBreakdown(w io.Writer, c *optimizer.OwnershipCase) error {
	fmt.Fprintf(w, "%s bought for %s (%s)\n", gpus(c.GPUModel, c.GPUCount), money.Whole(c.PurchaseUSD), textcell.Clean(c.PurchaseBasis, textcell.TextWidth))
	fmt.Fprintf(w, "busy %s h a month each (%s of the month), written off over %s years, residual %s\n",
		strconv.FormatFloat(c.BusyHoursPerMonth, 'f', -1, 64), share(c.Utilization), strconv.FormatFloat(c.DepreciationYears, 'f', -1, 64), share(c.Residual))
	fmt.Fprintf(w, "rent: %s\n\n", textcell.Clean(c.RentBasis, textcell.TextWidth))
	tb := textcell.NewTable(w, textcell.NameWidth)
	tb.Row("A MONTH", "OWN", "RENT")
	o := c.Own
	for _, item := range []struct {
		name string
		usd  decimal.Decimal
	}{{"depreciation", o.Depreciation}, {"power", o.Power}, {"cooling", o.Cooling}, {"colocation", o.Colocation},
		{"operations", o.Operations}, {"network and storage", o.Infrastructure}} {
		tb.Row(item.name, usd(item.usd), "")
	}
	tb.Row("total", usd(o.Total), usd(c.RentUSDPerMonth))
	tb.Row("an hour of one GPU's work", price(c.OwnUSDPerGPUHour), price(c.RentUSDPerGPUHour))
	if err := tb.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w)
	if c.BreakEvenMonths != nil {
		fmt.Fprintf(w, "break-even: after %s busy hours of each GPU, %s months\n", num(decimal.NewFromFloat(*c.BreakEvenHours)), strconv.FormatFloat(*c.BreakEvenMonths, 'f', 1, 64))
	} else {
		fmt.Fprintln(w, "break-even: never")
	}
	verdict := fmt.Sprintf("owning pays: %s a month to own against %s to rent", usd(o.Total), usd(c.RentUSDPerMonth))
	if !c.Pays {
		verdict = "owning does not pay: " + textcell.Clean(c.Reason, textcell.TextWidth)
	}
	_, err := fmt.Fprintln(w, verdict)
	return err
}

// share writes a share as a percentage to 0.1: 0.6 is 60%.
func share(x float64) string { return strconv.FormatFloat(math.Round(x*1000)/10, 'f', -1, 64) + "%" }
