package export

import (
	"io"
	"strconv"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// historyColumns are the columns of a price history.
var historyColumns = columnsOf[schema.HistoryPoint](nil)

// History writes history points as a terminal table (buckets labelled for interval), JSON, CSV
// or Parquet.
func History(w io.Writer, f Format, interval schema.Interval, points []schema.HistoryPoint) error {
	switch f {
	case JSON:
		if points == nil {
			points = []schema.HistoryPoint{}
		}
		return WriteJSON(w, points)
	case CSV:
		return writeCSV(w, historyColumns, points)
	case Parquet:
		return writeHistoryParquet(w, points)
	case Table:
		t := textcell.NewTable(w, textcell.NameWidth)
		t.Row("BUCKET", "PROVIDER", "PRICE TYPE", "MIN $/GPU-H", "AVG", "MEDIAN", "MAX", "OBS", "OFFERS", "")
		for _, p := range points {
			t.Row(bucketLabel(p.Bucket, interval), p.Provider, string(p.PriceType),
				p.Min.StringFixed(4), p.Avg.StringFixed(4), p.Median.StringFixed(4), p.Max.StringFixed(4),
				strconv.FormatUint(p.Observations, 10), strconv.FormatUint(p.Offers, 10), "")
		}
		return t.Flush()
	}
	return unsupported("history", f)
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

func writeHistoryParquet(w io.Writer, points []schema.HistoryPoint) error {
	rows := make([]historyRecord, len(points))
	for i := range points {
		rows[i] = toHistoryRecord(&points[i])
	}
	pw := parquet.NewGenericWriter[historyRecord](w, parquet.Compression(&parquet.Zstd))
	if _, err := pw.Write(rows); err != nil {
		return err
	}
	return pw.Close()
}
