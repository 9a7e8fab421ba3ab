package textcell

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf8"
)

// TerminalWidth is the width, in characters, that gpucost's terminal tables and text fit: a
// terminal of 100 columns.
const TerminalWidth = 100

// FitTable writes an aligned table whose lines fit a width: columns two spaces apart, each as
// wide as its widest cell, the columns of figures aligned to the right. It holds the rows until
// Flush. When a line would be wider than the width, the columns named by Cut give up
// characters, in the order they were named, each down to its minimum; a cut cell ends in an
// ellipsis (…), so no cut is silent. Every cell passes Clean, as in Table. Widths count
// characters (runes), as Table's do.
type FitTable struct {
	w     io.Writer
	width int
	right map[int]bool
	cuts  []columnCut
	rows  [][]string
}

// columnCut is a column that may be cut, down to min characters.
type columnCut struct{ col, min int }

// NewFitTable returns a FitTable on w whose lines are at most width characters (0: no bound).
func NewFitTable(w io.Writer, width int) *FitTable {
	return &FitTable{w: w, width: width, right: map[int]bool{}}
}

// Right aligns the columns cols (0 is the first) to the right: columns of figures.
func (t *FitTable) Right(cols ...int) {
	for _, c := range cols {
		t.right[c] = true
	}
}

// Cut lets column col be cut down to min characters (at least 2: one and the ellipsis) when a
// line would be wider than the table's width. Columns are cut in the order Cut names them.
func (t *FitTable) Cut(col, min int) {
	t.cuts = append(t.cuts, columnCut{col: col, min: max(min, 2)})
}

// Row adds one line of cells.
func (t *FitTable) Row(cells ...string) {
	row := make([]string, len(cells))
	for i, c := range cells {
		row[i] = Clean(c, NameWidth)
	}
	t.rows = append(t.rows, row)
}

// widths returns the width of each column the rows added so far are laid out at.
func (t *FitTable) widths() []int {
	var widths []int
	for _, row := range t.rows {
		for i, c := range row {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	if t.width <= 0 || len(widths) == 0 {
		return widths
	}
	total := 2 * (len(widths) - 1)
	for _, w := range widths {
		total += w
	}
	for _, c := range t.cuts {
		if total <= t.width {
			break
		}
		if c.col >= len(widths) || widths[c.col] <= c.min {
			continue
		}
		d := min(total-t.width, widths[c.col]-c.min)
		widths[c.col] -= d
		total -= d
	}
	return widths
}

// Flush writes the rows added so far, laid out, and returns the first error writing them.
func (t *FitTable) Flush() error {
	widths := t.widths()
	bw := bufio.NewWriter(t.w)
	var line strings.Builder
	for _, row := range t.rows {
		line.Reset()
		for i, c := range row {
			if i > 0 {
				line.WriteString("  ")
			}
			if utf8.RuneCountInString(c) > widths[i] {
				c = Clean(c, widths[i]-1) // Clean adds the ellipsis
			}
			fill := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c))
			if t.right[i] {
				line.WriteString(fill + c)
			} else {
				line.WriteString(c + fill)
			}
		}
		bw.WriteString(strings.TrimRight(line.String(), " "))
		bw.WriteByte('\n')
	}
	t.rows = t.rows[:0]
	return bw.Flush()
}
