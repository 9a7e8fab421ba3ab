package report

import (
	"bufio"
	"fmt"
	"io"
	"slices"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/textcell"
)

// WritePlan writes a plan on its own, without the market, in format f, with the same tables, columns and money
// formatting as the weekly report: text is the report's workload table for every team (three
// lines a workload, TerminalWidth columns at most), the organisation's totals, a legend, the
// advice and the providers the plan left out, wrapped; markdown the report's
// organisation and workloads tables, csv the report's CSV (CSVHeader). In JSON `gpucost
// optimize` lists the plan's items (optimizer.PlanItem) in an envelope instead.
func WritePlan(w io.Writer, plan *optimizer.Plan, f Format) error {
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
	return fmt.Errorf("a plan is written as text, markdown or csv, not %s", f)
}

// writePlanTable writes the plan as a table that fits TerminalWidth (writeWorkloadTable:
// three lines a workload), a legend, and then the advice and the providers left out, wrapped.
func writePlanTable(w io.Writer, r *Report, excluded []optimizer.ExcludedProvider) error {
	if err := writeWorkloadTable(w, r.Teams, true, "ALL TEAMS", r.Org.Totals); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintln(bw)
	textcell.Wrap(bw, fmt.Sprintf("Each workload: TEAM/WORKLOAD and what moving saves a month, then today's placement and → the recommended one (provider, region, GPU model ×count, price type), each with its cost a month of %s hours. Money in USD.",
		num(r.HoursPerMonth)), TerminalWidth, "", "")
	if len(excluded) > 0 || slices.ContainsFunc(r.Teams, func(t Team) bool { return len(t.Advised()) > 0 }) {
		fmt.Fprintln(bw)
	}
	for _, t := range r.Teams {
		for _, wl := range t.Advised() {
			for _, a := range wl.Advice {
				textcell.Wrap(bw, fmt.Sprintf("advice %s/%s: %s", t.Name, wl.Name, a.Text), TerminalWidth, "", "    ")
			}
		}
	}
	for _, x := range excluded {
		textcell.Wrap(bw, fmt.Sprintf("excluded provider %s: %s", textcell.Clean(x.Provider, textcell.NameWidth), textcell.Clean(x.Reason, textcell.TextWidth)), TerminalWidth, "", "    ")
	}
	return bw.Flush()
}
