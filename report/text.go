package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes the report as plain-text tables for a terminal (and the text part of the
// email).
func WriteText(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', 0)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	row := func(cells ...string) { fmt.Fprintln(tw, strings.Join(cells, "\t")) }
	flush := func() { tw.Flush() }

	p("gpucost savings report, week %s (%s to %s)\n", r.Week.ID, r.Week.Start.Format("Mon 2006-01-02"), r.Week.End.AddDate(0, 0, -1).Format("Mon 2006-01-02"))
	p("Plan of %s, report made %s. Money in USD; a month is %s hours.\n", stamp(r.PlanGeneratedAt), stamp(r.GeneratedAt), num(r.HoursPerMonth))

	p("\nORGANISATION\n")
	row("TEAM", "WORKLOADS", "COMPARED", "TODAY $/MONTH", "RECOMMENDED $/MONTH", "SAVES $/MONTH", "SAVES %")
	for _, t := range r.Org.Teams {
		row(t.Team, fmt.Sprint(t.Totals.Workloads), fmt.Sprint(t.Totals.Compared), usd(t.Totals.CurrentUSDPerMonth),
			usd(t.Totals.RecommendedUSDPerMonth), usd(t.Totals.SavingsUSDPerMonth), pct(t.Totals.SavingsPercent))
	}
	o := r.Org.Totals
	row("ALL TEAMS", fmt.Sprint(o.Workloads), fmt.Sprint(o.Compared), usd(o.CurrentUSDPerMonth), usd(o.RecommendedUSDPerMonth),
		usd(o.SavingsUSDPerMonth), pct(o.SavingsPercent))
	flush()

	if len(r.Providers) > 0 {
		p("\nPROVIDERS\n")
		row("PROVIDER", "LAST RUN", "STATUS", "LAST GOOD RUN", "IN PLAN")
		for _, pr := range r.Providers {
			row(pr.Provider, optStamp(pr.LastRunAt), orDash(string(pr.LastStatus)), optStamp(pr.LastGoodAt), yesNo(!pr.Excluded))
		}
		flush()
	}

	for _, t := range r.Teams {
		p("\n%s\n", strings.Repeat("=", 100))
		p("TEAM %s <%s>\n", t.Name, t.Email)
		p("%s\n", headline(t.Totals))

		p("\nWORKLOADS (today → recommended)\n")
		row("WORKLOAD", "TODAY AT", "GPUS", "$/H", "H/MONTH", "$/MONTH", "→", "RECOMMENDED AT", "GPUS", "PRICE TYPE", "$/H", "$/MONTH", "SAVES $/MONTH", "SAVES %")
		for _, wl := range t.Workloads {
			recType := "–"
			if wl.Recommended != nil {
				recType = priceTypeLabel(string(wl.Recommended.PriceType))
			}
			row(wl.Name, providerRegion(wl.Current), placementGPU(wl.Current), perHourOf(wl.Current), hoursOf(wl.Current), monthOf(wl.Current), "→",
				providerRegion(wl.Recommended), placementGPU(wl.Recommended), recType, perHourOf(wl.Recommended), monthOf(wl.Recommended),
				savingsUSD(wl.Savings), savingsPct(wl.Savings))
		}
		tt := t.Totals
		row("TOTAL", "", "", "", "", usd(tt.CurrentUSDPerMonth), "→", "", "", "", "", usd(tt.RecommendedUSDPerMonth), usd(tt.SavingsUSDPerMonth), pct(tt.SavingsPercent))
		flush()
		p("\nWhy:\n")
		for _, wl := range t.Workloads {
			p("  %s: %s\n", wl.Name, wl.Why)
		}
		if advised := t.Advised(); len(advised) > 0 {
			p("\nADVICE\n")
			for _, wl := range advised {
				for _, a := range wl.Advice {
					p("  - %s: %s\n", wl.Name, a.Text)
				}
			}
		}

		m := t.Market
		p("\nMARKET THIS WEEK: cheapest $/GPU-hour, %s against %s\n", stamp(m.Now), m.WeekAgo.Format("2006-01-02"))
		if len(m.Prices) == 0 {
			p("  No prices for %s.\n", strings.Join(m.GPUModels, ", "))
		} else {
			row("GPU", "PRICE TYPE", "PROVIDER", "NOW", "WEEK AGO", "CHANGE", "")
			for _, mp := range m.Prices {
				mark := ""
				if mp.Cheapest {
					mark = "cheapest"
				}
				row(mp.GPUModel, priceTypeLabel(string(mp.PriceType)), mp.Provider, optPrice(mp.NowUSDPerGPUHour), optPrice(mp.WeekAgoUSDPerGPUHour),
					signedPct(mp.ChangePercent), mark)
			}
			flush()
		}
		if len(m.Moves) > 0 {
			p("\nBiggest moves:\n")
			for _, mv := range m.Moves {
				p("  %s\n", moveSentence(mv))
			}
		}
		if len(m.NewCheapest) > 0 {
			p("\nNew cheapest offers:\n")
			for _, nc := range m.NewCheapest {
				p("  %s\n", newCheapestSentence(nc))
			}
		}

		p("\nCAVEATS\n")
		if len(t.Caveats) == 0 {
			p("  None.\n")
		}
		for _, c := range t.Caveats {
			p("  - %s\n", c.Message)
		}
		if len(t.Charts) > 0 {
			models := make([]string, len(t.Charts))
			for i, c := range t.Charts {
				models[i] = c.GPUModel
			}
			p("\nPrice history charts for %s are in the HTML report and the email.\n", strings.Join(models, ", "))
		}
	}
	return bw.Flush()
}

// moveSentence describes a price move: H100-SXM-80GB on-demand at lambda: $2.49 → $2.99 (+20.1%).
func moveSentence(m MarketPrice) string {
	return fmt.Sprintf("%s %s at %s: %s → %s (%s)", m.GPUModel, priceTypeLabel(string(m.PriceType)), m.Provider,
		optPrice(m.WeekAgoUSDPerGPUHour), optPrice(m.NowUSDPerGPUHour), signedPct(m.ChangePercent))
}

// newCheapestSentence describes a new cheapest offer.
func newCheapestSentence(n NewCheapest) string {
	where := n.Provider
	if n.Region != "" {
		where += " " + n.Region
	}
	if n.OfferID != "" {
		where += " (offer " + n.OfferID + ")"
	}
	if n.NewLeader {
		return fmt.Sprintf("%s %s: %s at %s is now the cheapest; a week ago it was %s at %s", n.GPUModel, priceTypeLabel(string(n.PriceType)),
			where, price(n.USDPerGPUHour), n.WeekAgoProvider, price(n.WeekAgoUSDPerGPUHour))
	}
	return fmt.Sprintf("%s %s: %s at %s, down from %s a week ago", n.GPUModel, priceTypeLabel(string(n.PriceType)),
		where, price(n.USDPerGPUHour), price(n.WeekAgoUSDPerGPUHour))
}

// optStamp formats an optional time; "–" when absent.
func optStamp(t *time.Time) string {
	if t == nil {
		return "–"
	}
	return stamp(*t)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
