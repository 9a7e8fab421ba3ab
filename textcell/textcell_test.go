package textcell_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/gpucost/gpucost/textcell"
)

// Hostile text as a scraped name could carry it.
var (
	esc       = "H100\x1b[31m RED\x1b[0m\x1b]0;pwned\x07"
	bel       = "ding\x07\x07"
	nul       = "A100\x00\x00-80GB"
	bidi      = "safe\u202egnp.exe\u202c \u2066x\u2069 \u200bzw\ufeff"
	crlf      = "us-east\r\nlambda\tH100\t0.01"
	csi       = "C1\u009b2J control"
	invalid   = "bad\xffutf8"
	long      = strings.Repeat("W", 10<<10)
	formula   = `=HYPERLINK("http://x.example","click")`
	formulaWS = "\t=1+1"
)

func TestClean(t *testing.T) {
	tests := []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"plain text is kept", "H100-SXM-80GB", 80, "H100-SXM-80GB"},
		{"ESC sequences and OSC titles", esc, 80, "H100 [31m RED [0m ]0;pwned"},
		{"BEL", bel, 80, "ding"},
		{"NUL", nul, 80, "A100 -80GB"},
		{"bidi overrides, isolates, zero-width and BOM", bidi, 80, "safe gnp.exe x zw"},
		{"CR, LF and tab", crlf, 80, "us-east lambda H100 0.01"},
		{"C1 CSI", csi, 80, "C1 2J control"},
		{"invalid UTF-8", invalid, 80, "bad\uFFFDutf8"},
		{"a 10 kB name is cut", long, 80, strings.Repeat("W", 80) + "…"},
		{"no cut with max 0", long, 0, long},
		{"cut does not end in a space", "aaaa bbbb", 5, "aaaa…"},
		{"leading and trailing space goes", "  \t x \n", 80, "x"},
		{"letters of every script are kept", "Zürich 東京 Ελλάδα", 80, "Zürich 東京 Ελλάδα"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := textcell.Clean(tt.in, tt.max)
			if got != tt.want {
				t.Errorf("Clean(%q, %d) = %q, want %q", tt.in, tt.max, got, tt.want)
			}
			if again := textcell.Clean(got, tt.max); again != got {
				t.Errorf("Clean is not idempotent: %q then %q", got, again)
			}
			if !utf8.ValidString(got) {
				t.Errorf("Clean(%q) = %q is not valid UTF-8", tt.in, got)
			}
		})
	}
}

func TestCSV(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"text", "lambda", "lambda"},
		{"formula", formula, `'` + formula},
		{"plus", "+1+cmd|' /C calc'!A0", "'+1+cmd|' /C calc'!A0"},
		{"minus", "-2+3", "'-2+3"},
		{"at", "@SUM(A1:A9)", "'@SUM(A1:A9)"},
		{"full-width equals", "＝1+1", "'＝1+1"},
		{"a formula behind a tab", formulaWS, "'=1+1"},
		{"a formula behind CR LF", "\r\n=1+1", "'=1+1"},
		{"a formula behind control characters", "\x1b\x00=1+1", "'=1+1"},
		{"negative number stays a number", "-1.5", "-1.5"},
		{"signed number", "+3", "+3"},
		{"exponent", "-2e-4", "-2e-4"},
		{"fraction", "-.5", "-.5"},
		{"not quite a number", "-1.5.2", "'-1.5.2"},
		{"a 10 kB name is kept whole", long, long},
		{"controls go", crlf, "us-east lambda H100 0.01"},
		{"bidi goes", bidi, "safe gnp.exe x zw"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := textcell.CSV(tt.in); got != tt.want {
				t.Errorf("CSV(%.40q) = %.60q, want %.60q", tt.in, got, tt.want)
			}
		})
	}
}

// hostile is one of each kind of hostile text.
var hostile = []string{esc, bel, nul, bidi, crlf, csi, invalid, long, formula, formulaWS}

