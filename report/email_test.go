package report_test

import (
	"bytes"
	"image/png"
	"mime"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/report"
	"github.com/gpucost/gpucost/report/smtptest"
)

var cidRef = regexp.MustCompile(`src="cid:([^"]+)"`)

func TestEmailStructure(t *testing.T) {
	r := MustSampleReport(t, fixtureNow)
	m, err := r.Email("search", report.EmailOptions{From: "gpucost <gpucost@example.com>"})
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	if _, err := m.WriteTo(&raw); err != nil {
		t.Fatal(err)
	}
	e := smtptest.ParseMail(t, raw.Bytes())

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
	if !strings.Contains(e.Text, "TEAM search") || !strings.Contains(e.Text, "chat-7b") {
		t.Errorf("text part lacks the team's table:\n%.400s", e.Text)
	}
	if !strings.Contains(e.HTML, `class="workloads"`) || !strings.Contains(e.HTML, "assistant-70b") {
		t.Errorf("HTML part lacks the workloads table")
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
