package report

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpucost/gpucost/textcell"
)

// Widths of the plain-text renderings, in characters: a terminal (the report, the plan of
// `gpucost optimize`) and the text part of an email, which mail clients show without wrapping
// at about 78.
const (
	TerminalWidth  = textcell.TerminalWidth
	EmailTextWidth = 78
)

// WriteText writes the report as plain text for a terminal of TerminalWidth columns: the
// organisation's and the providers' tables, then per team its workloads (a workload table as
// `gpucost optimize` prints it), why, advice, the market this week and the caveats; sentences
// are wrapped.
func WriteText(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	tw := textcell.NewTable(bw, textcell.NameWidth)
	p := func(format string, args ...any) { fmt.Fprintf(bw, format, args...) }
	wrapped := func(s, first, rest string) { textcell.Wrap(bw, s, TerminalWidth, first, rest) }

	p("gpucost savings report, week %s (%s to %s)\n", r.Week.ID, r.Week.Start.Format("Mon 2006-01-02"), r.Week.End.AddDate(0, 0, -1).Format("Mon 2006-01-02"))
	wrapped(fmt.Sprintf("Plan of %s, report made %s. Money in USD; a month is %s hours.", stamp(r.PlanGeneratedAt), stamp(r.GeneratedAt), num(r.HoursPerMonth)), "", "")

	p("\nORGANISATION ($ a month)\n")
	tw.Row("TEAM", "WORKLOADS", "COMPARED", "TODAY", "RECOMMENDED", "SAVES", "SAVES %")
	for _, t := range r.Org.Teams {
		tw.Row(textcell.Clean(t.Team, 24), fmt.Sprint(t.Totals.Workloads), fmt.Sprint(t.Totals.Compared), usd(t.Totals.CurrentUSDPerMonth),
			usd(t.Totals.RecommendedUSDPerMonth), usd(t.Totals.SavingsUSDPerMonth), pct(t.Totals.SavingsPercent))
	}
	o := r.Org.Totals
	tw.Row("ALL TEAMS", fmt.Sprint(o.Workloads), fmt.Sprint(o.Compared), usd(o.CurrentUSDPerMonth), usd(o.RecommendedUSDPerMonth),
		usd(o.SavingsUSDPerMonth), pct(o.SavingsPercent))
	tw.Flush()

	if len(r.Providers) > 0 {
		p("\nPROVIDERS\n")
		tw.Row("PROVIDER", "LAST RUN", "STATUS", "LAST GOOD RUN", "IN PLAN")
		for _, pr := range r.Providers {
			tw.Row(textcell.Clean(pr.Provider, 40), optStamp(pr.LastRunAt), orDash(string(pr.LastStatus)), optStamp(pr.LastGoodAt), yesNo(!pr.Excluded))
		}
		tw.Flush()
	}

	for _, t := range r.Teams {
		p("\n%s\n", strings.Repeat("=", TerminalWidth))
		wrapped(fmt.Sprintf("TEAM %s <%s>", t.Name, t.Email), "", "  ")
		wrapped(headline(t.Totals), "", "")
		if s := t.SinceLastWeek; s != nil {
			p("\n")
			writeSinceText(bw, t, TerminalWidth)
		}

		p("\nWORKLOADS (today, then → recommended)\n")
		if err := writeWorkloadTable(bw, []Team{t}, false, "TOTAL", t.Totals); err != nil {
			return err
		}
		p("\nWhy:\n")
		for _, wl := range t.Workloads {
			wrapped(wl.Name+": "+wl.Why, "  ", "    ")
		}
		writeAdviceText(bw, t, TerminalWidth)
		writeMarketText(bw, t.Market, TerminalWidth)
		writeCaveatsText(bw, t, TerminalWidth)
		if len(t.Charts) > 0 {
			p("\n")
			wrapped(fmt.Sprintf("Price history charts for %s are in the HTML report and the email.", chartModels(t)), "", "")
		}
	}
	return bw.Flush()
}

