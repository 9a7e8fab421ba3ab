package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/money"
)

// Format is an output format of a report.
type Format string

// Formats.
const (
	FormatText     Format = "text"     // terminal tables
	FormatMarkdown Format = "markdown" // GitHub-flavoured Markdown
	FormatHTML     Format = "html"     // a standalone page with inline SVG charts
	FormatCSV      Format = "csv"      // one row per workload
	FormatJSON     Format = "json"     // the Report model, see SCHEMA.md
)

// Formats lists every format, in a stable order.
var Formats = []Format{FormatText, FormatMarkdown, FormatHTML, FormatCSV, FormatJSON}

// ParseFormat returns the format named s (md and table are accepted as aliases).
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "text", "table", "txt":
		return FormatText, nil
	case "markdown", "md":
		return FormatMarkdown, nil
	case "html":
		return FormatHTML, nil
	case "csv":
		return FormatCSV, nil
	case "json":
		return FormatJSON, nil
	}
	return "", fmt.Errorf("unknown report format %q (want text, markdown, html, csv or json)", s)
}

// Ext is the file extension of the format, without the dot.
func (f Format) Ext() string {
	switch f {
	case FormatText:
		return "txt"
	case FormatMarkdown:
		return "md"
	}
	return string(f)
}

// Render writes the report in format f. HTML gets inline SVG charts, Markdown none (see
// WriteMarkdown to link chart files).
func (r *Report) Render(w io.Writer, f Format) error {
	switch f {
	case FormatText:
		return WriteText(w, r)
	case FormatMarkdown:
		return WriteMarkdown(w, r, MarkdownOptions{})
	case FormatHTML:
		return WriteHTML(w, r, HTMLOptions{Charts: ChartsInlineSVG})
	case FormatCSV:
		return WriteCSV(w, r)
	case FormatJSON:
		return WriteJSON(w, r)
	}
	return fmt.Errorf("unknown report format %q", f)
}

// usd formats money: $1,014.70, -$3.50.
func usd(d decimal.Decimal) string { return money.USD(d) }

// usdPerHour formats an hourly price: $1.39/h.
func usdPerHour(d decimal.Decimal) string { return money.Price(d) + "/h" }

// unitUSD formats the price of a unit of work (money.Unit).
func unitUSD(d decimal.Decimal) string { return money.Unit(d) }

// price formats a unit price with two to four decimals (money.Price).
func price(d decimal.Decimal) string { return money.Price(d) }

// optPrice formats an optional price; "–" when absent.
func optPrice(d *decimal.Decimal) string {
	if d == nil {
		return "–"
	}
	return price(*d)
}

// pct formats an optional percentage: 85.6%; "–" when absent.
func pct(d *decimal.Decimal) string {
	if d == nil {
		return "–"
	}
	return d.StringFixed(1) + "%"
}

// signedPct formats a change in percent with its sign: +12.5%, -3.0%.
func signedPct(d *decimal.Decimal) string {
	if d == nil {
		return "–"
	}
	return money.SignedPercent(*d)
}

// num formats a plain decimal with separators: 730, 84.62.
func num(d decimal.Decimal) string { return money.Thousands(d.String()) }

// gpus formats a GPU model and count: H100-SXM-80GB ×8.
func gpus(model string, count int) string { return fmt.Sprintf("%s ×%d", model, count) }

// placementGPU formats a placement's GPUs with its nodes when more than one.
func placementGPU(p *Placement) string {
	if p == nil {
		return "–"
	}
	s := gpus(p.GPUModel, p.GPUCount)
	if p.Nodes > 1 {
		s += fmt.Sprintf(" (%d nodes)", p.Nodes)
	}
	return s
}

// providerRegion formats a placement's provider and region: lambda us-east-3.
func providerRegion(p *Placement) string {
	if p == nil {
		return "–"
	}
	if p.Region == "" {
		return p.Provider
	}
	return p.Provider + " " + p.Region
}

// placementLine is a placement on one line: lambda us-east-1 H100-SXM-80GB ×8 on-demand.
func placementLine(p *Placement) string {
	if p == nil {
		return "–"
	}
	return providerRegion(p) + " " + placementGPU(p) + " " + priceTypeLabel(string(p.PriceType))
}

// hoursOf formats a placement's monthly hours, "–" for none.
func hoursOf(p *Placement) string {
	if !p.Priced() {
		return "–"
	}
	return num(p.HoursPerMonth)
}

func perHourOf(p *Placement) string {
	if !p.Priced() {
		return "–"
	}
	return price(p.USDPerHour)
}

func monthOf(p *Placement) string {
	if !p.Priced() {
		return "–"
	}
	return usd(p.USDPerMonth)
}

func savingsUSD(s *Savings) string {
	if s == nil {
		return "–"
	}
	return usd(s.USDPerMonth)
}

func savingsPct(s *Savings) string {
	if s == nil {
		return "–"
	}
	return pct(s.Percent)
}

// priceTypeLabel is a short label for a price type: on-demand, spot.
func priceTypeLabel(pt string) string { return strings.ReplaceAll(pt, "_", "-") }

// headline is a team's one-sentence summary.
func headline(t Totals) string {
	switch {
	case t.Compared == 0 && t.Workloads == 0:
		return "No workloads."
	case t.Compared == 0:
		return fmt.Sprintf("None of the %d workloads could be compared.", t.Workloads)
	case t.SavingsUSDPerMonth.IsPositive():
		return fmt.Sprintf("Moving to the recommended placements saves %s a month (%s) on %d of %d workloads: %s instead of %s.",
			usd(t.SavingsUSDPerMonth), pct(t.SavingsPercent), t.Compared, t.Workloads, usd(t.RecommendedUSDPerMonth), usd(t.CurrentUSDPerMonth))
	case t.SavingsUSDPerMonth.IsZero():
		return fmt.Sprintf("All %d compared workloads already run on their cheapest fitting placement.", t.Compared)
	}
	return fmt.Sprintf("The recommended placements cost %s a month more than today's on %d of %d workloads.",
		usd(t.SavingsUSDPerMonth.Neg()), t.Compared, t.Workloads)
}
