package report

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
)

// ChartMode says how the HTML renderer shows charts.
type ChartMode int

// Chart modes.
const (
	ChartsInlineSVG ChartMode = iota // <svg> inside the page: one self-contained file
	ChartsCID                        // <img src="cid:…">: PNG parts of the email (see CID)
	ChartsNone                       // no charts
)

// HTMLOptions tune WriteHTML.
type HTMLOptions struct {
	Charts ChartMode
}

//go:embed templates/report.html.tmpl
var htmlTemplateText string

// htmlTemplate is parsed once; the template is part of the binary and parsing cannot fail at
// run time once a test has parsed it.
var htmlTemplate = template.Must(template.New("report").Funcs(template.FuncMap{
	"usd":          usd,
	"price":        price,
	"optPrice":     optPrice,
	"pct":          pct,
	"signedPct":    signedPct,
	"stamp":        stamp,
	"optStamp":     optStamp,
	"num":          num,
	"gpus":         placementGPU,
	"where":        providerRegion,
	"perHour":      perHourOf,
	"hours":        hoursOf,
	"month":        monthOf,
	"saves":        savingsUSD,
	"savesPct":     savingsPct,
	"ptype":        func(v any) string { return priceTypeLabel(fmt.Sprint(v)) },
	"headline":     headline,
	"move":         moveSentence,
	"newCheapest":  newCheapestSentence,
	"stem":         FileStem,
	"css":          css,
	"orDash":       orDash,
	"yesNo":        yesNo,
	"date":         func(t interface{ Format(string) string }) string { return t.Format("2006-01-02") },
	"lastDay":      func(w Week) string { return w.End.AddDate(0, 0, -1).Format("Mon 2006-01-02") },
	"firstDay":     func(w Week) string { return w.Start.Format("Mon 2006-01-02") },
	"changeCSS":    changeCSS,
	"savingsCSS":   savingsCSS,
	"cid":          CID,
	"svg":          func(c Chart) (template.HTML, error) { return svgHTML(c) },
	"pxW":          func() int { return ChartPixelWidth },
	"pxH":          func() int { return ChartPixelHeight },
	"since":        sinceSentences,
	"kind":         kindLabel,
	"marketGroups": marketGroups,
	"side":         newSideView,
	"methodNote":   func() string { return methodNote },
}).Parse(htmlTemplateText))

// htmlData is what the page and the email templates see.
type htmlData struct {
	*Report
	Mode ChartMode
	// Team is the email's one team; nil for the page.
	Team *Team
	// DashboardURL is the email's link to the dashboard; "" for none.
	DashboardURL string
}

// View is what the team template sees of team t.
func (d htmlData) View(t Team) teamView { return teamView{Team: t, Mode: d.Mode, Email: d.Team != nil} }

// teamView is a team's sections with how to show its charts, and whether they are an email's.
type teamView struct {
	Team  Team
	Mode  ChartMode
	Email bool
}

// Chart modes as template booleans.
func (v teamView) InlineSVG() bool  { return v.Mode == ChartsInlineSVG }
func (v teamView) CIDImages() bool  { return v.Mode == ChartsCID }
func (v teamView) ShowCharts() bool { return v.Mode != ChartsNone }

// sideView is one side of a workload's card: today's placement or the recommended one.
type sideView struct {
	Label, Class, Style string
	Placement           *Placement
	// None is said when there is no placement.
	None string
}

func newSideView(label, class string, p *Placement, none string) sideView {
	style := "side"
	if label != "Today" {
		style = "siderec"
	}
	return sideView{Label: label, Class: class, Style: style, Placement: p, None: none}
}

// marketGroup is the market's prices of one GPU model and price type.
type marketGroup struct {
	GPUModel  string
	PriceType string
	Prices    []MarketPrice
}

// marketGroups groups a market's prices, which come ordered by GPU model and price type.
func marketGroups(prices []MarketPrice) []marketGroup {
	var out []marketGroup
	for _, p := range prices {
		if n := len(out); n == 0 || out[n-1].GPUModel != p.GPUModel || out[n-1].PriceType != string(p.PriceType) {
			out = append(out, marketGroup{GPUModel: p.GPUModel, PriceType: string(p.PriceType)})
		}
		out[len(out)-1].Prices = append(out[len(out)-1].Prices, p)
	}
	return out
}

// WriteHTML writes the report as an HTML document with inline styles, readable in a browser:
// the organisation's and the providers' tables, then every team. Every text from the data is
// escaped by html/template.
func WriteHTML(w io.Writer, r *Report, opts HTMLOptions) error {
	return writeHTML(w, "page", htmlData{Report: r, Mode: opts.Charts})
}

// writeEmailHTML writes the HTML part of team t's email: that team's sections only, laid out
// for mail clients at any width, its charts as cid: images, a link to dashboardURL unless "".
func writeEmailHTML(w io.Writer, r *Report, t Team, dashboardURL string) error {
	return writeHTML(w, "email", htmlData{Report: r, Mode: ChartsCID, Team: &t, DashboardURL: dashboardURL})
}

func writeHTML(w io.Writer, name string, d htmlData) error {
	var b bytes.Buffer
	if err := htmlTemplate.ExecuteTemplate(&b, name, d); err != nil {
		return fmt.Errorf("rendering the HTML report: %w", err)
	}
	_, err := b.WriteTo(w)
	return err
}

// CID is the Content-ID (without angle brackets) of a chart's PNG in an email.
func CID(c Chart) string { return c.ID + "@gpucost" }

// svgHTML returns a chart's SVG for inline use. The SVG comes from the plotting library,
// which escapes the text it draws (provider and GPU names).
func svgHTML(c Chart) (template.HTML, error) {
	s, err := inlineSVG(c)
	if err != nil {
		return "", err
	}
	return template.HTML(s), nil //nolint:gosec // generated by gonum/plot's SVG canvas, text escaped there
}

