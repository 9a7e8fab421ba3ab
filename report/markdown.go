package report

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/gpucost/gpucost/textcell"
)

// MarkdownOptions tune WriteMarkdown.
type MarkdownOptions struct {
	// ChartDir, when set, adds each chart as an image linked to ChartDir/ChartFile(team, chart,
	// "svg"): the caller writes the SVG files there.
	ChartDir string
}

// WriteMarkdown writes the report as GitHub-flavoured Markdown.
func WriteMarkdown(w io.Writer, r *Report, opts MarkdownOptions) error {
	bw := bufio.NewWriter(w)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	row := func(cells ...string) { p("| %s |\n", strings.Join(cells, " | ")) }
	sep := func(align ...string) { p("|%s|\n", strings.Join(align, "|")) }
	e := textcell.Markdown

	p("# gpucost savings report, week %s\n\n", r.Week.ID)
	p("%s to %s. Plan of %s, report made %s. Money in USD; a month is %s hours.\n\n",
		r.Week.Start.Format("Mon 2006-01-02"), r.Week.End.AddDate(0, 0, -1).Format("Mon 2006-01-02"), stamp(r.PlanGeneratedAt), stamp(r.GeneratedAt), num(r.HoursPerMonth))

	p("## Organisation\n\n")
	row("Team", "Workloads", "Compared", "Today $/month", "Recommended $/month", "Saves $/month", "Saves %")
	sep("---", "--:", "--:", "--:", "--:", "--:", "--:")
	for _, t := range r.Org.Teams {
		row(e(t.Team), fmt.Sprint(t.Totals.Workloads), fmt.Sprint(t.Totals.Compared), usd(t.Totals.CurrentUSDPerMonth),
			usd(t.Totals.RecommendedUSDPerMonth), usd(t.Totals.SavingsUSDPerMonth), pct(t.Totals.SavingsPercent))
	}
	o := r.Org.Totals
	row("**All teams**", fmt.Sprint(o.Workloads), fmt.Sprint(o.Compared), "**"+usd(o.CurrentUSDPerMonth)+"**", "**"+usd(o.RecommendedUSDPerMonth)+"**",
		"**"+usd(o.SavingsUSDPerMonth)+"**", "**"+pct(o.SavingsPercent)+"**")

	if len(r.Providers) > 0 {
		p("\n### Providers\n\n")
		row("Provider", "Last run", "Status", "Last good run", "In plan")
		sep("---", "---", "---", "---", "---")
		for _, pr := range r.Providers {
			row(e(pr.Provider), optStamp(pr.LastRunAt), e(orDash(string(pr.LastStatus))), optStamp(pr.LastGoodAt), yesNo(!pr.Excluded))
		}
	}

	for _, t := range r.Teams {
		p("\n## Team %s\n\n", e(t.Name))
		p("Report for %s. %s\n\n", e(t.Email), headline(t.Totals))
		p("### Workloads\n\n")
		row("Workload", "Today at", "GPUs", "$/h", "h/month", "$/month", "Recommended at", "GPUs", "Price type", "$/h", "$/month", "Saves $/month", "Saves %", "Why")
		sep("---", "---", "---", "--:", "--:", "--:", "---", "---", "---", "--:", "--:", "--:", "--:", "---")
		for _, wl := range t.Workloads {
			recType := "–"
			if wl.Recommended != nil {
				recType = priceTypeLabel(string(wl.Recommended.PriceType))
			}
			row(e(wl.Name), e(providerRegion(wl.Current)), e(placementGPU(wl.Current)), perHourOf(wl.Current), hoursOf(wl.Current), monthOf(wl.Current),
				e(providerRegion(wl.Recommended)), e(placementGPU(wl.Recommended)), e(recType), perHourOf(wl.Recommended), monthOf(wl.Recommended),
				savingsUSD(wl.Savings), savingsPct(wl.Savings), e(wl.Why))
		}
		tt := t.Totals
		row("**Total**", "", "", "", "", "**"+usd(tt.CurrentUSDPerMonth)+"**", "", "", "", "", "**"+usd(tt.RecommendedUSDPerMonth)+"**",
			"**"+usd(tt.SavingsUSDPerMonth)+"**", "**"+pct(tt.SavingsPercent)+"**", "")

		m := t.Market
		p("\n### Market this week\n\n")
		p("Cheapest $/GPU-hour per provider, %s against %s.\n\n", stamp(m.Now), m.WeekAgo.Format("2006-01-02"))
		if len(m.Prices) == 0 {
			p("No prices for %s.\n", e(strings.Join(m.GPUModels, ", ")))
		} else {
			row("GPU", "Price type", "Provider", "Now", "Week ago", "Change")
			sep("---", "---", "---", "--:", "--:", "--:")
			for _, mp := range m.Prices {
				now := optPrice(mp.NowUSDPerGPUHour)
				if mp.Cheapest {
					now = "**" + now + "**"
				}
				row(e(mp.GPUModel), e(priceTypeLabel(string(mp.PriceType))), e(mp.Provider), now, optPrice(mp.WeekAgoUSDPerGPUHour), signedPct(mp.ChangePercent))
			}
		}
		if len(m.Moves) > 0 {
			p("\n**Biggest moves**\n\n")
			for _, mv := range m.Moves {
				p("- %s\n", e(moveSentence(mv)))
			}
		}
		if len(m.NewCheapest) > 0 {
			p("\n**New cheapest offers**\n\n")
			for _, nc := range m.NewCheapest {
				p("- %s\n", e(newCheapestSentence(nc)))
			}
		}

		p("\n### Caveats\n\n")
		if len(t.Caveats) == 0 {
			p("None.\n")
		}
		for _, c := range t.Caveats {
			p("- %s\n", e(c.Message))
		}
		if opts.ChartDir != "" && len(t.Charts) > 0 {
			p("\n### Price history\n\n")
			for _, c := range t.Charts {
				p("![%s: cheapest $/GPU-hour per provider](%s)\n\n", e(c.GPUModel), path.Join(opts.ChartDir, ChartFile(t.Name, c, "svg")))
			}
		}
	}
	return bw.Flush()
}

// FileStem is a file name for a team: its name in [a-z0-9-], with a short hash of the name
// when the name is not already such a slug, so that two teams never share a file.
func FileStem(team string) string {
	slug := strings.Trim(nonSlug.ReplaceAllString(strings.ToLower(team), "-"), "-")
	if len(slug) > 48 {
		slug = strings.TrimRight(slug[:48], "-")
	}
	if slug == team && slug != "" {
		return slug
	}
	sum := sha256.Sum256([]byte(team))
	if slug == "" {
		slug = "team"
	}
	return slug + "-" + hex.EncodeToString(sum[:3])
}

// ChartFile is the file name of a team's chart: <team stem>-<chart id>.<ext>.
func ChartFile(team string, c Chart, ext string) string {
	return FileStem(team) + "-" + c.ID + "." + ext
}
