package export

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/shopspring/decimal"

	"github.com/gpucost/gpucost/money"
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
		return OfferTable(w, offers, View{Width: textcell.TerminalWidth})
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

// View is what a table of the market (`gpucost offers`) shows besides its rows: how much matched
// and what was left out, under the table, and the width it fits.
type View struct {
	// Width is the terminal's width in characters: the table leaves out and shortens its least
	// needed columns until it fits, and says which it left out. 0 shows every column whole
	// (--wide), each cell cut to OfferCellWidth.
	Width int
	// Matched is how many offers (or groups) the filters matched, of which the table shows its
	// rows: when it shows fewer, a footer says so.
	Matched int
	// Unknown is how many offers of GPUs outside the catalog the filters matched but left out.
	Unknown int
	// Filters are the filters as the user gave them ("--gpu H100 --spot"), for the footer.
	Filters string
	// Filter is the filter the offers were read with: a column it filters on (the host's vCPUs
	// or RAM, the region, the interconnect, the VRAM) stays when others are left out.
	Filter schema.OfferFilter
}

// kept returns steps without those that would drop or shorten a column v.Filter filters on.
func (v View) kept(steps []textcell.Step) []textcell.Step {
	f := v.Filter
	vram := f.MinVRAMGB > 0
	for _, g := range f.GPUs {
		vram = vram || g.MinVRAMGB > 0 || g.MaxVRAMGB > 0
	}
	keep := map[string]bool{"CPUS": f.MinVCPUs > 0, "RAM": f.MinRAMGB > 0, "REGION": len(f.Regions) > 0, "INTRA": f.MinIntraNode != "", "VRAM": vram}
	return slices.DeleteFunc(slices.Clone(steps), func(st textcell.Step) bool { return keep[st.Head] })
}

// OfferTable writes the offers as a terminal table fitted to v.Width, then what v says was
// left out. Scraped text passes textcell; an offer of a GPU outside the catalog shows "? " and
// the provider's name for it. Prices are in dollars with thousands separators, to four decimals
// below a dollar. The columns, the most needed kept longest: PROVIDER, GPU, N, PRICE TYPE and
// $/GPU-H, then REGION, INTRA, $/H, INTER, CPUS, RAM, VRAM (at once unless a GPU is outside the
// catalog: a model's name says it), TIER and OFFER (`gpucost offers --help`).
func OfferTable(w io.Writer, offers []schema.Offer, v View) error {
	if len(offers) == 0 {
		return noneMatch(w, "offers", v)
	}
	cols := []textcell.Column{{Head: "PROVIDER"}, {Head: "GPU"}, {Head: "N", Right: true}, {Head: "VRAM", Right: true}, {Head: "CPUS", Right: true},
		{Head: "RAM", Right: true}, {Head: "PRICE TYPE"}, {Head: "$/GPU-H", Right: true, Point: true}, {Head: "$/H", Right: true, Point: true}, {Head: "INTRA"},
		{Head: "INTER"}, {Head: "REGION"}, {Head: "TIER"}, {Head: "OFFER"}}
	outside := false
	for i := range offers {
		o := &offers[i]
		outside = outside || o.GPUModel == ""
		for j, cell := range []string{o.Provider, gpuCell(o.GPUModel, o.GPUNameRaw), strconv.Itoa(int(o.GPUCount)), gb(o.VRAMGB),
			optional(o.VCPUs, number), optional(o.RAMGB, wholeGB), string(o.PriceType), money.Price(o.PriceUSDPerGPUHour),
			money.Price(o.PriceUSDPerHour), intraCell(o.IntraNode), interCell(o.InterNode), o.Region, string(o.Tier), o.OfferID} {
			cols[j].Add(cell, OfferCellWidth)
		}
	}
	// A catalog model's name says its VRAM; a GPU outside the catalog has only the column.
	vram := textcell.Drop("VRAM")
	if outside {
		vram = textcell.Step{} // none: VRAM goes with the last
	}
	// First cut what only an odd name fills (no provider's name is longer than 12, no catalog
	// model's than 24), then leave out the least needed.
	dropped, err := textcell.Fit(w, cols, v.Width, v.kept([]textcell.Step{textcell.Drop("OFFER"), textcell.Shrink("PROVIDER", 12), textcell.Shrink("GPU", 24), textcell.Shrink("REGION", 16),
		textcell.Drop("TIER"), vram, textcell.Shrink("REGION", 14), textcell.Drop("RAM"), textcell.Drop("CPUS"), textcell.Drop("INTER"), textcell.Drop("$/H"), textcell.Shrink("REGION", 10),
		textcell.Drop("INTRA"), textcell.Drop("REGION"), textcell.Drop("VRAM"), textcell.Shrink("GPU", 16), textcell.Shrink("PROVIDER", 10)}))
	if err != nil {
		return err
	}
	return footer(w, "offers", len(offers), dropped, v)
}

