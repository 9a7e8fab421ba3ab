package export

import (
	"io"
	"strconv"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/schema"
	"github.com/gpucost/gpucost/textcell"
)

// offerColumns are the columns of offers and observations: the offers table's, in its order.
var offerColumns = columnsOf[schema.Offer](nil)

// Offers writes offers (the market now, or any list of observations) as a terminal table, CSV,
// NDJSON or Parquet (Snappy). CSV, NDJSON and Parquet carry every column, as JSON does (the
// items of an Envelope of OffersSchema); the table the ones a person compares, with prices to
// 4 decimals.
func Offers(w io.Writer, f Format, offers []schema.Offer) error {
	if f == Table {
		return offersTable(w, offers)
	}
	ow, err := NewOfferWriter(w, f, Snappy)
	if err != nil {
		return err
	}
	for i := range offers {
		if err := ow.Write(&offers[i]); err != nil {
			return err
		}
	}
	return ow.Close()
}

// OfferWriter writes offers one at a time, as CSV, NDJSON or Parquet: an export of millions of
// observations is written as the store reads them. Close ends the output.
type OfferWriter struct {
	write func(*schema.Offer) error
	close func() error
}

// NewOfferWriter returns an OfferWriter of format f on w: CSV, NDJSON (one offer per line, the
// keys of the JSON's items), or Parquet with its pages compressed with c.
func NewOfferWriter(w io.Writer, f Format, c Compression) (*OfferWriter, error) {
	switch f {
	case CSV:
		cw := textcell.NewCSVWriter(w)
		if err := cw.Write(offerColumns.names); err != nil {
			return nil, err
		}
		return &OfferWriter{write: func(o *schema.Offer) error { return cw.Write(offerCSVRow(o)) }, close: cw.Flush}, nil
	case NDJSON:
		write := newNDJSON(w)
		return &OfferWriter{write: func(o *schema.Offer) error { return write(o) }, close: func() error { return nil }}, nil
	case Parquet:
		pw, err := newParquetWriter[offerRecord](w, c)
		if err != nil {
			return nil, err
		}
		buf := make([]offerRecord, 0, 8192)
		flush := func() error {
			if len(buf) == 0 {
				return nil
			}
			_, err := pw.Write(buf)
			buf = buf[:0]
			return err
		}
		return &OfferWriter{
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
	return nil, unsupported("offers", f)
}

// Write writes one offer.
func (ow *OfferWriter) Write(o *schema.Offer) error { return ow.write(o) }

// Close writes what is buffered and ends the output (Parquet's footer); it does not close the
// underlying writer.
func (ow *OfferWriter) Close() error { return ow.close() }

// offerCSVRow is an offer as a CSV record under offerColumns.
func offerCSVRow(o *schema.Offer) []string { return offerColumns.row(o) }

// offerRecord is an offer as a Parquet row, column for column as offerColumns. Prices are
// DECIMAL(18, 6): the unscaled value in millionths of a dollar.
type offerRecord struct {
	ObservedAt         time.Time  `parquet:"observed_at,timestamp(millisecond)"`
	ValidUntil         *time.Time `parquet:"valid_until,optional,timestamp(millisecond)"`
	RunID              string     `parquet:"run_id,dict"`
	SourceURL          string     `parquet:"source_url,dict"`
	Provider           string     `parquet:"provider,dict"`
	OfferID            string     `parquet:"offer_id"`
	Tier               string     `parquet:"tier,dict"`
	Region             string     `parquet:"region,dict"`
	Country            string     `parquet:"country,dict"`
	GPUModel           string     `parquet:"gpu_model,dict"`
	GPUNameRaw         string     `parquet:"gpu_name_raw,dict"`
	GPUCount           int32      `parquet:"gpu_count"`
	VRAMGB             float64    `parquet:"vram_gb"`
	VCPUs              *float64   `parquet:"vcpus,optional"`
	RAMGB              *float64   `parquet:"ram_gb,optional"`
	DiskGB             *float64   `parquet:"disk_gb,optional"`
	PriceType          string     `parquet:"price_type,dict"`
	PriceUSDPerHour    int64      `parquet:"price_usd_per_hour,decimal(6:18)"`
	PriceUSDPerGPUHour int64      `parquet:"price_usd_per_gpu_hour,decimal(6:18)"`
	IntraNode          string     `parquet:"intra_node,dict"`
	NVLinkGbps         *float64   `parquet:"nvlink_gbps,optional"`
	InterNode          string     `parquet:"inter_node,dict"`
	AvailableCount     *int64     `parquet:"available_count,optional"`
	Stock              string     `parquet:"stock,dict"`
	Reliability        *float64   `parquet:"reliability,optional"`
	DQFlags            []string   `parquet:"dq_flags,list"`
	ParserVersion      string     `parquet:"parser_version,dict"`
}

func toOfferRecord(o *schema.Offer) offerRecord {
	r := offerRecord{
		ObservedAt: o.ObservedAt.UTC(), RunID: o.RunID, SourceURL: o.SourceURL, Provider: o.Provider, OfferID: o.OfferID,
		Tier: string(o.Tier), Region: o.Region, Country: o.Country, GPUModel: o.GPUModel, GPUNameRaw: o.GPUNameRaw,
		GPUCount: int32(o.GPUCount), VRAMGB: o.VRAMGB, VCPUs: o.VCPUs, RAMGB: o.RAMGB, DiskGB: o.DiskGB,
		PriceType: string(o.PriceType), PriceUSDPerHour: micros(o.PriceUSDPerHour), PriceUSDPerGPUHour: micros(o.PriceUSDPerGPUHour),
		IntraNode: string(o.IntraNode), NVLinkGbps: o.NVLinkGbps, InterNode: string(o.InterNode), Stock: string(o.Stock),
		Reliability: o.Reliability, DQFlags: make([]string, len(o.DQFlags)), ParserVersion: o.ParserVersion,
	}
	if o.ValidUntil != nil {
		t := o.ValidUntil.UTC()
		r.ValidUntil = &t
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

// OfferCellWidth caps every cell of the offers table: a scraped name never pads every row.
const OfferCellWidth = 40

// offersTable writes the offers as a terminal table; scraped text passes textcell. An offer of
// a GPU not in the catalog shows "? " and the provider's name for it.
func offersTable(w io.Writer, offers []schema.Offer) error {
	t := textcell.NewTable(w, OfferCellWidth)
	t.Row("PROVIDER", "GPU", "N", "VRAM", "PRICE TYPE", "$/GPU-H", "$/H", "INTRA", "INTER", "REGION")
	for _, o := range offers {
		model := o.GPUModel
		if model == "" {
			model = "? " + o.GPUNameRaw
		}
		t.Row(o.Provider, model, strconv.Itoa(int(o.GPUCount)), strconv.FormatFloat(o.VRAMGB, 'f', -1, 64), string(o.PriceType),
			o.PriceUSDPerGPUHour.StringFixed(4), o.PriceUSDPerHour.StringFixed(4), string(o.IntraNode), string(o.InterNode),
			textcell.Clean(o.Region, 28))
	}
	return t.Flush()
}
