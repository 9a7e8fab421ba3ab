package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/gpucost/gpucost/textcell"
)

// writeEmailText writes the text part of team t's email: what its team lead reads in a client
// that shows no HTML, every line at most EmailTextWidth characters. It holds the team's own
// figures only: the headline, since last week, the dashboard link, a block of "label: value"
// lines per workload, the advice, the market for its GPUs and the caveats that concern it.
func writeEmailText(w io.Writer, r *Report, t Team, dashboardURL string) error {
	const width = EmailTextWidth
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	para := func(s string) { textcell.Wrap(bw, s, width, "", "") }

	para(fmt.Sprintf("gpucost weekly savings for team %s, week %s", t.Name, r.Week.ID))
	para(fmt.Sprintf("%s to %s. Plan of %s. Money in USD; a month is %s hours.", r.Week.Start.Format("Mon 2006-01-02"),
		r.Week.End.AddDate(0, 0, -1).Format("Mon 2006-01-02"), stamp(r.PlanGeneratedAt), num(r.HoursPerMonth)))
	p("\n")
	para(headline(t.Totals))
	if dashboardURL != "" {
		p("\nDashboard: %s\n", dashboardURL)
	}
	p("\n")
	if t.SinceLastWeek != nil {
		writeSinceText(bw, t, width)
	} else {
		para("SINCE LAST WEEK: no plan of a week earlier is stored, so there is nothing to compare with yet.")
	}

	p("\nWORKLOADS\n")
	for _, wl := range t.Workloads {
		p("\n")
		para(fmt.Sprintf("%s (%s)", wl.Name, kindLabel(wl)))
		field := func(label, value string) {
			if label != "" {
				label += ":"
			}
			textcell.Wrap(bw, value, width, fmt.Sprintf("  %-13s", label), strings.Repeat(" ", 15))
		}
		field("Today", placementLine(wl.Current))
		if wl.Current != nil {
			field("", costLine(wl.Current))
		}
		if wl.Recommended != nil {
			field("Recommended", placementLine(wl.Recommended))
			field("", costLine(wl.Recommended))
		} else {
			field("Recommended", "nothing fits")
		}
		if s := wl.Savings; s != nil {
			field("Saves", fmt.Sprintf("%s a month (%s)", usd(s.USDPerMonth), pct(s.Percent)))
		}
		field("Why", wl.Why)
	}
	p("\n")
	tt := t.Totals
	para(fmt.Sprintf("Total over the %d of %d workloads priced both ways: today %s a month, recommended %s, saves %s (%s).",
		tt.Compared, tt.Workloads, usd(tt.CurrentUSDPerMonth), usd(tt.RecommendedUSDPerMonth), usd(tt.SavingsUSDPerMonth), pct(tt.SavingsPercent)))

	writeAdviceText(bw, t, width)
	writeMarketText(bw, t.Market, width)
	writeCaveatsText(bw, t, width)
	if len(t.Charts) > 0 {
		p("\n")
		para(fmt.Sprintf("Price history charts for %s are in the HTML part of this email.", chartModels(t)))
	}
	p("\n")
	para(fmt.Sprintf("Made by gpucost from scraped list prices for team %s (%s). %s", t.Name, t.Email, methodNote))
	return bw.Flush()
}

// methodNote says what the savings compare, under every report and email.
const methodNote = "Savings compare today's placement, priced at today's market or at the price paid, with the cheapest placement that fits each workload; the monthly totals count only workloads where both are priced."

// costLine is a priced placement's cost: "$23.92/h × 730 h = $17,461.60 a month"; "not
// priced" when it has no price.
func costLine(p *Placement) string {
	if !p.Priced() {
		return "not priced: no offer on the market matches it and no price paid is given"
	}
	s := fmt.Sprintf("%s/h × %s h = %s a month", perHourOf(p), hoursOf(p), monthOf(p))
	if p.HoursPerRun != nil && p.USDPerRun != nil {
		s += fmt.Sprintf("; %s a run of %s h", usd(*p.USDPerRun), num(*p.HoursPerRun))
	}
	return s
}

// kindLabel is a workload's kind for people: "full finetune".
func kindLabel(wl Workload) string { return strings.ReplaceAll(string(wl.Kind), "_", " ") }