// writeSinceText writes the comparison with the plan of a week earlier, wrapped to width.
func writeSinceText(w io.Writer, t Team, width int) {
	s := t.SinceLastWeek
	fmt.Fprintf(w, "SINCE LAST WEEK (against the plan of %s)\n", stamp(s.PlanGeneratedAt))
	for _, line := range sinceSentences(t.Totals, s) {
		textcell.Wrap(w, line, width, "  ", "    ")
	}
	for _, c := range s.Changes {
		textcell.Wrap(w, c.Message, width, "  - ", "    ")
	}
}

// writeAdviceText writes the team's advice, if any, under ADVICE: a line "  - WORKLOAD: text"
// per piece, wrapped to width with continuation lines indented by four spaces.
func writeAdviceText(w io.Writer, t Team, width int) {
	advised := t.Advised()
	if len(advised) == 0 {
		return
	}
	fmt.Fprint(w, "\nADVICE\n")
	for _, wl := range advised {
		for _, a := range wl.Advice {
			textcell.Wrap(w, wl.Name+": "+a.Text, width, "  - ", "    ")
		}
	}
}

// writeMarketText writes a team's market section: the prices as a table when it fits width,
// else as a list; the moves and new cheapest offers as wrapped sentences.
func writeMarketText(w io.Writer, m Market, width int) {
	fmt.Fprintln(w)
	textcell.Wrap(w, fmt.Sprintf("MARKET THIS WEEK: cheapest $/GPU-hour, %s against %s", stamp(m.Now), m.WeekAgo.Format("2006-01-02")), width, "", "  ")
	if len(m.Prices) == 0 {
		textcell.Wrap(w, fmt.Sprintf("No prices for %s.", strings.Join(m.GPUModels, ", ")), width, "  ", "  ")
	} else {
		header := []string{"GPU", "PRICE TYPE", "PROVIDER", "NOW", "WEEK AGO", "CHANGE", ""}
		var rows [][]string
		for _, mp := range m.Prices {
			mark := ""
			if mp.Cheapest {
				mark = "cheapest"
			}
			rows = append(rows, []string{mp.GPUModel, priceTypeLabel(string(mp.PriceType)), mp.Provider, optPrice(mp.NowUSDPerGPUHour),
				optPrice(mp.WeekAgoUSDPerGPUHour), signedPct(mp.ChangePercent), mark})
		}
		writeFittingTable(w, width, header, rows)
	}
	if len(m.Moves) > 0 {
		fmt.Fprint(w, "\nBiggest moves:\n")
		for _, mv := range m.Moves {
			textcell.Wrap(w, moveSentence(mv), width, "  ", "    ")
		}
	}
	if len(m.NewCheapest) > 0 {
		fmt.Fprint(w, "\nNew cheapest offers:\n")
		for _, nc := range m.NewCheapest {
			textcell.Wrap(w, newCheapestSentence(nc), width, "  ", "    ")
		}
	}
}

// writeCaveatsText writes the team's caveats, wrapped to width.
func writeCaveatsText(w io.Writer, t Team, width int) {
	fmt.Fprint(w, "\nCAVEATS\n")
	if len(t.Caveats) == 0 {
		fmt.Fprint(w, "  None.\n")
	}
	for _, c := range t.Caveats {
		textcell.Wrap(w, c.Message, width, "  - ", "    ")
	}
}

// writeFittingTable writes rows under header as an aligned table when its widest line fits
// width, and otherwise as a list: per row, its first cell, then a "header: cell" line for each
// other cell that is not empty (the cell alone under an empty header). Cells are cleaned
// (textcell).
func writeFittingTable(w io.Writer, width int, header []string, rows [][]string) {
	cols := make([]textcell.Column, len(header))
	for i, h := range header {
		cols[i].Head = h
	}
	for _, r := range rows {
		for i, cell := range r {
			cols[i].Add(cell, textcell.NameWidth)
		}
	}
	var b bytes.Buffer
	textcell.Fit(&b, cols, 0, nil) // every column whole; no spaces at the ends of lines, noise in an email
	if widest(b.String()) <= width {
		b.WriteTo(w)
		return
	}
	for j := range rows {
		textcell.Wrap(w, cols[0].Cells[j], width, "  ", "    ")
		for _, c := range cols[1:] {
			if cell := c.Cells[j]; cell != "" {
				if label := strings.ToLower(c.Head); label != "" {
					cell = label + ": " + cell
				}
				textcell.Wrap(w, cell, width, "    ", "      ")
			}
		}
	}
}

