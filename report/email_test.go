package report_test

import (
	"bytes"
	"encoding/base64"
	"image/png"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gpucost/gpucost/report"
)

// parsedEmail is a report email read back with the standard library's MIME parsers.
type parsedEmail struct {
	Header mail.Header
	Text   string
	HTML   string
	// Images maps Content-ID (without brackets) to the decoded image part.
	Images map[string][]byte
	// Types lists every leaf part's media type, in order.
	Types []string
}

// MustParseEmail parses raw as an RFC 5322 message with a MIME body, or fails the test.
func MustParseEmail(tb testing.TB, raw []byte) parsedEmail {
	tb.Helper()
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		tb.Fatalf("reading the message: %v", err)
	}
	p := parsedEmail{Header: msg.Header, Images: map[string][]byte{}}
	walkPart(tb, &p, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"), "", msg.Body)
	return p
}

func walkPart(tb testing.TB, p *parsedEmail, contentType, encoding, contentID string, body io.Reader) {
	tb.Helper()
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		tb.Fatalf("part Content-Type %q: %v", contentType, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			part, err := mr.NextRawPart()
			if err == io.EOF {
				return
			}
			if err != nil {
				tb.Fatalf("reading a %s part: %v", mt, err)
			}
			walkPart(tb, p, part.Header.Get("Content-Type"), part.Header.Get("Content-Transfer-Encoding"), part.Header.Get("Content-ID"), part)
		}
	}
	data := decodeTransfer(tb, encoding, body)
	p.Types = append(p.Types, mt)
	switch {
	case mt == "text/plain":
		p.Text = string(data)
	case mt == "text/html":
		p.HTML = string(data)
	case strings.HasPrefix(mt, "image/"):
		p.Images[strings.Trim(contentID, "<>")] = data
	}
}

func decodeTransfer(tb testing.TB, encoding string, r io.Reader) []byte {
	tb.Helper()
	var dec io.Reader
	switch strings.ToLower(encoding) {
	case "base64":
		dec = base64.NewDecoder(base64.StdEncoding, r)
	case "quoted-printable":
		dec = quotedprintable.NewReader(r)
	default:
		dec = r
	}
	b, err := io.ReadAll(dec)
	if err != nil {
		tb.Fatalf("decoding a %s part: %v", encoding, err)
	}
	return b
}

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
	e := MustParseEmail(t, raw.Bytes())

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
