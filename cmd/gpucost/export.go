package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/selection"
	"github.com/gpucost/gpucost/store"
	"github.com/gpucost/gpucost/textcell"
)

const exportHelp = `Write price data for notebooks and spreadsheets, as CSV or Parquet.

  gpucost export offers  [--since 30d] [--until now] [--gpu M] [--provider P] [--price-type T]
      every observation in the range (one row per offer per scrape), oldest first;
      with --latest, the newest observation of every offer seen within --since (or imported
      with a valid_until still ahead) instead
  gpucost export history --gpu MODEL [--interval day] [--since 30d] [--until now] [...]
      the rows of gpucost history

Prices are exact: CSV writes them with 6 decimals, Parquet as DECIMAL(18, 6); times are UTC
(CSV: RFC 3339; Parquet: timestamps in milliseconds, adjusted to UTC). Nullable columns are
empty in CSV and null in Parquet; dq_flags is a ';'-separated list in CSV and a list in Parquet.
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
	out := fs.String("out", "-", "output file; - is standard output")
	if err := fs.parse(e, args, 0); err != nil {
		return err
	}
	if what == "" {
		return badUsage("want offers or history before the flags")
	}
	if *format != "csv" && *format != "parquet" {
		return badUsage("--format %s: want csv or parquet", selection.Quote(*format))
	}
	if *format == "parquet" && *out == "-" && isTerminal(e.stdout) {
		return badUsage("not writing Parquet to a terminal: use --out FILE.parquet or redirect")
	}
	now := time.Now().UTC()
	var run func(s *store.Store, w io.Writer) (int, error)
	switch what {
	case "history":
		q, err := req.History(now)
		if err != nil {
			return err
		}
		run = func(s *store.Store, w io.Writer) (int, error) {
			points, err := s.History(ctx, q)
			if err != nil {
				return 0, err
			}
			return len(points), writeHistoryExport(w, *format, points)
		}
	default:
		f, err := req.Observations(now)
		if err != nil {
			return err
		}
		run = func(s *store.Store, w io.Writer) (int, error) {
			ow, err := newOfferWriter(w, *format)
			if err != nil {
				return 0, err
			}
			n := 0
			if *latest {
				offers, err := s.LatestOffers(ctx, schema.OfferFilter{Selection: f.Selection, MaxAge: now.Sub(f.From)})
				if err != nil {
					return 0, err
				}
				for i := range offers {
					if err := ow.write(&offers[i]); err != nil {
						return n, err
					}
					n++
				}
			} else if n, err = s.Observations(ctx, f, ow.write); err != nil {
				return n, err
			}
			return n, ow.close()
		}
	}
	s, err := fs.openStore(ctx, e)
	if err != nil {
		return err
	}
	defer s.Close()
	w, commit, err := openOutput(e, *out)
	if err != nil {
		return err
	}
	n, err := run(s, w)
	if cerr := commit(err == nil); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if *out != "-" {
		fmt.Fprintf(e.stderr, "gpucost export: wrote %d rows to %s\n", n, *out)
	}
	return nil
}

// openOutput returns the writer for --out. For a file, it writes to a temporary file beside it
// and commit(true) renames it into place, so a failed export never leaves half a file.
func openOutput(e env, path string) (io.Writer, func(ok bool) error, error) {
	if path == "-" {
		bw := bufio.NewWriter(e.stdout)
		return bw, func(bool) error { return bw.Flush() }, nil
	}
	f, err := os.CreateTemp(dirOf(path), ".gpucost-export-*")
	if err != nil {
		return nil, nil, fmt.Errorf("creating the output file: %w", err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	return bw, func(ok bool) error {
		err := bw.Flush()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if !ok || err != nil {
			os.Remove(f.Name())
			if err != nil {
				return fmt.Errorf("writing %s: %w", path, err)
			}
			return nil
		}
		if err := os.Rename(f.Name(), path); err != nil {
			os.Remove(f.Name())
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return nil
	}, nil
}

func dirOf(path string) string {
	if i := strings.LastIndexByte(path, '/'); i >= 0 {
		return path[:i+1]
	}
	return "."
}

// offerRecord is an observation as a Parquet row. Prices are DECIMAL(18, 6): the unscaled
// value in millionths of a dollar.
type offerRecord struct {
	ObservedAt         time.Time `parquet:"observed_at,timestamp(millisecond)"`
	RunID              string    `parquet:"run_id,dict"`
	SourceURL          string    `parquet:"source_url,dict"`
	Provider           string    `parquet:"provider,dict"`
	OfferID            string    `parquet:"offer_id"`
	Tier               string    `parquet:"tier,dict"`
	Region             string    `parquet:"region,dict"`
	Country            string    `parquet:"country,dict"`
	GPUModel           string    `parquet:"gpu_model,dict"`
	GPUNameRaw         string    `parquet:"gpu_name_raw,dict"`
	GPUCount           int32     `parquet:"gpu_count"`
	VRAMGB             float64   `parquet:"vram_gb"`
	VCPUs              *float64  `parquet:"vcpus,optional"`
	RAMGB              *float64  `parquet:"ram_gb,optional"`
	DiskGB             *float64  `parquet:"disk_gb,optional"`
	PriceType          string    `parquet:"price_type,dict"`
	PriceUSDPerHour    int64     `parquet:"price_usd_per_hour,decimal(6:18)"`
	PriceUSDPerGPUHour int64     `parquet:"price_usd_per_gpu_hour,decimal(6:18)"`
	IntraNode          string    `parquet:"intra_node,dict"`
	NVLinkGbps         *float64  `parquet:"nvlink_gbps,optional"`
	InterNode          string    `parquet:"inter_node,dict"`
	AvailableCount     *int64    `parquet:"available_count,optional"`
	Stock              string    `parquet:"stock,dict"`
	Reliability        *float64  `parquet:"reliability,optional"`
	DQFlags            []string  `parquet:"dq_flags,list"`
}

var offerExportHeader = []string{"observed_at", "run_id", "source_url", "provider", "offer_id", "tier", "region", "country",
	"gpu_model", "gpu_name_raw", "gpu_count", "vram_gb", "vcpus", "ram_gb", "disk_gb", "price_type",
	"price_usd_per_hour", "price_usd_per_gpu_hour", "intra_node", "nvlink_gbps", "inter_node", "available_count",
	"stock", "reliability", "dq_flags"}

// offerWriter writes observations as CSV or Parquet, one at a time.
type offerWriter struct {
	write func(*schema.Offer) error
	close func() error
}

func newOfferWriter(w io.Writer, format string) (offerWriter, error) {
	if format == "parquet" {
		pw := parquet.NewGenericWriter[offerRecord](w, parquet.Compression(&parquet.Zstd))
		buf := make([]offerRecord, 0, 8192)
		flush := func() error {
			if len(buf) == 0 {
				return nil
			}
			_, err := pw.Write(buf)
			buf = buf[:0]
			return err
		}
		return offerWriter{
			write: func(o *schema.Offer) error {
				buf = append(buf, toOfferRecord(o))
				if len(buf) == cap(buf) {
					return flush()
				}
				return nil
			},
			close: func() error {
				if err := flush(); err != nil {
					return err
				}
				return pw.Close()
			},
		}, nil
	}
	cw := textcell.NewCSVWriter(w)
	if err := cw.Write(offerExportHeader); err != nil {
		return offerWriter{}, err
	}
	return offerWriter{
		write: func(o *schema.Offer) error { return cw.Write(offerCSVRow(o)) },
		close: cw.Flush,
	}, nil
}

func toOfferRecord(o *schema.Offer) offerRecord {
	r := offerRecord{
		ObservedAt: o.ObservedAt.UTC(), RunID: o.RunID, SourceURL: o.SourceURL, Provider: o.Provider, OfferID: o.OfferID,
		Tier: string(o.Tier), Region: o.Region, Country: o.Country, GPUModel: o.GPUModel, GPUNameRaw: o.GPUNameRaw,
		GPUCount: int32(o.GPUCount), VRAMGB: o.VRAMGB, VCPUs: o.VCPUs, RAMGB: o.RAMGB, DiskGB: o.DiskGB,
		PriceType: string(o.PriceType), PriceUSDPerHour: micros(o.PriceUSDPerHour), PriceUSDPerGPUHour: micros(o.PriceUSDPerGPUHour),
		IntraNode: string(o.IntraNode), NVLinkGbps: o.NVLinkGbps, InterNode: string(o.InterNode), Stock: string(o.Stock),
		Reliability: o.Reliability, DQFlags: make([]string, len(o.DQFlags)),
	}
	if o.AvailableCount != nil {
		n := int64(*o.AvailableCount)
		r.AvailableCount = &n
	}
	for i, f := range o.DQFlags {
		r.DQFlags[i] = string(f)
	}
	return r
}

// micros is a price as the unscaled value of a DECIMAL(18, 6).
func micros(d decimal.Decimal) int64 {
	return d.Round(schema.PriceDecimals).Shift(schema.PriceDecimals).IntPart()
}

func offerCSVRow(o *schema.Offer) []string {
	optF := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	avail := ""
	if o.AvailableCount != nil {
		avail = strconv.FormatUint(uint64(*o.AvailableCount), 10)
	}
	flags := make([]string, len(o.DQFlags))
	for i, f := range o.DQFlags {
		flags[i] = string(f)
	}
	return []string{o.ObservedAt.UTC().Format(time.RFC3339), o.RunID, o.SourceURL, o.Provider, o.OfferID, string(o.Tier), o.Region, o.Country,
		o.GPUModel, o.GPUNameRaw, strconv.Itoa(int(o.GPUCount)), strconv.FormatFloat(o.VRAMGB, 'f', -1, 64), optF(o.VCPUs), optF(o.RAMGB), optF(o.DiskGB),
		string(o.PriceType), o.PriceUSDPerHour.StringFixed(schema.PriceDecimals), o.PriceUSDPerGPUHour.StringFixed(schema.PriceDecimals),
		string(o.IntraNode), optF(o.NVLinkGbps), string(o.InterNode), avail, string(o.Stock), optF(o.Reliability), strings.Join(flags, ";")}
}

// historyRecord is a history point as a Parquet row.
type historyRecord struct {
	Bucket       time.Time `parquet:"bucket,timestamp(millisecond)"`
	Provider     string    `parquet:"provider,dict"`
	GPUModel     string    `parquet:"gpu_model,dict"`
	PriceType    string    `parquet:"price_type,dict"`
	Min          int64     `parquet:"min_usd_per_gpu_hour,decimal(6:18)"`
	Avg          int64     `parquet:"avg_usd_per_gpu_hour,decimal(6:18)"`
	Median       int64     `parquet:"median_usd_per_gpu_hour,decimal(6:18)"`
	Max          int64     `parquet:"max_usd_per_gpu_hour,decimal(6:18)"`
	Observations int64     `parquet:"observations"`
	Offers       int64     `parquet:"offers"`
}

func writeHistoryExport(w io.Writer, format string, points []schema.HistoryPoint) error {
	if format != "parquet" {
		return writeHistory(w, "csv", schema.Day, points)
	}
	rows := make([]historyRecord, len(points))
	for i, p := range points {
		rows[i] = historyRecord{Bucket: p.Bucket.UTC(), Provider: p.Provider, GPUModel: p.GPUModel, PriceType: string(p.PriceType),
			Min: micros(p.Min), Avg: micros(p.Avg), Median: micros(p.Median), Max: micros(p.Max),
			Observations: int64(p.Observations), Offers: int64(p.Offers)}
	}
	pw := parquet.NewGenericWriter[historyRecord](w, parquet.Compression(&parquet.Zstd))
	if _, err := pw.Write(rows); err != nil {
		return err
	}
	return pw.Close()
}
