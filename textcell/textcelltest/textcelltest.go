// Package textcelltest holds what tests need to show that untrusted text is safe where gpucost
// writes it (package textcell's rules): one of each kind of hostile text, offers carrying them
// as a scraper would store them, and checks of terminal tables and CSV files.
package textcelltest

import (
	"encoding/csv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
)

// Names is one of each kind of text a scraped field could carry to attack a terminal or a
// spreadsheet: escape sequences that recolour the terminal or retitle it, BEL, NUL, bidi
// overrides that reverse what follows, CR/LF and tabs that would forge a table line, a name long
// enough to pad every row, and formulas.
var Names = []struct{ Name, Text string }{
	{"ESC", "H100\x1b[31mRED\x1b[0m\x1b]0;pwned\x07"},
	{"BEL", "ding\x07\x07dong"},
	{"NUL", "nul\x00\x00byte"},
	{"bidi", "safe\u202egnp.exe\u202c\u2066iso\u2069"},
	{"CR LF", "us-east\r\nlambda  H100  1  80  on_demand  0.0100\ttab"},
	{"10 kB", strings.Repeat("W", 10<<10)},
	{"formula", `=HYPERLINK("http://x.example","click")`},
	{"at", "@SUM(1+1)*cmd|' /C calc'!A0"},
	{"HTML", `<img src=x onerror=alert(1)>`},
}

// Offers is one offer per hostile name, observed at at, the name in every text field a scraper
// fills; prices start at price and rise by a cent per offer.
func Offers(at time.Time, price string) []schema.Offer {
	var out []schema.Offer
	for i, h := range Names {
		p := decimal.RequireFromString(price).Add(decimal.New(int64(i), -2))
		out = append(out, schema.Offer{ObservedAt: at, RunID: "hostile-" + at.Format("150405"), SourceURL: "https://example.test/" + h.Name,
			Provider: h.Text, OfferID: h.Text, Tier: schema.TierSecure, Region: h.Text, Country: "US",
			GPUModel: "H100-SXM-80GB", GPUNameRaw: h.Text, GPUCount: 1, VRAMGB: 80, PriceType: schema.OnDemand,
			PriceUSDPerHour: p, PriceUSDPerGPUHour: p, IntraNode: schema.IntraPCIe, InterNode: schema.InterNone, Stock: schema.StockHigh})
	}
	return out
}

// BadRune finds what may not reach a terminal or a CSV cell: C0 and C1 controls (tab only
// where allowed), DEL, bidi overrides and isolates.
func BadRune(s string, tabOK bool) (rune, bool) {
	for _, r := range s {
		switch {
		case r == '\t' && tabOK:
		case r < 0x20, r >= 0x7f && r <= 0x9f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0xfeff:
			return r, true
		}
	}
	return 0, false
}

// CheckTable checks a terminal table: wantLines lines, no control or bidi character, none wider
// than maxWidth characters.
func CheckTable(t testing.TB, out string, wantLines, maxWidth int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != wantLines {
		t.Errorf("%d lines, want %d: a cell forged or removed a line\n%.2000s", len(lines), wantLines, out)
	}
	for _, l := range lines {
		if r, bad := BadRune(l, false); bad {
			t.Errorf("a line holds %U: %.100q", r, l)
		}
		if n := utf8.RuneCountInString(l); n > maxWidth {
			t.Errorf("a line of %d characters (at most %d): a long name pads the table: %.100q", n, maxWidth, l)
		}
	}
}

// CheckCSV parses a CSV output and checks it: wantRows records as long as the header, no
// control or bidi character in a cell, no cell a spreadsheet would run as a formula; numeric
// columns (by header name) hold numbers, negative ones included. It returns the records.
func CheckCSV(t testing.TB, out string, wantRows int, numeric ...string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v", err)
	}
	if len(rows) != wantRows {
		t.Errorf("%d CSV records, want %d", len(rows), wantRows)
	}
	if len(rows) == 0 {
		return rows
	}
	num := map[int]bool{}
	for i, h := range rows[0] {
		for _, n := range numeric {
			if h == n {
				num[i] = true
			}
		}
	}
	if len(num) != len(numeric) {
		t.Fatalf("header %v lacks some of %v", rows[0], numeric)
	}
	for _, row := range rows[1:] {
		if len(row) != len(rows[0]) {
			t.Errorf("a record of %d cells under a header of %d", len(row), len(rows[0]))
		}
		for i, cell := range row {
			if r, bad := BadRune(cell, false); bad {
				t.Errorf("cell %q holds %U: %.80q", rows[0][i], r, cell)
			}
			if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) {
				if _, err := decimal.NewFromString(cell); err != nil {
					t.Errorf("cell %q would run as a formula: %.80q", rows[0][i], cell)
				}
			}
			if num[i] && cell != "" {
				if _, err := decimal.NewFromString(cell); err != nil {
					t.Errorf("numeric cell %q is %q, not a number", rows[0][i], cell)
				}
			}
		}
	}
	return rows
}
