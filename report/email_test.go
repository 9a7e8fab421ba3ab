package report_test

import (
	"bytes"
	"image/png"
	"mime"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/optimizer"
	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/schema"
)

var cidRef = regexp.MustCompile(`src="cid:([^"]+)"`)

func TestEmailStructure(t *testing.T) {
	r := MustSampleReport(t, fixtureNow)
	e := mustEmail(t, r, "search", "")

	for _, h := range []string{"From", "To", "Subject", "Date", "Message-Id", "Mime-Version", "Auto-Submitted"} {
		if e.Header.Get(h) == "" {
			t.Errorf("header %s missing", h)
		}
	}
	if got := e.Header.Get("To"); got != "<search-ml@example.com>" && got != "search-ml@example.com" {
		t.Errorf("To = %q", got)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(e.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "gpucost week 2025-W48: search, save $17,326.68 a month (93.3%)"; subject != want {
		t.Errorf("Subject = %q, want %q", subject, want)
	}
	if d, err := e.Header.Date(); err != nil || !d.Equal(fixtureNow) {
		t.Errorf("Date = %v (%v), want %v", d, err, fixtureNow)
	}
	if !strings.Contains(e.Text, "gpucost weekly savings for team search") || !strings.Contains(e.Text, "\r\nchat-7b (inference)\r\n") {
		t.Errorf("text part lacks the team's workloads:\n%.400s", e.Text)
	}
	if !strings.Contains(e.HTML, `class="workloads"`) || strings.Count(e.HTML, `<table class="workload"`) != 3 || !strings.Contains(e.HTML, "assistant-70b") {
		t.Errorf("HTML part lacks a block per workload")
	}
	if strings.Contains(e.HTML, "<svg") {
		t.Error("the email's HTML has inline SVG, which mail clients do not show")
	}
	refs := cidRef.FindAllStringSubmatch(e.HTML, -1)
	if len(refs) != len(r.Teams[0].Charts) || len(refs) == 0 {
		t.Fatalf("HTML refers to %d inline images, want one per chart (%d)", len(refs), len(r.Teams[0].Charts))
	}
	for _, ref := range refs {
		img, ok := e.Images[ref[1]]
		if !ok {
			t.Errorf("HTML refers to cid:%s, which no part has (parts: %v)", ref[1], keys(e.Images))
			continue
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(img))
		if err != nil {
			t.Errorf("image %s: %v", ref[1], err)
			continue
		}
		if cfg.Width < report.ChartPixelWidth || cfg.Height < report.ChartPixelHeight {
			t.Errorf("image %s is %d×%d px, want at least %d×%d", ref[1], cfg.Width, cfg.Height, report.ChartPixelWidth, report.ChartPixelHeight)
		}
	}
	wantTypes := []string{"text/plain", "text/html"}
	for range refs {
		wantTypes = append(wantTypes, "image/png")
	}
	if strings.Join(e.Types, ",") != strings.Join(wantTypes, ",") {
		t.Errorf("parts %v, want %v", e.Types, wantTypes)
	}
	if ct := e.Header.Get("Content-Type"); !strings.HasPrefix(ct, "multipart/related") {
		t.Errorf("top Content-Type %q, want multipart/related (HTML with inline images)", ct)
	}
}

// TestEmailHoldsOnlyItsTeam builds each sample team's email and checks both parts hold that
// team's workloads and savings and none of another team's, no organisation or provider table,
// a text part no wider than 78 columns, and the dashboard link only when one is configured.
func TestEmailHoldsOnlyItsTeam(t *testing.T) {
	r := MustSampleReport(t, fixtureNow)
	// Each team's workloads and what moving them saves a month, and the team's total saving.
	own := map[string][]string{
		"search":   {"chat-7b", "$868.70", "assistant-70b", "$16,373.90", "nightly-summaries", "$84.08", "$17,326.68"},
		"support":  {"ticket-lora", "$24.08", "guanaco-qlora", "$52.65", "$76.73"},
		"research": {"ft-13b", "$97.57", "pretrain-70b", "$97,702.74", "$97,800.31"},
		"creative": {"sdxl-images", "$36.00", "video-diffusion", "$1,280.00", "$1,316.00"},
	}
	// The organisation's totals and what only the organisation's tables show.
	orgOnly := []string{"$116,519.72", "$399,397.57", "ORGANISATION", "All teams", "PROVIDERS", "Last good run", `id="org"`, `id="providers"`}
	const dashboard = "https://gpucost.example.com/dash?team=x&y=1"
	for team, mine := range own {
		t.Run(team, func(t *testing.T) {
			link := ""
			if team == "search" || team == "research" {
				link = dashboard
			}
			text, html := emailParts(t, r, team, link)
			for part, body := range map[string]string{"text": text, "html": html} {
				for _, s := range mine {
					if !strings.Contains(body, s) {
						t.Errorf("%s part lacks its team's %s", part, s)
					}
				}
				for other, theirs := range own {
					for _, s := range theirs {
						if other != team && strings.Contains(body, s) {
							t.Errorf("%s part shows team %s's %s", part, other, s)
						}
					}
				}
				for _, s := range orgOnly {
					if strings.Contains(body, s) {
						t.Errorf("%s part shows the organisation's %s", part, s)
					}
				}
			}
			for i, line := range strings.Split(text, "\n") {
				if n := utf8.RuneCountInString(line); n > report.EmailTextWidth {
					t.Errorf("text line %d is %d characters wide (at most %d): %q", i+1, n, report.EmailTextWidth, line)
				}
			}
			hasLink := strings.Contains(html, `href="https://gpucost.example.com/dash?team=x&amp;y=1"`) && strings.Contains(text, "Dashboard: "+dashboard+"\n")
			if hasLink != (link != "") || (link == "" && (strings.Contains(html, "dashboard") || strings.Contains(text, "Dashboard"))) {
				t.Errorf("dashboard link shown %v, configured %q", hasLink, link)
			}
		})
	}
}

func TestEmailBadAddresses(t *testing.T) {
	r := MustSampleReport(t, fixtureNow)
	tests := []struct {
		name, from, teamEmail, wantErr string
	}{
		{"bad sender", "not an address", "", "sender"},
		{"no team address", "gpucost@example.com", " ", "no email address"},
		{"header in address", "gpucost@example.com", "a@example.com\r\nBcc: evil@example.com", "email address"},
		{"two addresses", "gpucost@example.com", "a@example.com, b@example.com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			one, _ := r.ForTeam("search")
			c := *one
			c.Teams = append([]report.Team(nil), one.Teams...)
			if tt.teamEmail != "" {
				c.Teams[0].Email = tt.teamEmail
			}
			_, err := c.Email("search", report.EmailOptions{From: tt.from, Date: time.Now()})
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Email: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestEmailTextFitsWithLongNames gives a team GPU and provider names long enough that the
// market table would be wider than the text part allows: the text part lists the market
// instead, and no line passes 78 columns, whatever the names.
func TestEmailTextFitsWithLongNames(t *testing.T) {
	d := decimal.RequireFromString
	const provider, gpu = "a-provider-with-a-rather-long-name-incorporated", "H100-SXM-80GB-WITH-A-VERY-LONG-SUFFIX"
	at := fixtureNow.Add(-time.Hour)
	place := &optimizer.Placement{Provider: provider, Region: "somewhere-far-away-1", GPUModel: gpu, GPUCount: 8, GPUsPerNode: 8, Nodes: 1,
		PriceType: schema.OnDemand, PriceUSDPerHour: d("16"), PriceUSDPerGPUHour: d("2"), PriceSource: optimizer.PriceMarket,
		HoursPerMonth: d("730"), CostUSDPerMonth: d("11680")}
	plan := &optimizer.Plan{GeneratedAt: fixtureNow, Options: optimizer.DefaultOptions(), Teams: []optimizer.TeamPlan{{
		Name: "team-" + strings.Repeat("x", 70), Email: "t@example.com", Workloads: []optimizer.WorkloadPlan{{
			Name: strings.Repeat("w", 80), Kind: optimizer.Inference, Status: optimizer.StatusOK, Current: place, Recommended: place,
			Savings: &optimizer.Savings{USDPerMonth: d("0")}, Advice: []optimizer.Advice{{Kind: optimizer.AdviceUtilization, Text: strings.Repeat("z", 200)}}}}}}}
	var history []schema.HistoryPoint
	for day := 0; day <= 9; day++ {
		history = append(history, schema.HistoryPoint{Bucket: fixtureNow.AddDate(0, 0, -day).Truncate(24 * time.Hour), Provider: provider,
			GPUModel: gpu, PriceType: schema.OnDemand, Min: d("2.5")})
	}
	r, err := report.Build(report.Input{Plan: plan, History: history, Offers: []schema.Offer{{ObservedAt: at, Provider: provider, GPUModel: gpu,
		GPUCount: 8, PriceType: schema.OnDemand, PriceUSDPerHour: d("16"), PriceUSDPerGPUHour: d("2")}}}, report.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	text, _ := emailParts(t, r, r.Teams[0].Name, "")
	for i, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > report.EmailTextWidth {
			t.Errorf("text line %d is %d characters wide: %q", i+1, n, line)
		}
	}
	// The market as a list: the GPU, then a line per column of its row.
	for _, s := range []string{"\n  " + gpu + "\n    price type: on-demand\n    provider: " + provider + "\n    now: $2.00\n    week ago: $2.50\n    change: -20.0%\n    cheapest\n"} {
		if !strings.Contains(text, s) {
			t.Errorf("the text part lacks the market as a list %q:\n%s", s, text)
		}
	}
}
