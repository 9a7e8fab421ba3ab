package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gpucost/gpucost/export"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/store"
)

const exportHelp = `Write price data for notebooks and spreadsheets, as CSV or Parquet.

  gpucost export offers  [--since 30d] [--until now] [--gpu M] [--provider P] [--price-type T]
      every observation in the range (one row per offer per scrape), oldest first;
      with --latest, the newest observation of every offer seen within --since (or imported
      with a valid_until still ahead) instead
  gpucost export history --gpu MODEL [--interval day] [--since 30d] [--until now] [...]
      the rows of gpucost history

Columns are named as in every other output: offers as the offers table's columns, history as
gpucost history's CSV and JSON (docs/analysts.md). Prices are exact: CSV writes them with 6
decimals, Parquet as DECIMAL(18, 6); times are UTC (CSV: RFC 3339; Parquet: timestamps in
milliseconds, adjusted to UTC). Nullable columns are empty in CSV and null in Parquet; dq_flags
is a ';'-separated list in CSV and a list in Parquet.
Scraped text is untrusted: in CSV, control characters become spaces and a cell that a
spreadsheet would run as a formula (starting with = + - @) gets a leading apostrophe; numbers
(-1.5) stay numbers. Parquet keeps the text as stored.
--out - (the default) writes to standard output, except Parquet to a terminal.`

func runExport(ctx context.Context, e env, args []string) error {
	if len(args) == 0 || (args[0] != "offers" && args[0] != "history" && !strings.HasPrefix(args[0], "-")) {
		got := "nothing"
		if len(args) > 0 {
			got = selection.Quote(args[0])
		}
		return badUsage("want offers or history, got %s (see gpucost export --help)", got)
	}
	what := ""
	if args[0] == "offers" || args[0] == "history" {
		what, args = args[0], args[1:]
	}
	fs := newFlags("export", "offers|history [flags]", exportHelp)
	fs.withConfig()
	var req selection.Request
	fs.StringVar(&req.GPU, "gpu", "", "canonical GPU model(s), comma-separated for offers; one, required, for history")
	fs.StringVar(&req.Provider, "provider", "", "comma-separated providers (default all)")
	fs.StringVar(&req.PriceType, "price-type", "", "comma-separated price types (default all)")
	fs.StringVar(&req.Since, "since", "30d", "start of the range: a date, a time, or an age like 7d")
	fs.StringVar(&req.Until, "until", "now", "end of the range (exclusive)")
	fs.StringVar(&req.Interval, "interval", "day", "history buckets: hour, day or week")
	latest := fs.Bool("latest", false, "offers: only the newest observation of each offer")
	format := fs.String("format", "csv", "csv or parquet")
	outPath := fs.String("out", "-", "output file; - is standard output")
	if err := fs.parse(e, args, 0); err != nil {
		return err
	}
	if what == "" {
		return badUsage("want offers or history before the flags")
	}
	if *format != "csv" && *format != "parquet" {
		return badUsage("--format %s: want csv or parquet", selection.Quote(*format))
	}
	if *format == "parquet" && *outPath == "-" && isTerminal(e.stdout) {
		return badUsage("not writing Parquet to a terminal: use --out FILE.parquet or redirect")
	}
	now := time.Now().UTC()
	var write func(s *store.Store, w io.Writer) (int, error)
	switch what {
	case "history":
		q, err := req.History(now)
		if err != nil {
			return err
		}
		write = func(s *store.Store, w io.Writer) (int, error) {
			points, err := s.History(ctx, q)
			if err != nil {
				return 0, err
			}
			return len(points), export.History(w, export.Format(*format), q.Interval, points)
		}
	default:
		f, err := req.Observations(now)
		if err != nil {
			return err
		}
		write = func(s *store.Store, w io.Writer) (int, error) {
			if *latest {
				offers, err := s.LatestOffers(ctx, schema.OfferFilter{Selection: f.Selection, MaxAge: now.Sub(f.From)})
				if err != nil {
					return 0, err
				}
				return len(offers), export.Offers(w, export.Format(*format), offers)
			}
			ow, err := export.NewOfferWriter(w, export.Format(*format))
			if err != nil {
				return 0, err
			}
			n, err := s.Observations(ctx, f, ow.Write)
			if err != nil {
				return n, err
			}
			return n, ow.Close()
		}
	}
	s, err := fs.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	out, err := export.Create(*outPath, e.stdout)
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
	if *outPath != "-" {
		fmt.Fprintf(e.stderr, "gpucost export: wrote %d rows to %s\n", n, *outPath)
	}
	return nil
}
