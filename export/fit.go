package export

import (
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/gpucost/gpucost/textcell"
)

// TableWidth is the terminal width the market's tables fit when the caller knows no other (not
// a terminal, or one that does not say): 100 columns.
const TableWidth = 100

// fitColumn is one column of a table that fits a terminal's width (writeFitted).
type fitColumn struct {
	head  string
	cells []string // one per row, each through textcell.Clean
	right bool     // aligned right: amounts and counts
	point bool     // prices: aligned right on their decimal point ($0.08 above $0.0838)
}

// add appends a row's cell, cleaned and cut to OfferCellWidth.
func (c *fitColumn) add(s string) { c.cells = append(c.cells, textcell.Clean(s, OfferCellWidth)) }

// width is the widest of the column's header and cells.
func (c *fitColumn) width() int {
	n := utf8.RuneCountInString(c.head)
	for _, s := range c.cells {
		n = max(n, utf8.RuneCountInString(s))
	}
	return n
}

// fitStep is one way to narrow a table, in the order a table's steps are tried: drop the column
// named head, or shrink it to width characters (its cells cut with an ellipsis, never below the
// header). A step of a column the table does not have is skipped.
type fitStep struct {
	head  string
	width int // 0 drops the column
}

// drop and shrink are the two kinds of fitStep.
func drop(head string) fitStep              { return fitStep{head: head} }
func shrink(head string, width int) fitStep { return fitStep{head: head, width: width} }

// writeFitted writes cols as a table, columns two spaces apart: without the columns whose every
// cell is empty or "-", then narrowed by steps, in order, until its lines are at most width
// characters (as narrow as the steps make it when they cannot); or all of it with width 0. It
// returns the headers of the columns the steps dropped.
func writeFitted(w io.Writer, cols []fitColumn, width int, steps []fitStep) (dropped []string, err error) {
	if width > 0 { // a column with nothing to say says it by its absence
		cols = slices.DeleteFunc(cols, func(c fitColumn) bool {
			return !slices.ContainsFunc(c.cells, func(s string) bool { return s != "" && s != "-" })
		})
	}
	for i := range cols {
		if cols[i].point {
			alignPoints(cols[i].cells)
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
	cut := func(c *fitColumn, to int) {
		to = max(to, utf8.RuneCountInString(c.head), 2)
		for j, s := range whole[c.head] {
			if utf8.RuneCountInString(s) > to {
				s = textcell.Clean(s, to-1) // Clean adds the ellipsis
			}
			c.cells[j] = s
		}
	}
	for _, st := range steps {
		if width <= 0 || total() <= width {
			break
		}
		i := slices.IndexFunc(cols, func(c fitColumn) bool { return c.head == st.head })
		switch {
		case i < 0:
		case st.width == 0:
			dropped = append(dropped, st.head)
			cols = slices.Delete(cols, i, i+1)
		default:
			if whole[st.head] == nil {
				whole[st.head] = slices.Clone(cols[i].cells)
			}
			cut(&cols[i], st.width)
		}
	}
	// A column shortened before a later step dropped another gets back what room is left.
	for i := range cols {
		c := &cols[i]
		if cells, ok := whole[c.head]; ok && total() < width {
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
	var b strings.Builder
	line := func(cell func(c *fitColumn) string) {
		b.Reset()
		for i := range cols {
			s := cell(&cols[i])
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(s))
			if i > 0 {
				b.WriteString("  ")
			}
			if cols[i].right {
				b.WriteString(pad + s)
			} else {
				b.WriteString(s + pad)
			}
		}
		if err == nil {
			_, err = io.WriteString(w, strings.TrimRight(b.String(), " ")+"\n")
		}
	}
	line(func(c *fitColumn) string { return c.head })
	rows := 0
	if len(cols) > 0 {
		rows = len(cols[0].cells)
	}
	for r := range rows {
		line(func(c *fitColumn) string { return c.cells[r] })
	}
	return dropped, err
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
