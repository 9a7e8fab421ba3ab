package textcell

import (
	"bufio"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// TerminalWidth is the width, in characters, that gpucost's terminal tables and text fit when
// the terminal says no other: a terminal of 100 columns.
const TerminalWidth = 100

// Column is one column of a table that Fit lays out to a width.
type Column struct {
	Head  string
	Cells []string // one per row, each through Clean (Add)
	Right bool     // aligned right: amounts and counts
	Point bool     // prices: aligned right on their decimal point ($0.08 above $0.0838)
}

// Add appends a row's cell through Clean(s, width).
func (c *Column) Add(s string, width int) { c.Cells = append(c.Cells, Clean(s, width)) }

// width is the widest of the column's header and cells.
func (c *Column) width() int {
	n := utf8.RuneCountInString(c.Head)
	for _, s := range c.Cells {
		n = max(n, utf8.RuneCountInString(s))
	}
	return n
}

// Step is one way to narrow a table, in the order a table's steps are tried: leave out the
// column headed Head, or shorten it to Width characters (its cells cut with an ellipsis, never
// below the header). A step of a column the table does not have is skipped.
type Step struct {
	Head  string
	Width int // 0 leaves the column out
}

// Drop and Shrink are the two kinds of Step.
func Drop(head string) Step              { return Step{Head: head} }
func Shrink(head string, width int) Step { return Step{Head: head, Width: width} }

// Fit writes cols as a table, columns two spaces apart, whose lines are at most width
// characters: without the columns whose every cell is empty or "-", then narrowed by steps, in
// order, until it fits (as narrow as the steps make it when they cannot); a column shortened
// before a later step left out another gets back the room that is left. Width 0 writes every
// column whole. Fit returns the headers of the columns the steps left out, for the caller to
// say so: no column goes silently.
func Fit(w io.Writer, cols []Column, width int, steps []Step) (dropped []string, err error) {
	if width > 0 && len(cols) > 0 && len(cols[0].Cells) > 0 { // a column with nothing to say says it by its absence
		cols = slices.DeleteFunc(cols, func(c Column) bool {
			return !slices.ContainsFunc(c.Cells, func(s string) bool { return s != "" && s != "-" })
		})
	}
	for i := range cols {
		if cols[i].Point {
			alignPoints(cols[i].Cells)
		}
	}
	total := func() int {
		n := 2 * (len(cols) - 1)
		for i := range cols {
			n += cols[i].width()
		}
		return n
	}
	whole := map[string][]string{} // the cells of the columns shortened, as they were
	cut := func(c *Column, to int) {
		to = max(to, utf8.RuneCountInString(c.Head), 2)
		for j, s := range whole[c.Head] {
			if utf8.RuneCountInString(s) > to {
				s = Clean(s, to-1) // Clean adds the ellipsis
			}
			c.Cells[j] = s
		}
	}
	for _, st := range steps {
		if width <= 0 || total() <= width {
			break
		}
		i := slices.IndexFunc(cols, func(c Column) bool { return c.Head == st.Head })
		switch {
		case i < 0:
		case st.Width == 0:
			dropped = append(dropped, st.Head)
			cols = slices.Delete(cols, i, i+1)
		default:
			if whole[st.Head] == nil {
				whole[st.Head] = slices.Clone(cols[i].Cells)
			}
			cut(&cols[i], st.Width)
		}
	}
	for i := range cols {
		c := &cols[i]
		if cells, ok := whole[c.Head]; ok && total() < width {
			widest := 0
			for _, s := range cells {
				widest = max(widest, utf8.RuneCountInString(s))
			}
			cut(c, min(widest, c.width()+width-total()))
		}
	}
	widths := make([]int, len(cols))
	for i := range cols {
		widths[i] = cols[i].width()
	}
	bw := bufio.NewWriter(w)
	var line strings.Builder
	writeLine := func(cell func(c *Column) string) {
		line.Reset()
		for i := range cols {
			s := cell(&cols[i])
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(s))
			if i > 0 {
				line.WriteString("  ")
			}
			if cols[i].Right {
				line.WriteString(pad + s)
			} else {
				line.WriteString(s + pad)
			}
		}
		bw.WriteString(strings.TrimRight(line.String(), " "))
		bw.WriteByte('\n')
	}
	writeLine(func(c *Column) string { return c.Head })
	rows := 0
	if len(cols) > 0 {
		rows = len(cols[0].Cells)
	}
	for r := range rows {
		writeLine(func(c *Column) string { return c.Cells[r] })
	}
	return dropped, bw.Flush()
}

// alignPoints pads cells on the right so that, aligned right, their decimal points line up: a
// cell without a point ("-", "$4") ends where the points are.
func alignPoints(cells []string) {
	frac := func(s string) int {
		if i := strings.LastIndexByte(s, '.'); i >= 0 {
			return utf8.RuneCountInString(s[i:])
		}
		return 0
	}
	most := 0
	for _, s := range cells {
		most = max(most, frac(s))
	}
	for i, s := range cells {
		cells[i] = s + strings.Repeat(" ", most-frac(s))
	}
}
