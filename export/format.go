package export

import "fmt"

// Format is an output format.
type Format string

// Formats. Not every writer writes every format; each says which it does.
const (
	Table    Format = "table" // aligned columns for a terminal, cells cut to a width
	JSON     Format = "json"
	CSV      Format = "csv"
	Parquet  Format = "parquet"
	Markdown Format = "markdown"
)

// unsupported is the error of a writer asked for a format it does not write.
func unsupported(what string, f Format) error {
	return fmt.Errorf("writing %s: no %q writer", what, string(f))
}
