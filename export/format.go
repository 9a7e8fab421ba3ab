package export

import (
	"fmt"
	"io"
	"strconv"

	"github.com/gpucost/gpucost/money"
)

// Format is an output format.
type Format string

// Formats. Not every writer writes every format; each says which it does.
const (
	Table    Format = "table" // aligned columns for a terminal, cells cut to a width
	JSON     Format = "json"
	CSV      Format = "csv"
	Parquet  Format = "parquet"
	NDJSON   Format = "ndjson" // newline-delimited JSON: one object per line
	Markdown Format = "markdown"
)

// unsupported is the error of a writer asked for a format it does not write.
func unsupported(what string, f Format) error {
	return fmt.Errorf("writing %s: no %q writer", what, string(f))
}

// WriteShown writes the line that says --limit cut a list: "shown 200 of 1,234 price changes,
// the newest; --limit 0 for all". what names the items and how they were chosen.
func WriteShown(w io.Writer, shown, total int, what string) error {
	_, err := io.WriteString(w, shownLine(shown, total, what)+"; "+showAll+"\n")
	return err
}

// shownLine says how much of a list a table shows: "shown 200 of 1,234 price changes".
func shownLine(shown, total int, what string) string {
	return fmt.Sprintf("shown %s of %s %s", money.Thousands(strconv.Itoa(shown)), money.Thousands(strconv.Itoa(total)), what)
}

// showAll is how to see the rest of a list --limit cut.
const showAll = "--limit 0 for all"
