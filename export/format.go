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

// WriteShown writes the line that says a limit cut a list: "shown 200 of 1,234 price changes,
// the newest; --limit 0 shows all". what names the items and how they were chosen, hint how
// to see the rest.
func WriteShown(w io.Writer, shown, total int, what, hint string) error {
	_, err := fmt.Fprintf(w, "shown %s of %s %s; %s\n", money.Thousands(strconv.Itoa(shown)), money.Thousands(strconv.Itoa(total)), what, hint)
	return err
}
