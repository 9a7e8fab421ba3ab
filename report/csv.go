package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/textcell"
)

// CSVHeader is the header row of the CSV format: one row per workload. Columns are only ever
// added at the end.
var CSVHeader = []string{
	"week", "team", "team_email", "workload", "kind", "status",
	"current_provider", "current_region", "current_gpu_model", "current_gpu_count", "current_price_type", "current_price_source",
	"current_usd_per_hour", "current_hours_per_month", "current_usd_per_month",
	"recommended_provider", "recommended_region", "recommended_gpu_model", "recommended_gpu_count", "recommended_nodes",
	"recommended_price_type", "recommended_precision", "recommended_usd_per_hour", "recommended_hours_per_month", "recommended_usd_per_month",
	"savings_usd_per_month", "savings_percent", "why",
}

// WriteCSV writes one row per workload of every team, under CSVHeader. Money is a plain
// decimal (no currency sign or separators); empty means not applicable. Every cell passes
// textcell.CSV: no control characters, and no text a spreadsheet would run as a formula.
func WriteCSV(w io.Writer, r *Report) error {
	cw := textcell.NewCSVWriter(w)
	if err := cw.Write(CSVHeader); err != nil {
		return fmt.Errorf("writing the CSV report: %w", err)
	}
	for _, team := range r.Teams {
		for _, wl := range team.Workloads {
			row := []string{r.Week.ID, team.Name, team.Email, wl.Name, string(wl.Kind), string(wl.Status)}
			row = append(row, csvPlacement(wl.Current, false)...)
			row = append(row, csvPlacement(wl.Recommended, true)...)
			if s := wl.Savings; s != nil {
				row = append(row, s.USDPerMonth.String(), optDec(s.Percent))
			} else {
				row = append(row, "", "")
			}
			row = append(row, wl.Why)
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("writing the CSV report: %w", err)
			}
		}
	}
	if err := cw.Flush(); err != nil {
		return fmt.Errorf("writing the CSV report: %w", err)
	}
	return nil
}

func csvPlacement(p *Placement, recommended bool) []string {
	n := 9
	if recommended {
		n = 10
	}
	if p == nil {
		return make([]string, n)
	}
	money := func(d decimal.Decimal) string {
		if !p.Priced() {
			return ""
		}
		return d.String()
	}
	if recommended {
		return []string{p.Provider, p.Region, p.GPUModel, strconv.Itoa(p.GPUCount), strconv.Itoa(p.Nodes),
			string(p.PriceType), p.Precision, money(p.USDPerHour), money(p.HoursPerMonth), money(p.USDPerMonth)}
	}
	return []string{p.Provider, p.Region, p.GPUModel, strconv.Itoa(p.GPUCount), string(p.PriceType), string(p.PriceSource),
		money(p.USDPerHour), money(p.HoursPerMonth), money(p.USDPerMonth)}
}

func optDec(d *decimal.Decimal) string {
	if d == nil {
		return ""
	}
	return d.String()
}

// WriteJSON writes the report as indented JSON (see SCHEMA.md).
func WriteJSON(w io.Writer, r *Report) error {
	if err := export.WriteJSON(w, r); err != nil {
		return fmt.Errorf("writing the JSON report: %w", err)
	}
	return nil
}
