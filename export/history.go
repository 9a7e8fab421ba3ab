package export

import (
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gpucost/gpucost/money"
	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// historyColumns are the columns of a price history.
var historyColumns = columnsOf[schema.HistoryPoint](nil)

// History writes history points as a terminal table (buckets labelled for interval) or CSV.
// In JSON they are the items of an Envelope of HistorySchema; HistoryFile writes them to files.
func History(w io.Writer, f Format, interval schema.Interval, points []schema.HistoryPoint) error {
	switch f {
	case CSV:
		return writeCSV(w, historyColumns, points)
	case Table:
		return historyTable(w, interval, points)
	}
	return unsupported("history", f)
}

// historyTable writes the points as a table of textcell.TerminalWidth columns: the bucket
// (headed by the interval), provider and price type, the figures in dollars per GPU-hour with
// separators, and the counts; a provider's name gives up characters if a line would be wider.
// `gpucost history --help` is its legend.
func historyTable(w io.Writer, interval schema.Interval, points []schema.HistoryPoint) error {
	cols := []textcell.Column{{Head: strings.ToUpper(string(interval)) + " (UTC)"}, {Head: "PROVIDER"}, {Head: "PRICE TYPE"},
		{Head: "MIN", Right: true, Point: true}, {Head: "AVG", Right: true, Point: true}, {Head: "MEDIAN", Right: true, Point: true},
		{Head: "MAX", Right: true, Point: true}, {Head: "OBS", Right: true}, {Head: "OFFERS", Right: true}}
	for _, p := range points {
		for j, cell := range []string{bucketLabel(p.Bucket, interval), p.Provider, string(p.PriceType),
			money.Price(p.Min), money.Price(p.Avg), money.Price(p.Median), money.Price(p.Max),
			money.Thousands(strconv.FormatUint(p.Observations, 10)), money.Thousands(strconv.FormatUint(p.Offers, 10))} {
			cols[j].Add(cell, OfferCellWidth)
		}
	}
	_, err := textcell.Fit(w, cols, textcell.TerminalWidth, []textcell.Step{textcell.Shrink("PROVIDER", 8)})
	return err
}

// bucketLabel formats a bucket start for tables: a date for day and week buckets.
func bucketLabel(t time.Time, i schema.Interval) string {
	if i == schema.Hour {
		return t.UTC().Format("2006-01-02 15:04")
	}
	return t.UTC().Format("2006-01-02")
}

// historyRecord is a history point as a Parquet row, column for column as historyColumns.
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

func toHistoryRecord(p *schema.HistoryPoint) historyRecord {
	return historyRecord{Bucket: p.Bucket.UTC(), Provider: p.Provider, GPUModel: p.GPUModel, PriceType: string(p.PriceType),
		Min: micros(p.Min), Avg: micros(p.Avg), Median: micros(p.Median), Max: micros(p.Max),
		Observations: int64(p.Observations), Offers: int64(p.Offers)}
}

// HistoryFile writes history points as a file: CSV, NDJSON (one point per line, the keys of
// the JSON's items), or Parquet with its pages compressed with c.
func HistoryFile(w io.Writer, f Format, c Compression, points []schema.HistoryPoint) error {
	switch f {
	case CSV:
		return writeCSV(w, historyColumns, points)
	case NDJSON:
		write := newNDJSON(w)
		for i := range points {
			if err := write(&points[i]); err != nil {
				return err
			}
		}
		return nil
	case Parquet:
		pw, err := newParquetWriter[historyRecord](w, c)
		if err != nil {
			return err
		}
		rows := make([]historyRecord, len(points))
		for i := range points {
			rows[i] = toHistoryRecord(&points[i])
		}
		if _, err := pw.Write(rows); err != nil {
			return err
		}
		return pw.Close()
	}
	return unsupported("a history file", f)
}
