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
	m := mdWriter{bufio.NewWriter(w)}
	e := textcell.Markdown

	m.p("# gpucost savings report, week %s\n\n", r.Week.ID)
	m.p("%s to %s. Plan of %s, report made %s. Money in USD; a month is %s hours.\n\n",
		r.Week.Start.Format("Mon 2006-01-02"), r.Week.End.AddDate(0, 0, -1).Format("Mon 2006-01-02"), stamp(r.PlanGeneratedAt), stamp(r.GeneratedAt), num(r.HoursPerMonth))

	m.org(r)

	if len(r.Providers) > 0 {
		m.p("\n### Providers\n\n")
		m.row("Provider", "Last run", "Status", "Last good run", "In plan")
		m.sep("---", "---", "---", "---", "---")
		for _, pr := range r.Providers {
			m.row(e(pr.Provider), optStamp(pr.LastRunAt), e(orDash(string(pr.LastStatus))), optStamp(pr.LastGoodAt), yesNo(!pr.Excluded))
		}
	}

	for _, t := range r.Teams {
		m.p("\n## Team %s\n\n", e(t.Name))
		m.p("Report for %s. %s\n\n", e(t.Email), headline(t.Totals))
		if s := t.SinceLastWeek; s != nil {
			m.p("### Since last week\n\nAgainst the plan of %s.\n\n", stamp(s.PlanGeneratedAt))
			for _, line := range sinceSentences(t.Totals, s) {
				m.p("- %s\n", e(line))
			}
			for _, c := range s.Changes {
				m.p("- %s\n", e(c.Message))
			}
			m.p("\n")
		}
		m.workloads(t)
		m.advice(t)

		mk := t.Market
		m.p("\n### Market this week\n\n")
		m.p("Cheapest $/GPU-hour per provider, %s against %s.\n\n", stamp(mk.Now), mk.WeekAgo.Format("2006-01-02"))
		if len(mk.Prices) == 0 {
			m.p("No prices for %s.\n", e(strings.Join(mk.GPUModels, ", ")))
		} else {
			m.row("GPU", "Price type", "Provider", "Now", "Week ago", "Change")
			m.sep("---", "---", "---", "--:", "--:", "--:")
			for _, mp := range mk.Prices {
				now := optPrice(mp.NowUSDPerGPUHour)
				if mp.Cheapest {
					now = "**" + now + "**"
				}
				m.row(e(mp.GPUModel), e(priceTypeLabel(string(mp.PriceType))), e(mp.Provider), now, optPrice(mp.WeekAgoUSDPerGPUHour), signedPct(mp.ChangePercent))
			}
		}
		if len(mk.Moves) > 0 {
			m.p("\n**Biggest moves**\n\n")
			for _, mv := range mk.Moves {
				m.p("- %s\n", e(moveSentence(mv)))
			}
		}
		if len(mk.NewCheapest) > 0 {
			m.p("\n**New cheapest offers**\n\n")
			for _, nc := range mk.NewCheapest {
				m.p("- %s\n", e(newCheapestSentence(nc)))
			}
		}

		m.p("\n### Caveats\n\n")
		if len(t.Caveats) == 0 {
			m.p("None.\n")
		}
		for _, c := range t.Caveats {
			m.p("- %s\n", e(c.Message))
		}
		if opts.ChartDir != "" && len(t.Charts) > 0 {
			m.p("\n### Price history\n\n")
			for _, c := range t.Charts {
				m.p("![%s: cheapest $/GPU-hour per provider](%s)\n\n", e(c.GPUModel), path.Join(opts.ChartDir, ChartFile(t.Name, c, "svg")))
			}
		}
	}
	return m.Flush()
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

// mdWriter writes Markdown: paragraphs and table rows.
type mdWriter struct{ *bufio.Writer }

func (m mdWriter) p(format string, args ...any) { fmt.Fprintf(m, format, args...) }

func (m mdWriter) row(cells ...string) { m.p("| %s |\n", strings.Join(cells, " | ")) }

func (m mdWriter) sep(align ...string) { m.p("|%s|\n", strings.Join(align, "|")) }

// org writes the organisation's table: one line per team and the totals.
func (m mdWriter) org(r *Report) {
	e := textcell.Markdown
	m.p("## Organisation\n\n")
	m.row("Team", "Workloads", "Compared", "Today $/month", "Recommended $/month", "Saves $/month", "Saves %")
	m.sep("---", "--:", "--:", "--:", "--:", "--:", "--:")
	for _, t := range r.Org.Teams {
		m.row(e(t.Team), fmt.Sprint(t.Totals.Workloads), fmt.Sprint(t.Totals.Compared), usd(t.Totals.CurrentUSDPerMonth),
			usd(t.Totals.RecommendedUSDPerMonth), usd(t.Totals.SavingsUSDPerMonth), pct(t.Totals.SavingsPercent))
	}
	o := r.Org.Totals
	m.row("**All teams**", fmt.Sprint(o.Workloads), fmt.Sprint(o.Compared), "**"+usd(o.CurrentUSDPerMonth)+"**", "**"+usd(o.RecommendedUSDPerMonth)+"**",
		"**"+usd(o.SavingsUSDPerMonth)+"**", "**"+pct(o.SavingsPercent)+"**")
}

// workloads writes a team's before/after table.
func (m mdWriter) workloads(t Team) {
	e := textcell.Markdown
	m.p("### Workloads\n\n")
	m.row("Workload", "Today at", "GPUs", "$/h", "h/month", "$/month", "Recommended at", "GPUs", "Price type", "$/h", "$/month", "Saves $/month", "Saves %", "Why")
	m.sep("---", "---", "---", "--:", "--:", "--:", "---", "---", "---", "--:", "--:", "--:", "--:", "---")
	for _, wl := range t.Workloads {
		recType := "–"
		if wl.Recommended != nil {
			recType = priceTypeLabel(string(wl.Recommended.PriceType))
		}
		m.row(e(wl.Name), e(providerRegion(wl.Current)), e(placementGPU(wl.Current)), perHourOf(wl.Current), hoursOf(wl.Current), monthOf(wl.Current),
			e(providerRegion(wl.Recommended)), e(placementGPU(wl.Recommended)), e(recType), perHourOf(wl.Recommended), monthOf(wl.Recommended),
			savingsUSD(wl.Savings), savingsPct(wl.Savings), e(wl.Why))
	}
	tt := t.Totals
	m.row("**Total**", "", "", "", "", "**"+usd(tt.CurrentUSDPerMonth)+"**", "", "", "", "", "**"+usd(tt.RecommendedUSDPerMonth)+"**",
		"**"+usd(tt.SavingsUSDPerMonth)+"**", "**"+pct(tt.SavingsPercent)+"**", "")
}

// advice writes the advice on a team's workloads, when there is any.
func (m mdWriter) advice(t Team) {
	advised := t.Advised()
	if len(advised) == 0 {
		return
	}
	m.p("\n### Advice\n\n")
	for _, wl := range advised {
		for _, a := range wl.Advice {
			m.p("- **%s**: %s\n", textcell.Markdown(wl.Name), textcell.Markdown(a.Text))
		}
	}
}
