package report

import (
	"bufio"
	"fmt"
	"io"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/textcell"
)

// PlanFormats are the formats of `gpucost optimize --output`: the plan alone, without the
// market.
var PlanFormats = []Format{FormatText, FormatMarkdown, FormatCSV, FormatJSON}

// WritePlan writes a plan on its own in format f, with the same tables, columns and money
// formatting as the weekly report: text is a terminal table (one line per workload, the
// organisation's totals, the providers the plan left out), markdown the report's
// organisation and workloads tables, csv the report's CSV (CSVHeader), json the plan itself.
func WritePlan(w io.Writer, plan *optimizer.Plan, f Format) error {
	if f == FormatJSON {
		return export.WriteJSON(w, plan)
	}
	r, err := Build(Input{Plan: plan, Now: plan.GeneratedAt, Week: WeekOf(plan.GeneratedAt).Start}, DefaultOptions())
	if err != nil {
		return err
	}
	switch f {
	case FormatMarkdown:
		m := mdWriter{bufio.NewWriter(w)}
		m.org(r)
		for _, t := range r.Teams {
			m.p("\n## Team %s\n\n", textcell.Markdown(t.Name))
			m.workloads(t)
			m.advice(t)
		}
		return m.Flush()
	case FormatCSV:
		return WriteCSV(w, r)
	case FormatText:
		return writePlanTable(w, r, plan.ExcludedProviders)
	}
	return fmt.Errorf("a plan is written as text, markdown, csv or json, not %s", f)
}

// writePlanTable writes the plan as a terminal table; names and reasons pass textcell.
func writePlanTable(w io.Writer, r *Report, excluded []optimizer.ExcludedProvider) error {
	tb := textcell.NewTable(w, textcell.NameWidth)
	tb.Row("TEAM", "WORKLOAD", "TODAY", "$/MONTH", "RECOMMENDED", "$/MONTH", "SAVES", "%")
	placed := func(p *Placement) string {
		if p == nil {
			return "–"
		}
		return providerRegion(p) + " " + placementGPU(p) + " " + priceTypeLabel(string(p.PriceType))
	}
	for _, t := range r.Teams {
		for _, wl := range t.Workloads {
			rec := placed(wl.Recommended)
			if wl.Status != optimizer.StatusOK {
				rec = "nothing fits: " + textcell.Clean(wl.Why, 60)
			}
			tb.Row(textcell.Clean(t.Name, 40), textcell.Clean(wl.Name, 40), placed(wl.Current), monthOf(wl.Current),
				rec, monthOf(wl.Recommended), savingsUSD(wl.Savings), savingsPct(wl.Savings))
		}
	}
	if err := tb.Flush(); err != nil {
		return err
	}
	o := r.Org.Totals
	fmt.Fprintf(w, "\norganisation: %d workloads, today %s/month, recommended %s/month, saves %s/month (%s)\n",
		o.Workloads, usd(o.CurrentUSDPerMonth), usd(o.RecommendedUSDPerMonth), usd(o.SavingsUSDPerMonth), pct(o.SavingsPercent))
	for _, t := range r.Teams {
		for _, wl := range t.Advised() {
			for _, a := range wl.Advice {
				if _, err := fmt.Fprintf(w, "advice %s/%s: %s\n", textcell.Clean(t.Name, 40), textcell.Clean(wl.Name, 40), a.Text); err != nil {
					return err
				}
			}
		}
	}
	for _, x := range excluded {
		if _, err := fmt.Fprintf(w, "excluded provider %s: %s\n", textcell.Clean(x.Provider, textcell.NameWidth), textcell.Clean(x.Reason, textcell.TextWidth)); err != nil {
			return err
		}
	}
	return nil
}