// gpuCell names an offer's GPU: its catalog model, or "? " and the provider's name for a GPU
// outside the catalog.
func gpuCell(model, raw string) string {
	switch {
	case model != "":
		return model
	case textcell.Clean(raw, 0) == "":
		return "? (no name)"
	}
	return "? " + raw
}

// intraCell and interCell write the interconnect classes briefly, as the legend of `gpucost
// offers --help` explains them.
func intraCell(c schema.IntraNode) string {
	switch c {
	case schema.IntraInfinityFabric:
		return "inf_fabric"
	case schema.IntraUnknown, "":
		return "?"
	}
	return string(c)
}

func interCell(c schema.InterNode) string {
	switch c {
	case schema.InterInfiniBand:
		return "ib"
	case schema.InterEthernet:
		return "eth"
	case schema.InterUnknown, "":
		return "?"
	}
	return string(c)
}

// gb writes an amount of GB: 80GB, 1,024GB, 7.5GB.
func gb(x float64) string { return money.Thousands(strconv.FormatFloat(x, 'f', -1, 64)) + "GB" }

// wholeGB writes an amount of GB to the nearest GB, as a host's RAM is sold: 16GB for 16.12
// (which is 15 GiB).
func wholeGB(x float64) string { return gb(math.Round(x)) }

// number writes a count that may be fractional: 16, 7.5.
func number(x float64) string { return money.Thousands(strconv.FormatFloat(x, 'f', -1, 64)) }

// optional writes a nullable figure or price with format, "-" when there is none.
func optional[T any](x *T, format func(T) string) string {
	if x == nil {
		return "-"
	}
	return format(*x)
}

// noneMatch says that no offers (or groups) match, and what was left out.
func noneMatch(w io.Writer, what string, v View) error {
	msg := "no " + what + " match"
	if v.Filters != "" {
		msg += " " + textcell.Clean(v.Filters, textcell.TextWidth)
	}
	if _, err := io.WriteString(w, msg+"\n"); err != nil {
		return err
	}
	return footer(w, what, 0, nil, View{Unknown: v.Unknown, Width: v.Width})
}

// footer writes what a table left out after a blank line, each wrapped at v.Width: rows beyond
// the limit ("shown 50 of 548 offers (--gpu H100); --limit 0 for all"), offers of GPUs outside
// the catalog, columns that did not fit. It writes nothing when nothing was left out.
func footer(w io.Writer, what string, shown int, dropped []string, v View) error {
	var lines []string
	if v.Matched > shown {
		line := shownLine(shown, v.Matched, what)
		if filters := textcell.Clean(v.Filters, textcell.TextWidth); filters != "" {
			line += " (" + filters + ")"
		}
		lines = append(lines, line+"; "+showAll)
	}
	if v.Unknown > 0 {
		offers := "offers"
		if v.Unknown == 1 {
			offers = "offer"
		}
		lines = append(lines, fmt.Sprintf("%s %s of GPUs outside the catalog not shown; --unknown shows them", money.Thousands(strconv.Itoa(v.Unknown)), offers))
	}
	if len(dropped) > 0 {
		lines = append(lines, fmt.Sprintf("left out to fit %d columns: %s; --wide shows them", v.Width, strings.Join(dropped, ", ")))
	}
	if len(lines) == 0 {
		return nil
	}
	width := v.Width
	if width <= 0 {
		width = textcell.TerminalWidth
	}
	b := bufio.NewWriter(w)
	b.WriteString("\n")
	for _, l := range lines {
		textcell.Wrap(b, l, width, "", "  ")
	}
	return b.Flush()
}