// styles are the inline styles of the HTML report: mail clients drop <style> blocks, so the
// elements carry their own.
var styles = map[string]string{
	"body":      "margin:0;padding:16px;background:#f6f7f9;color:#1f2328;font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:14px;line-height:1.45",
	"page":      "max-width:1180px;margin:0 auto;background:#ffffff;padding:20px 20px;border:1px solid #d0d7de;border-radius:6px",
	"scroll":    "overflow-x:auto",
	"ebody":     "margin:0;padding:0;background:#f6f7f9;color:#1f2328;font-family:-apple-system,Segoe UI,Helvetica,Arial,sans-serif;font-size:14px;line-height:1.45",
	"frame":     "width:100%;background:#f6f7f9;border-collapse:collapse",
	"framecell": "padding:16px 8px",
	"sheet":     "width:100%;max-width:760px;background:#ffffff;border:1px solid #d0d7de;border-radius:6px;border-collapse:separate",
	"sheetcell": "padding:20px 20px;text-align:left",
	"h1":        "font-size:22px;margin:0 0 4px 0",
	"h2":        "font-size:18px;margin:28px 0 6px 0;padding-top:12px;border-top:2px solid #d0d7de",
	"h3":        "font-size:15px;margin:20px 0 6px 0",
	"meta":      "color:#57606a;margin:0 0 12px 0",
	"lead":      "font-size:15px;margin:4px 0 12px 0",
	"linkp":     "margin:12px 0",
	"button":    "display:inline-block;padding:7px 14px;background:#0969da;color:#ffffff;text-decoration:none;border-radius:6px;font-weight:bold",
	"a":         "color:#0969da",
	"table":     "border-collapse:collapse;width:100%;margin:4px 0 8px 0;font-size:12.5px",
	"th":        "text-align:left;padding:4px 6px;background:#f0f3f6;border-bottom:2px solid #d0d7de;white-space:nowrap",
	"thr":       "text-align:right;padding:4px 6px;background:#f0f3f6;border-bottom:2px solid #d0d7de;white-space:nowrap",
	"td":        "text-align:left;padding:4px 6px;border-bottom:1px solid #e6e9ed;vertical-align:top;overflow-wrap:anywhere;word-break:break-word",
	"tdr":       "text-align:right;padding:4px 6px;border-bottom:1px solid #e6e9ed;vertical-align:top;white-space:nowrap",
	"tdn":       "text-align:left;padding:4px 6px;border-bottom:1px solid #e6e9ed;vertical-align:top;white-space:nowrap",
	"group":     "text-align:left;padding:8px 6px 3px 6px;border-bottom:1px solid #d0d7de",
	"total":     "text-align:right;padding:4px 6px;border-top:2px solid #d0d7de;font-weight:bold;white-space:nowrap",
	"totall":    "text-align:left;padding:4px 6px;border-top:2px solid #d0d7de;font-weight:bold",
	"totalp":    "margin:4px 0 8px 0;font-weight:bold",
	"card":      "width:100%;margin:0 0 12px 0;border:1px solid #d0d7de;border-radius:6px;border-collapse:separate;border-spacing:0;table-layout:fixed",
	"cardhead":  "padding:8px 12px;background:#f6f8fa;border-bottom:1px solid #e6e9ed;border-radius:6px 6px 0 0;overflow-wrap:anywhere;word-break:break-word",
	"kind":      "color:#57606a;font-size:12px",
	"side":      "width:50%;padding:8px 12px;vertical-align:top;overflow-wrap:anywhere;word-break:break-word",
	"siderec":   "width:50%;padding:8px 12px;vertical-align:top;overflow-wrap:anywhere;word-break:break-word;border-left:1px solid #e6e9ed",
	"sidelabel": "font-size:11px;text-transform:uppercase;letter-spacing:0.04em;color:#57606a;margin:0 0 2px 0",
	"money":     "white-space:nowrap",
	"why":       "padding:0 12px 10px 12px;color:#57606a;font-size:12.5px;overflow-wrap:anywhere;word-break:break-word",
	"good":      "color:#1a7f37;font-weight:bold",
	"bad":       "color:#cf222e;font-weight:bold",
	"up":        "color:#cf222e",
	"down":      "color:#1a7f37",
	"flat":      "color:#57606a",
	"ul":        "margin:4px 0 8px 0;padding-left:20px",
	"cav":       "margin:4px 0 8px 0;padding:8px 12px 8px 28px;background:#fff8c5;border:1px solid #d4a72c;border-radius:6px",
	"fig":       "margin:8px 0 16px 0",
	"img":       "display:block;max-width:100%;height:auto;border:1px solid #e6e9ed",
	"svg":       "max-width:722px;border:1px solid #e6e9ed",
	"foot":      "color:#57606a;font-size:12px;margin-top:24px",
}

// css returns a named inline style.
func css(name string) template.CSS {
	s, ok := styles[name]
	if !ok {
		panic("report: unknown style " + name) // a template bug, caught by the tests
	}
	return template.CSS(s)
}

// changeCSS colours a price change: up is red (dearer), down green.
func changeCSS(m MarketPrice) template.CSS {
	switch {
	case m.ChangePercent == nil || m.ChangePercent.IsZero():
		return css("flat")
	case m.ChangePercent.IsPositive():
		return css("up")
	}
	return css("down")
}

// savingsCSS colours a saving: positive green, negative red.
func savingsCSS(s *Savings) template.CSS {
	switch {
	case s == nil || s.USDPerMonth.IsZero():
		return css("flat")
	case s.USDPerMonth.IsPositive():
		return css("good")
	}
	return css("bad")
}
