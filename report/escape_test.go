package report_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"mime"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/report/smtptest"
	"github.com/gpucost/gpucost/schema"
)

// Scraped text with markup and a fake mail header in it.
const (
	evilGPU    = `<script>alert("gpu")</script>`
	evilRegion = "eu-west\r\nBcc: evil@x.example"
	evilTeam   = "ml <script>alert('team')</script>\r\nBcc: evil@x.example"
	evilProv   = `=HYPERLINK("http://x.example")<b>`
)

// evilReport is a report whose plan, offers and history carry hostile text everywhere the
// scrapers or the workloads file could put it.
func evilReport(t *testing.T) *report.Report {
	t.Helper()
	d := decimal.RequireFromString
	hours := d("730")
	place := func(provider, region, gpu, perHour string, pt schema.PriceType) *optimizer.Placement {
		return &optimizer.Placement{Provider: provider, Region: region, GPUModel: gpu, GPUCount: 1, GPUsPerNode: 1, Nodes: 1,
			PriceType: pt, PriceUSDPerHour: d(perHour), PriceUSDPerGPUHour: d(perHour), PriceSource: optimizer.PriceMarket,
			HoursPerMonth: hours, CostUSDPerMonth: d(perHour).Mul(hours).Round(2)}
	}
	cur := place("runpod", evilRegion, "A100-SXM-80GB", "1.39", schema.OnDemand)
	rec := place(evilProv, evilRegion, evilGPU, "0.20", schema.Spot)
	pct := d("85.6")
	plan := &optimizer.Plan{
		GeneratedAt: fixtureNow,
		Options:     optimizer.DefaultOptions(),
		Teams: []optimizer.TeamPlan{{
			Name: evilTeam, Email: "evil-team@example.com",
			Workloads: []optimizer.WorkloadPlan{
				{Name: "chat|x*</td><script>x()</script>", Kind: optimizer.Inference, Status: optimizer.StatusOK, Current: cur, Recommended: rec,
					Savings: &optimizer.Savings{USDPerMonth: d("868.7"), Percent: &pct}, Caveats: []string{"region " + evilRegion}},
				{Name: "nofit", Kind: optimizer.Inference, Status: optimizer.StatusNoFit, Reason: "needs " + evilGPU + "\nX-Injected: 1"},
			},
			Totals: optimizer.Totals{Workloads: 2, NoFit: 1, Compared: 1, CurrentUSDPerMonth: d("1014.7"), RecommendedUSDPerMonth: d("146"), SavingsUSDPerMonth: d("868.7"), SavingsPercent: &pct},
		}},
		ExcludedProviders: []optimizer.ExcludedProvider{{Provider: evilProv, Reason: "stale <b>3d</b>"}},
	}
	now := fixtureNow.Add(-time.Hour)
	offers := []schema.Offer{{ObservedAt: now, Provider: "vastai", OfferID: `"><img src=x onerror=alert(1)>`, Region: evilRegion, GPUModel: evilGPU,
		GPUCount: 1, PriceType: schema.Spot, PriceUSDPerHour: d("0.2"), PriceUSDPerGPUHour: d("0.2")}}
	var history []schema.HistoryPoint
	for i := 0; i < 20; i++ {
		history = append(history, schema.HistoryPoint{Bucket: fixtureNow.AddDate(0, 0, -i), Provider: "vast<script>", GPUModel: evilGPU,
			PriceType: schema.Spot, Min: d("0.3")})
	}
	r, err := report.Build(report.Input{Plan: plan, Offers: offers, History: history,
		Runs: []schema.ScrapeRun{{Provider: "lambda", Status: schema.RunFailed, FinishedAt: now, Error: "<iframe src=x>\r\nBcc: evil@x.example"}}},
		report.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestUntrustedTextEscaped(t *testing.T) {
	r := evilReport(t)
	if n := len(r.Teams[0].Charts); n != 1 {
		t.Fatalf("%d charts, want 1 (the hostile GPU's)", n)
	}
	render := func(f report.Format) string {
		var b bytes.Buffer
		if err := r.Render(&b, f); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		return b.String()
	}
	tests := []struct {
		format report.Format
		// never must not appear anywhere in the output.
		never []string
		// want must appear: the escaped form, so the text is shown, not dropped.
		want []string
	}{
		{report.FormatHTML,
			[]string{"<script", "<iframe", "<b>", "<img src=x", "\r\nBcc", "\nBcc"},
			[]string{"&lt;script&gt;alert(&#34;gpu&#34;)&lt;/script&gt;", "eu-west Bcc: evil@x.example", "&lt;iframe src=x&gt;", "vast&lt;script&gt;"}},
		{report.FormatMarkdown,
			[]string{"<script", "<iframe", "<b>", "\nBcc"},
			[]string{"&lt;script&gt;alert(\"gpu\")&lt;/script&gt;", "eu-west Bcc: evil@x.example", `chat\|x\*&lt;/td&gt;&lt;script&gt;x()&lt;/script&gt;`}},
		{report.FormatText,
			[]string{"\r", "\nBcc", "\nX-Injected"},
			[]string{"eu-west Bcc: evil@x.example", "X-Injected: 1"}},
		{report.FormatJSON,
			[]string{"<script", "<iframe", "\\r\\n", "\\n"},
			[]string{`\u003cscript\u003e`}},
	}
	for _, tt := range tests {
		t.Run(string(tt.format), func(t *testing.T) {
			out := render(tt.format)
			for _, s := range tt.never {
				if strings.Contains(out, s) {
					i := strings.Index(out, s)
					t.Errorf("output holds %q raw: …%s…", s, out[max(0, i-80):min(len(out), i+80)])
				}
			}
			for _, s := range tt.want {
				if !strings.Contains(out, s) {
					t.Errorf("output lacks %q", s)
				}
			}
		})
	}
	t.Run("markdown table cells", func(t *testing.T) {
		for _, line := range strings.Split(render(report.FormatMarkdown), "\n") {
			if strings.HasPrefix(line, "| chat") {
				if n := strings.Count(strings.ReplaceAll(line, `\|`, ""), "|"); n != 14+1 {
					t.Errorf("workload row has %d cell separators, want 15 (a name must not add cells): %s", n, line)
				}
			}
		}
	})
	t.Run("csv", func(t *testing.T) {
		rows, err := csv.NewReader(strings.NewReader(render(report.FormatCSV))).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3 {
			t.Fatalf("%d CSV rows, want a header and 2 workloads", len(rows))
		}
		for _, row := range rows {
			if len(row) != len(report.CSVHeader) {
				t.Errorf("row of %d cells, want %d", len(row), len(report.CSVHeader))
			}
			for _, cell := range row {
				if strings.ContainsAny(cell, "\r\n") {
					t.Errorf("cell %q holds a line break", cell)
				}
				if cell != "" && strings.ContainsRune("=+@", rune(cell[0])) {
					t.Errorf("cell %q would run as a spreadsheet formula", cell)
				}
			}
		}
		if got := rows[1][15]; got != `'`+evilProv {
			t.Errorf("recommended_provider = %q, want it neutralized with a leading apostrophe", got)
		}
	})
	t.Run("chart svg", func(t *testing.T) {
		var b bytes.Buffer
		if err := report.WriteChartSVG(&b, r.Teams[0].Charts[0]); err != nil {
			t.Fatal(err)
		}
		if s := b.String(); strings.Contains(s, "<script") || !strings.Contains(s, "&lt;script&gt;") {
			t.Error("the chart's SVG does not escape the GPU and provider names")
		}
	})
	t.Run("json still holds the text", func(t *testing.T) {
		var back report.Report
		if err := json.Unmarshal([]byte(render(report.FormatJSON)), &back); err != nil {
			t.Fatal(err)
		}
		if got := back.Teams[0].Workloads[0].Recommended.GPUModel; got != evilGPU {
			t.Errorf("GPU model = %q, want %q kept (escaped only on output)", got, evilGPU)
		}
		if got := back.Teams[0].Workloads[0].Recommended.Region; got != "eu-west Bcc: evil@x.example" {
			t.Errorf("region = %q, want the line break gone", got)
		}
	})
}

func TestUntrustedTextInEmailHeaders(t *testing.T) {
	r := evilReport(t)
	m, err := r.Email(r.Teams[0].Name, report.EmailOptions{From: "gpucost <gpucost@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if _, err := m.WriteTo(&raw); err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(raw.String(), "\r\n\r\n")
	for _, line := range strings.Split(head, "\r\n") {
		if strings.HasPrefix(strings.ToLower(line), "bcc:") || strings.HasPrefix(strings.ToLower(line), "x-injected") {
			t.Errorf("an injected header reached the message: %q", line)
		}
	}
	e := smtptest.ParseMail(t, raw.Bytes())
	if _, ok := e.Header["Bcc"]; ok {
		t.Error("message has a Bcc header")
	}
	if got := e.Header.Get("To"); !strings.Contains(got, "evil-team@example.com") || strings.Count(got, "@") != 1 {
		t.Errorf("To = %q, want only the team's address", got)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(e.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.ContainsAny(subject, "\r\n") || !strings.Contains(subject, "Bcc: evil@x.example") {
		t.Errorf("Subject = %q, want the team name on one line", subject)
	}
	if strings.Contains(e.HTML, "<script") {
		t.Error("the email's HTML holds a raw <script>")
	}
	// A team address carrying a header is refused, not sent.
	r.Teams[0].Email = "evil-team@example.com\r\nBcc: evil@x.example"
	if _, err := r.Email(r.Teams[0].Name, report.EmailOptions{From: "gpucost@example.com"}); err == nil {
		t.Error("an address with a line break was accepted")
	}
}

// hostileText is one of each kind of text a scraped field could carry to attack a terminal or a
// spreadsheet.
var hostileText = map[string]string{
	"ESC":     "H100\x1b[31m\x1b]0;pwned\x07",
	"BEL":     "ding\x07\x07",
	"NUL":     "A100\x00-80GB",
	"bidi":    "safe\u202egnp.exe\u202c\u2066x\u2069",
	"CR LF":   "us-east\r\nTOTAL\t$0\t$0",
	"10 kB":   strings.Repeat("W", 10<<10),
	"formula": `=HYPERLINK("http://x.example","click")`,
	"minus":   "-2+3",
}

// TestHostileTextInTextAndCSV puts each hostile text in every scraped field of a report and
// checks the terminal tables and the CSV: no control or bidi character, no forged line, no cell
// wider than textcell allows in the text, no formula in the CSV.
func TestHostileTextInTextAndCSV(t *testing.T) {
	d := decimal.RequireFromString
	for name, evil := range hostileText {
		t.Run(name, func(t *testing.T) {
			hours := d("730")
			place := func(provider, perHour string, pt schema.PriceType) *optimizer.Placement {
				return &optimizer.Placement{Provider: provider, Region: evil, GPUModel: "H100-SXM-80GB", GPUCount: 1, GPUsPerNode: 1, Nodes: 1,
					PriceType: pt, PriceUSDPerHour: d(perHour), PriceUSDPerGPUHour: d(perHour), PriceSource: optimizer.PriceMarket,
					HoursPerMonth: hours, CostUSDPerMonth: d(perHour).Mul(hours).Round(2)}
			}
			pct := d("50")
			plan := &optimizer.Plan{GeneratedAt: fixtureNow, Options: optimizer.DefaultOptions(),
				Teams: []optimizer.TeamPlan{{Name: "ml", Email: "ml@example.com", Workloads: []optimizer.WorkloadPlan{
					{Name: evil, Kind: optimizer.Inference, Status: optimizer.StatusOK, Current: place("runpod", "2", schema.OnDemand),
						Recommended: place(evil, "1", schema.OnDemand), Savings: &optimizer.Savings{USDPerMonth: d("730"), Percent: &pct}},
					{Name: "nofit", Kind: optimizer.Inference, Status: optimizer.StatusNoFit, Reason: "needs " + evil},
				}, Totals: optimizer.Totals{Workloads: 2, NoFit: 1, Compared: 1, CurrentUSDPerMonth: d("1460"), RecommendedUSDPerMonth: d("730"), SavingsUSDPerMonth: d("730"), SavingsPercent: &pct}}}}
			r, err := report.Build(report.Input{Plan: plan,
				Runs: []schema.ScrapeRun{{Provider: "lambda", Status: schema.RunFailed, FinishedAt: fixtureNow.Add(-time.Hour), Error: evil}}},
				report.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := report.WriteText(&text, r); err != nil {
				t.Fatal(err)
			}
			totals := 0
			for _, line := range strings.Split(text.String(), "\n") {
				if i := strings.IndexFunc(line, isControlOrBidi); i >= 0 {
					t.Errorf("text line holds %U: %.80q", []rune(line[i:])[0], line)
				}
				if n := len([]rune(line)); n > 2000 {
					t.Errorf("a text line of %d characters: the hostile text is not cut", n)
				}
				if strings.HasPrefix(line, "TOTAL") {
					totals++
				}
			}
			if totals != 1 {
				t.Errorf("%d TOTAL lines, want 1: the text forged a table line", totals)
			}
			var b bytes.Buffer
			if err := report.WriteCSV(&b, r); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != 3 {
				t.Fatalf("%d CSV rows, want a header and 2 workloads", len(rows))
			}
			for _, row := range rows {
				for _, cell := range row {
					if i := strings.IndexFunc(cell, isControlOrBidi); i >= 0 {
						t.Errorf("CSV cell holds %U: %.60q", []rune(cell[i:])[0], cell)
					}
					if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) && !isNumber(cell) {
						t.Errorf("CSV cell %.60q would run as a formula", cell)
					}
				}
			}
		})
	}
}

// isControlOrBidi reports a character that may not reach a terminal or a CSV cell.
func isControlOrBidi(r rune) bool {
	return (r < 0x20 && r != '\t') || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
}

func isNumber(s string) bool { _, err := decimal.NewFromString(s); return err == nil }