func TestCSVWriter(t *testing.T) {
	var b bytes.Buffer
	w := textcell.NewCSVWriter(&b)
	if err := w.Write([]string{"name", "price"}); err != nil {
		t.Fatal(err)
	}
	for _, h := range hostile {
		if err := w.Write([]string{h, "-1.5"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1+len(hostile) {
		t.Fatalf("%d rows, want %d: a cell added or removed a line", len(rows), 1+len(hostile))
	}
	for i, row := range rows[1:] {
		if len(row) != 2 {
			t.Errorf("row %d has %d cells, want 2", i, len(row))
		}
		checkSafeCSVCell(t, row[0])
		if row[1] != "-1.5" {
			t.Errorf("the number -1.5 came back as %q", row[1])
		}
	}
	if got := rows[1+slices.Index(hostile, formula)][0]; got != `'`+formula {
		t.Errorf("the formula cell is %q", got)
	}
}

// checkSafeCSVCell fails when a CSV cell holds a control or format character or would run as
// a formula.
func checkSafeCSVCell(t *testing.T, cell string) {
	t.Helper()
	if i := strings.IndexFunc(cell, func(r rune) bool {
		return r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
	}); i >= 0 {
		t.Errorf("cell %.40q holds a control or bidi character at %d", cell, i)
	}
	if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) {
		t.Errorf("cell %.40q would run as a formula", cell)
	}
}

func TestTable(t *testing.T) {
	var b bytes.Buffer
	tb := textcell.NewTable(&b, 0)
	tb.Row("NAME", "PRICE")
	for _, h := range hostile {
		tb.Row(h, "0.01")
	}
	if err := tb.Flush(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 1+len(hostile) {
		t.Fatalf("%d lines, want %d: a cell forged a line\n%s", len(lines), 1+len(hostile), b.String())
	}
	for _, l := range lines {
		if i := strings.IndexFunc(l, func(r rune) bool {
			return r < 0x20 || (r >= 0x7f && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069)
		}); i >= 0 {
			t.Errorf("line %.60q holds a control or bidi character", l)
		}
		if n := utf8.RuneCountInString(l); n > textcell.NameWidth+1+2+len("PRICE") {
			t.Errorf("a line of %d characters: the 10 kB name pads the table", n)
		}
		if !strings.HasSuffix(l, "0.01") && !strings.HasSuffix(l, "PRICE") {
			t.Errorf("line %.60q: a cell added a column", l)
		}
	}
}

func ExampleClean() {
	name := "H100\x1b[2J\r\nlambda\tforged row\u202e"
	fmt.Printf("%q\n", textcell.Clean(name, 20))
	// Output: "H100 [2J lambda forg…"
}

func ExampleCSV() {
	fmt.Println(textcell.CSV(`=HYPERLINK("http://x.example")`))
	fmt.Println(textcell.CSV("-1.5"))
	// Output:
	// '=HYPERLINK("http://x.example")
	// -1.5
}

// TestWrap: sentences wrap at the width with the prefixes given, a word longer than a line is
// cut across lines, and what is wrapped is cleaned first.
func TestWrap(t *testing.T) {
	for _, tt := range []struct {
		in          string
		width       int
		first, rest string
		want        string
	}{
		{"shown 50 of 547 offers (--gpu H100); --limit 0 for all", 30, "", "  ",
			"shown 50 of 547 offers (--gpu\n  H100); --limit 0 for all\n"},
		{"a WWWWWWWWWWWWWWWWWWWWWWWW word", 12, "- ", "  ", "- a\n  WWWWWWWWWW\n  WWWWWWWWWW\n  WWWW word\n"},
		{"line\r\nbreak\x1b[31m and escape", 80, "", "", "line break [31m and escape\n"},
		{"", 80, "", "", ""},
	} {
		var b strings.Builder
		textcell.Wrap(&b, tt.in, tt.width, tt.first, tt.rest)
		if b.String() != tt.want {
			t.Errorf("Wrap(%q, %d) = %q, want %q", tt.in, tt.width, b.String(), tt.want)
		}
	}
}
