package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/store"
)

const exportHelp = `Write price data for notebooks, spreadsheets and pipelines, as CSV, Parquet or NDJSON
(--output; --format is another name of it).

  gpucost export offers  [--since 30d] [--until now] [--gpu M] [--provider P] [--price-type T]
      every observation in the range (one row per offer per scrape), oldest first;
      with --latest, the newest observation of every offer seen within --since (or imported
      with a valid_until still ahead) instead
  gpucost export history --gpu MODEL [--interval day] [--since 30d] [--until now] [...]
      the rows of gpucost history

Columns are named as in every other output: offers as the offers table's columns, history as
gpucost history's CSV and JSON (docs/analysts.md). Prices are exact: CSV writes them with 6
decimals, Parquet as DECIMAL(18, 6), NDJSON as strings; times are UTC (CSV and NDJSON: RFC
3339; Parquet: timestamps in milliseconds, adjusted to UTC). Nullable columns are empty in CSV
and null in Parquet and NDJSON; dq_flags is a ';'-separated list in CSV and a list in Parquet
and NDJSON.

Parquet pages are compressed with Snappy (--compression snappy, the default: quick to write and
read by everything) or Zstandard (--compression zstd: smaller files, slower to write). NDJSON is
one JSON object per line, the items of gpucost offers --output json and of the API, for jq,
DuckDB's read_json or pandas.read_json(lines=True).

Scraped text is untrusted: in CSV, control characters become spaces and a cell that a
spreadsheet would run as a formula (starting with = + - @) gets a leading apostrophe; numbers
(-1.5) stay numbers. Parquet and NDJSON keep the text as stored.
--out - (the default) writes to standard output, except Parquet to a terminal.`

// exportFlags are the flags of export offers and export history.
type exportFlags struct {
	cf                       configFlag
	req                      selection.Request
	output, out, compression string
}

func exportCommand(e env) *cobra.Command {
	var x exportFlags
	cmd := &cobra.Command{
		Use:   "export offers|history [flags]",
		Short: "write offers or history as CSV, Parquet or NDJSON for notebooks",
		Long:  exportHelp,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return badUsageOf(cmd, "want offers or history, got %s", selection.Quote(args[0]))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().NFlag() > 0 {
				return badUsageOf(cmd, "want offers or history before the flags")
			}
			return badUsageOf(cmd, "want offers or history, got nothing")
		},
	}
	fl := cmd.PersistentFlags()
	fl.StringVar(&x.req.GPU, "gpu", "", "canonical GPU model(s), comma-separated for offers; one, required, for history")
	fl.StringVar(&x.req.Provider, "provider", "", "comma-separated providers (default all)")
	fl.StringVar(&x.req.PriceType, "price-type", "", "comma-separated price types (default all)")
	fl.StringVar(&x.req.Since, "since", "30d", "start of the range: a date, a time, or an age like 7d")
	fl.StringVar(&x.req.Until, "until", "now", "end of the range (exclusive)")
	fl.StringVar(&x.output, "output", "csv", "csv, parquet or ndjson (--format is another name of it)")
	fl.StringVar(&x.compression, "compression", string(export.Snappy), "with --output parquet, the pages' codec: snappy or zstd")
	fl.StringVar(&x.out, "out", "-", "output file; - is standard output")
	x.cf.addTo(fl)
	must(cmd.MarkPersistentFlagFilename("out", "csv", "parquet", "ndjson", "jsonl"))
	completeFlag(cmd, "output", exportOutputs...)
	completeFlag(cmd, "compression", names(export.Compressions)...)
	completeSelection(cmd)

	var latest bool
	offers := &cobra.Command{
		Use:   "offers [--since 30d] [--until now] [--gpu M] [--provider P] [--price-type T] [--latest]",
		Short: "every observation in the range, oldest first (--latest: the newest of each offer)",
		Long:  exportHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			compression, err := x.check(cmd, e)
			if err != nil {
				return err
			}
			now := time.Now().UTC()
			f, err := x.req.Observations(now)
			if err != nil {
				return err
			}
			return x.write(cmd.Context(), e, func(s *store.Store, w io.Writer) (int, error) {
				ow, err := export.NewOfferWriter(w, export.Format(x.output), compression)
				if err != nil {
					return 0, err
				}
				var n int
				if latest {
					offers, err := s.LatestOffers(cmd.Context(), schema.OfferFilter{Selection: f.Selection, MaxAge: now.Sub(f.From)})
					if err != nil {
						return 0, err
					}
					for i := range offers {
						if err := ow.Write(&offers[i]); err != nil {
							return i, err
						}
					}
					n = len(offers)
				} else if n, err = s.Observations(cmd.Context(), f, ow.Write); err != nil {
					return n, err
				}
				return n, ow.Close()
			})
		},
	}
	offers.Flags().BoolVar(&latest, "latest", false, "only the newest observation of each offer")

	history := &cobra.Command{
		Use:   "history --gpu MODEL [--interval day] [--since 30d] [--until now] [--provider P] [--price-type T]",
		Short: "the rows of gpucost history",
		Long:  exportHelp,
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			compression, err := x.check(cmd, e)
			if err != nil {
				return err
			}
			q, err := x.req.History(time.Now().UTC())
			if err != nil {
				return err
			}
			return x.write(cmd.Context(), e, func(s *store.Store, w io.Writer) (int, error) {
				points, err := s.History(cmd.Context(), q)
				if err != nil {
					return 0, err
				}
				return len(points), export.HistoryFile(w, export.Format(x.output), compression, points)
			})
		},
	}
	history.Flags().StringVar(&x.req.Interval, "interval", "day", "history buckets: hour, day or week")
	completeFlag(history, "interval", "hour", "day", "week")
	cmd.AddCommand(offers, history)
	formatAlias(cmd)
	return cmd
}

// exportOutputs are the formats of gpucost export, the default first.
var exportOutputs = []string{"csv", "parquet", "ndjson"}

// check checks --output against where it goes, and --compression against --output; it returns
// the Parquet codec.
func (x *exportFlags) check(cmd *cobra.Command, e env) (export.Compression, error) {
	if err := checkOutput(x.output, exportOutputs...); err != nil {
		return "", err
	}
	c, err := export.ParseCompression(x.compression)
	if err != nil {
		return "", badUsage("--compression %s: want %s", selection.Quote(x.compression), orList(names(export.Compressions)))
	}
	if x.output != "parquet" && cmd.Flags().Changed("compression") {
		return "", badUsage("--compression goes with --output parquet")
	}
	if x.output == "parquet" && x.out == "-" && e.stdoutTTY {
		return "", badUsage("not writing Parquet to a terminal: use --out FILE.parquet or redirect")
	}
	return c, nil
}

// write opens the store and --out, writes the rows of write into it and says how many when
// they went to a file.
func (x *exportFlags) write(ctx context.Context, e env, write func(s *store.Store, w io.Writer) (int, error)) error {
	s, err := x.cf.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	out, err := export.Create(x.out, e.stdout)
	if err != nil {
		return err
	}
	defer out.Close()
	n, err := write(s, out)
	if err != nil {
		return err
	}
	if err := out.Commit(); err != nil {
		return err
	}
	if x.out != "-" {
		fmt.Fprintf(e.stderr, "gpucost export: wrote %d rows to %s\n", n, x.out)
	}
	return nil
}
