package export

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
)

// Compression is the codec of a Parquet file's pages.
type Compression string

// Compressions. Every Parquet reader (pandas, Polars, DuckDB, Spark, ClickHouse) reads both.
const (
	Snappy Compression = "snappy" // the default: fast to write and to read
	Zstd   Compression = "zstd"   // smaller files (by a third to a half here), slower to write
)

// Compressions are the codecs Parquet files are written with, the default first.
var Compressions = []Compression{Snappy, Zstd}

// ParseCompression reads a codec's name; "" is the default, Snappy.
func ParseCompression(name string) (Compression, error) {
	switch c := Compression(name); c {
	case "":
		return Snappy, nil
	case Snappy, Zstd:
		return c, nil
	}
	return "", fmt.Errorf("no Parquet compression %q (want snappy or zstd)", name)
}

// codec is the Parquet codec of c.
func (c Compression) codec() (compress.Codec, error) {
	switch c {
	case Snappy, "":
		return &parquet.Snappy, nil
	case Zstd:
		return &parquet.Zstd, nil
	}
	return nil, fmt.Errorf("writing Parquet: no compression %q", string(c))
}

// newParquetWriter returns a Parquet writer of rows R on w, its pages compressed with c.
func newParquetWriter[R any](w io.Writer, c Compression) (*parquet.GenericWriter[R], error) {
	codec, err := c.codec()
	if err != nil {
		return nil, err
	}
	return parquet.NewGenericWriter[R](w, parquet.Compression(codec)), nil
}

// newNDJSON returns a writer of newline-delimited JSON on w: each value as one compact JSON
// object on a line of its own, its keys those of the value's JSON (the items of an Envelope).
func newNDJSON(w io.Writer) func(v any) error {
	enc := json.NewEncoder(w)
	return enc.Encode
}