// writeWorkloadTable writes the workloads of teams as a table that fits TerminalWidth: per
// workload a line with its name (TEAM/WORKLOAD when withTeam) and what moving saves, then
// today's placement and, after →, the recommended one, each with its monthly cost; then the
// totals under totalLabel. Names and placements are cleaned (textcell) and cut with an
// ellipsis where they would not leave room for the money columns.
func writeWorkloadTable(w io.Writer, teams []Team, withTeam bool, totalLabel string, totals Totals) error {
	type line struct {
		indent, text, month, saves, pct string
	}
	header := line{"", "WORKLOAD: TODAY, → RECOMMENDED", "$/MONTH", "SAVES/MONTH", "SAVES %"}
	lines := []line{header}
	for _, t := range teams {
		for _, wl := range t.Workloads {
			name := wl.Name
			if withTeam {
				name = t.Name + "/" + wl.Name
			}
			rec := placementLine(wl.Recommended)
			if wl.Recommended == nil {
				rec = "nothing fits: " + wl.Why
			}
			lines = append(lines,
				line{"", name, "", savingsUSD(wl.Savings), savingsPct(wl.Savings)},
				line{"    ", placementLine(wl.Current), monthOf(wl.Current), "", ""},
				line{"  → ", rec, monthOf(wl.Recommended), "", ""})
		}
	}
	lines = append(lines,
		line{"", fmt.Sprintf("%s: %d workloads, %d compared", totalLabel, totals.Workloads, totals.Compared), "", usd(totals.SavingsUSDPerMonth), pct(totals.SavingsPercent)},
		line{"    ", "today", usd(totals.CurrentUSDPerMonth), "", ""},
		line{"  → ", "recommended", usd(totals.RecommendedUSDPerMonth), "", ""})
	// The money columns, right-aligned, take what they need, two spaces apart; the first
	// column gets the rest.
	var textWidth, month, saves, pctWidth int
	for _, l := range lines {
		month = max(month, utf8.RuneCountInString(l.month))
		saves = max(saves, utf8.RuneCountInString(l.saves))
		pctWidth = max(pctWidth, utf8.RuneCountInString(l.pct))
	}
	room := max(TerminalWidth-(2+month+2+saves+2+pctWidth), 24)
	for i := range lines {
		l := &lines[i]
		l.text = textcell.Clean(l.text, 0)
		if utf8.RuneCountInString(l.indent+l.text) > room {
			l.text = textcell.Clean(l.text, room-utf8.RuneCountInString(l.indent)-1) // Clean adds the ellipsis
		}
		textWidth = max(textWidth, utf8.RuneCountInString(l.indent+l.text))
	}
	bw := bufio.NewWriter(w)
	for _, l := range lines {
		out := pad(l.indent+l.text, textWidth, false) + "  " + pad(l.month, month, true) + "  " + pad(l.saves, saves, true) + "  " + pad(l.pct, pctWidth, true)
		fmt.Fprintln(bw, strings.TrimRight(out, " "))
	}
	return bw.Flush()
}

// pad pads s with spaces to width characters, on the left when right (for figures).
func pad(s string, width int, right bool) string {
	fill := strings.Repeat(" ", max(width-utf8.RuneCountInString(s), 0))
	if right {
		return fill + s
	}
	return s + fill
}

// widest is the length, in characters, of the longest line of s.
func widest(s string) int {
	n := 0
	for _, line := range strings.Split(s, "\n") {
		n = max(n, utf8.RuneCountInString(line))
	}
	return n
}

// chartModels lists a team's chart GPU models: "RTX-3090-24GB, GH200-96GB".
func chartModels(t Team) string {
	models := make([]string, len(t.Charts))
	for i, c := range t.Charts {
		models[i] = c.GPUModel
	}
	return strings.Join(models, ", ")
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
