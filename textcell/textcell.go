// Package textcell makes untrusted text safe to put in one cell: of a table printed on a
// terminal, of a CSV file a spreadsheet will open, and of a Markdown table. Provider names, offer ids, regions, GPU
// names and error texts come from scraped pages and APIs (and team names from a workloads file);
// every terminal table and every CSV file gpucost writes passes them through this package
// (export, report, pipeline and cmd/gpucost), so the rules live in one place:
//
//   - Clean: control characters (ESC sequences, BEL, NUL, C1 controls such as CSI), line and
//     paragraph separators and invisible format characters (bidi overrides and isolates
//     U+202A–202E, U+2066–2069, zero-width characters, the BOM) become a space; runs of space
//     collapse to one; invalid UTF-8 becomes U+FFFD; the text is cut to a number of characters
//     with an ellipsis. A name can then neither recolour the terminal, move the cursor, forge a
//     table line nor pad every row of a table.
//
//   - CSV: Clean without a cut (exports keep whole values), and a cell a spreadsheet would run
//     as a formula (starting with = + - @, tab or CR, or their full-width forms) gets a leading
//     apostrophe, as OWASP's CSV-injection advice says. A cell that is a plain decimal number
//     (-1.5, +3, 2e-4) is left as it is, whoever wrote it: a number is never a formula, and
//     prices and changes stay numbers in a spreadsheet.
//
//   - Markdown: HTML as entities, inline syntax and the cell separator backslash-escaped, so a
//     name is shown as it is, never run as HTML or taken for a link or a cell.
//
// Table and CSVWriter apply them to every cell, so a writer cannot forget one.
package textcell

import (
	"encoding/csv"
	"fmt"
	"io"
	"regexp"
	"strings"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"
)

// Widths, in characters, for Clean: of names (providers, regions, GPU models, offer ids,
// teams) and of sentences (errors, reasons).
const (
	NameWidth = 80
	TextWidth = 300
)

// Clean returns s on one line without control or invisible format characters, cut to max
// characters (runes) with an ellipsis; max <= 0 means no cut. Clean(Clean(s, n), n) ==
// Clean(s, n).
func Clean(s string, max int) string {
	if s == "" {
		return ""
	}
	var b strings.Builder
	space := false
	n := 0
	for _, r := range s { // an invalid UTF-8 byte comes out as U+FFFD
		if unicode.IsControl(r) || unicode.IsSpace(r) || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Cf, r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
			n++
		}
		space = false
		if max > 0 && n >= max {
			return strings.TrimSpace(b.String()) + "…"
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}

// number is a plain decimal number, the only text starting with + or - that a cell may keep.
var number = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// CSV returns s cleaned (without a cut) and safe from being run as a spreadsheet formula.
func CSV(s string) string {
	s = Clean(s, 0)
	if s == "" || number.MatchString(s) {
		return s
	}
	switch r, _ := utf8.DecodeRuneInString(s); r {
	case '=', '+', '-', '@', '\t', '\r', '\n', '＝', '＋', '－', '＠':
		return "'" + s
	}
	return s
}

// CSVWriter writes CSV records whose every cell has passed CSV.
type CSVWriter struct {
	w   *csv.Writer
	rec []string
}

// NewCSVWriter returns a CSVWriter on w (comma-separated, \n line ends, as encoding/csv).
func NewCSVWriter(w io.Writer) *CSVWriter { return &CSVWriter{w: csv.NewWriter(w)} }

// Write writes one record, each cell through CSV. The record itself is not changed.
func (c *CSVWriter) Write(record []string) error {
	c.rec = c.rec[:0]
	for _, cell := range record {
		c.rec = append(c.rec, CSV(cell))
	}
	return c.w.Write(c.rec)
}

// Flush writes what is buffered and returns the first error of any Write or of the flush.
func (c *CSVWriter) Flush() error {
	c.w.Flush()
	return c.w.Error()
}

// Table writes an aligned table for a terminal: columns two spaces apart, each cell through
// Clean with the table's width, so no cell can hold a tab or a line break (that would add a
// column or a line) or a control sequence.
type Table struct {
	tw    *tabwriter.Writer
	width int
	cells []string
	err   error // the first write error
}

// NewTable returns a Table on w whose cells are cut to width characters (NameWidth when width
// <= 0). Cut a column narrower with Clean before passing the cell.
func NewTable(w io.Writer, width int) *Table {
	if width <= 0 {
		width = NameWidth
	}
	return &Table{tw: tabwriter.NewWriter(w, 0, 0, 2, ' ', 0), width: width}
}

// Row adds one line of cells.
func (t *Table) Row(cells ...string) {
	t.cells = t.cells[:0]
	for _, c := range cells {
		t.cells = append(t.cells, Clean(c, t.width))
	}
	if _, err := io.WriteString(t.tw, strings.Join(t.cells, "\t")+"\n"); err != nil && t.err == nil {
		t.err = err
	}
}

// Flush aligns and writes the rows added so far, and returns the first error writing them.
func (t *Table) Flush() error {
	if err := t.tw.Flush(); err != nil && t.err == nil {
		t.err = err
	}
	return t.err
}

// Markdown makes s literal in Markdown, inside a table cell too: HTML is escaped as entities,
// and inline syntax and the cell separator are backslash-escaped. It does not Clean s.
func Markdown(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '\\', '`', '*', '_', '[', ']', '|', '~', '#', '!':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Wrap writes s, cleaned (Clean), as lines of at most width characters: the first starts with
// first, the others with rest. A word longer than a line is cut across lines. Write errors are
// the writer's to keep (a bufio.Writer's, a strings.Builder has none).
func Wrap(w io.Writer, s string, width int, first, rest string) {
	prefix, line := first, ""
	emit := func() {
		fmt.Fprintln(w, prefix+line)
		prefix, line = rest, ""
	}
	for _, word := range strings.Fields(Clean(s, 0)) {
		for {
			room := max(width-utf8.RuneCountInString(prefix), 8)
			n, wn := utf8.RuneCountInString(line), utf8.RuneCountInString(word)
			switch {
			case n == 0 && wn <= room:
				line = word
			case n > 0 && n+1+wn <= room:
				line += " " + word
			case n > 0:
				emit()
				continue
			default: // a word longer than a line
				r := []rune(word)
				line, word = string(r[:room]), string(r[room:])
				emit()
				continue
			}
			break
		}
	}
	if line != "" {
		emit()
	}
}
